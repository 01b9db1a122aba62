"""The Exercises page: the editor and its drafts, the two buttons, the address, the history.

Most tests stand a small service in for the grading service: it records jobs and practice runs in
the real store as the service does (the page writes no outcome), and a test finishes a submission
with a result of its choosing, so what the page does around a grading is checked without a Dask
cluster. The last test grades through the real service (a warm judge, the sandbox) from the editor
to the Progress page, on this test process's shared cluster (``tests/grading_fixtures.py``).
"""

from __future__ import annotations

import json
import time
import uuid

import pytest

from app_pages.ui.exercise import grading
from grader.api import load_submission
from grader.mutants import get_mutant, reference_source
from grader.results import SubmissionResult, TestOutcome
from grader.service import AlreadyPending, JobStatus, SubmissionRejected, attempts_of
from grader.settings import GraderSettings
from poslab.exercises import EXERCISES, HINT_TIERS, get_exercise, spec
from poslab.exercises import hints as exercise_hints
from poslab.store import Store
from tests.app_harness import go, open_app, progress_texts, sign_in
from tests.conftest import ROOT
from tests.grading_fixtures import shared_judges

EXERCISE = get_exercise("rope")
STUB = (ROOT / "exercises" / EXERCISE.filename).read_text()
EXERCISE_PAGE = "app_pages/exercise.py"


def outcome(name, score, maximum, status, output, visibility, family=""):
    return TestOutcome(name, "rope", score, maximum, status, output, visibility, family)


def result_of(*tests: TestOutcome, public: bool = False) -> SubmissionResult:
    return SubmissionResult(
        submission_id="s",
        status="graded",
        tests=tests,
        isolation="fallback",
        public_tests_only=public,
        submission_hash="h",
        suite_hash="x",
        grader_version="0",
        execution_time=0.1,
    )


LONG_MESSAGE = "the norm changed: " + "x" * 400 + " END-OF-MESSAGE"
GRADED = result_of(
    outcome("test_shape", 2, 2, "passed", "Passed.", "visible", "shape"),
    outcome("test_norm", 0, 3, "failed", LONG_MESSAGE, "visible", "norm"),
    outcome("hidden_relative_1", 0, 4, "failed", "secret message", "hidden", "relative position"),
    outcome("hidden_relative_2", 1, 1, "passed", "secret", "hidden", "relative position"),
    outcome("hidden_dtype", 2, 2, "passed", "secret", "hidden", "dtype"),
)
PRACTICE = result_of(
    outcome("exercises/test_rope.py::test_shape", 1, 1, "passed", "Passed.", "visible"),
    outcome("exercises/test_rope.py::test_norm", 0, 1, "failed", "norm changed", "visible"),
    public=True,
)


class StandInService:
    """The GradingService interface the page uses, on the real store; ``finish`` settles the submissions.

    A practice run is answered at once with ``PRACTICE``, kept in the store as the service keeps it."""

    def __init__(self, store_url: str) -> None:
        self.store = Store(store_url)
        self.settings = GraderSettings.from_env()
        self.practiced: list[tuple[str, dict, list]] = []
        self.practice_jobs: set[str] = set()
        self.submitted: list[tuple[str, dict, list, str]] = []
        self.waited: list[float] = []

    def submit(self, student, files, exercises=None, mode="hidden"):
        submission = load_submission(dict(files), submission_id=student, settings=self.settings)
        if submission.problems:
            raise SubmissionRejected(" ".join(submission.problems))
        job_id = uuid.uuid4().hex
        from poslab.store.jobs import PendingJobExists

        try:
            self.store.add_grading_job(job_id, student, files, exercises, mode, "stand-in", 60)
        except PendingJobExists as pending:
            raise AlreadyPending(str(pending), pending.job.id) from None
        self.submitted.append((student, dict(files), list(exercises), mode))
        return type("Job", (), {"id": job_id})()

    def run_public(self, files, exercises=None, *, student=None):
        self.practiced.append((student, dict(files), list(exercises)))
        self.store.record_practice_runs(student, attempts_of(PRACTICE, files, exercises))
        job_id = uuid.uuid4().hex
        self.practice_jobs.add(job_id)
        return type("Job", (), {"id": job_id})()

    def finish(self, result: SubmissionResult) -> None:
        for record in self.store.grading_jobs(status="queued"):
            self.store.finish_grading_job(
                record.id, result.to_dict(), attempts_of(result, record.files, record.exercises)
            )

    def wait(self, job_id, timeout):
        self.waited.append(timeout)  # a stand-in job is settled by the test, never during a run

    def status(self, job_id):
        if job_id in self.practice_jobs:
            return JobStatus(job_id, "done", result=PRACTICE)
        record = self.store.grading_job(job_id)
        if record.status == "done":
            return JobStatus(
                job_id, "done", result=SubmissionResult.from_dict(record.result), handed_in=record.submitted_at
            )
        return JobStatus(job_id, "waiting", ahead=2, handed_in=record.submitted_at)

    def last_submission(self, student, exercise=None):
        record = self.store.latest_grading_job(student, exercise)
        return record and (record.id, tuple(record.exercises))

    def last_practice_run(self, student, exercise):
        runs = self.store.practice_runs(student, exercise)
        if not runs:
            return None
        return JobStatus(
            "practice", "done", result=SubmissionResult.from_dict(runs[-1].details), handed_in=runs[-1].time
        )


@pytest.fixture
def service(app_env, monkeypatch):
    stand_in = StandInService(app_env)
    monkeypatch.setattr(grading, "grading_service", lambda: stand_in)
    return stand_in


def exercise_page(student: str | None = "Ann", exercise: str | None = "rope"):
    at = open_app(student)
    if exercise is not None:
        at.query_params["exercise"] = exercise
    return go(at, EXERCISE_PAGE)


def editor_code(at) -> str:
    """The text the editor component was mounted with."""
    editors = at.get("component_instance")
    assert len(editors) == 1, editors
    return json.loads(editors[0].proto.json_args)["code"]


def editor_key(at) -> str:
    return at.get("component_instance")[0].key


def type_into_editor(at, text: str):
    """What the editor sends after a pause in typing."""
    at.session_state[editor_key(at)] = {
        "id": uuid.uuid4().hex[:8],
        "type": "change",
        "text": text,
        "lang": "python",
        "selected": "",
        "cursor": "",
    }
    at.run()
    assert not at.exception, at.exception
    return at


def click(at, key: str):
    at.button(key=key).click().run()
    assert not at.exception, at.exception
    return at


def markdown(at) -> list[str]:
    return [item.value for item in at.markdown]


def test_without_a_name_the_page_shows_the_spec_and_the_starter_code_but_no_editor(app_env):
    at = exercise_page(student=None, exercise=None)
    assert spec(EXERCISES[0].id) in [code.value for code in at.code]  # the first exercise by default
    assert any("to write and submit" in box.value for box in at.info)
    assert not at.get("component_instance") and not [b for b in at.button if b.key == "submit"]
    assert [item.proto.label for item in at.get("download_button")] == [
        f"Download the starter code ({EXERCISES[0].filename})"
    ]


def test_the_editor_starts_with_the_stub_and_a_draft_comes_back_in_a_new_session(app_env, service):
    at = exercise_page()
    assert editor_code(at) == STUB
    type_into_editor(at, STUB + "\n# my change\n")
    assert Store(app_env).draft("Ann", "rope").code == STUB + "\n# my change\n"
    assert any("Draft saved at" in item.value for item in at.caption)
    go(go(at, "app_pages/progress.py"), EXERCISE_PAGE)  # away and back: a new editor, with the latest text
    assert editor_code(at) == STUB + "\n# my change\n"
    later = exercise_page()  # a reload: a new session, the same address
    assert editor_code(later) == STUB + "\n# my change\n"
    assert editor_code(exercise_page(student="Bob")) == STUB  # drafts are per student


def test_two_tabs_the_older_one_asks_before_replacing_the_newer_save(app_env, service):
    first, second = exercise_page(), exercise_page()
    type_into_editor(first, "x = 'first tab'\n")
    type_into_editor(second, "x = 'second tab'\n")  # typed on a view older than the first tab's save
    assert Store(app_env).draft("Ann", "rope").code == "x = 'first tab'\n"  # nothing replaced yet
    assert any("Which one do you keep?" in box.value for box in second.warning)
    second.button(key="keep-mine-rope").click().run()
    assert Store(app_env).draft("Ann", "rope").code == "x = 'second tab'\n"
    assert any("it replaced the one saved from another tab" in box.value for box in second.info)
    assert not any("Which one do you keep?" in box.value for box in second.warning)
    first.run()  # the first tab redraws (any click): nothing unsaved, so it shows the newer save
    assert editor_code(first) == "x = 'second tab'\n"
    assert any("saved from another tab" in box.value for box in first.info)


def test_two_tabs_the_older_one_may_load_the_newer_save_instead(app_env, service):
    first, second = exercise_page(), exercise_page()
    type_into_editor(first, "x = 'first tab'\n")
    type_into_editor(second, "x = 'second tab'\n")
    labels = [item.proto.label for item in second.get("download_button")]
    assert "Download mine first" in labels  # the student's own version is theirs to keep
    second.button(key="load-other-rope").click().run()
    assert editor_code(second) == "x = 'first tab'\n"
    assert Store(app_env).draft("Ann", "rope").code == "x = 'first tab'\n"
    assert any("yours was not saved" in box.value for box in second.info)
    assert not any("Which one do you keep?" in box.value for box in second.warning)
    type_into_editor(second, "x = 'second tab, on the first'\n")  # now on the newest: saved at once
    assert Store(app_env).draft("Ann", "rope").code == "x = 'second tab, on the first'\n"


def test_the_exercise_is_in_the_address_and_the_session_and_progress_links_open_it(app_env, service):
    at = exercise_page(exercise="alibi")
    assert at.selectbox(key="exercise-pick").value == "alibi" and spec("alibi") in [c.value for c in at.code]
    at.selectbox(key="exercise-pick").set_value("rope").run()
    assert at.query_params["exercise"] == ["rope"] or at.query_params["exercise"] == "rope"
    go(at, "app_pages/progress.py")
    links = {link.proto.label: link.proto for link in at.get("page_link")}
    assert f"Open {get_exercise('alibi').title}" in links
    at.query_params.pop("exercise", None)
    go(at, EXERCISE_PAGE)  # back without the address: the session remembers
    assert at.selectbox(key="exercise-pick").value == "rope"


def test_reset_asks_first_then_puts_the_starter_code_back(app_env, service):
    at = exercise_page()
    type_into_editor(at, "x = 1\n")
    assert any("replaces the code in the editor" in box.value for box in at.warning)  # asked, inside the popover
    assert Store(app_env).draft("Ann", "rope").code == "x = 1\n"
    click(at, "reset-rope")
    assert editor_code(at) == STUB and Store(app_env).draft("Ann", "rope").code == STUB


def test_run_the_public_tests_is_practice_stored_as_such_and_not_an_attempt(app_env, service):
    at = exercise_page()
    type_into_editor(at, "def apply_rope(x):\n    return x\n")
    click(at, "run-public")
    assert service.practiced == [("Ann", {"rope.py": "def apply_rope(x):\n    return x\n"}, ["rope"])]
    # The answer is in the click's own run: its first look found it.
    assert any("Public tests on your draft" in text for text in markdown(at))
    assert any("norm changed" in code.value for code in at.code)
    at.run()
    assert any("Public tests on your draft" in text for text in markdown(at))
    runs = Store(app_env).practice_runs("Ann", "rope")  # the one the service kept: the page wrote none
    assert [(run.score, run.max_score, run.code) for run in runs] == [(1, 2, "def apply_rope(x):\n    return x\n")]
    assert Store(app_env).attempts("Ann").empty and service.submitted == []
    again = exercise_page()
    assert any("Public tests on your draft" in text for text in markdown(again))  # kept in the store


def test_submit_polls_shows_the_feedback_and_builds_a_history_with_diffs(app_env, service):
    at = exercise_page()
    type_into_editor(at, "first = 1\n")
    click(at, "submit")
    assert service.submitted == [("Ann", {"rope.py": "first = 1\n"}, ["rope"], "hidden")]
    assert any("2 submissions before yours" in box.value for box in at.info)
    click(at, "submit")  # a second one while the first is queued: refused with a sentence
    assert any("already have a submission being graded" in box.value for box in at.info)
    service.finish(GRADED)
    at.run()
    # The page waited once for this job, briefly, in the click's run; every other look only reads the store.
    assert len(service.waited) == 1 and 0 < service.waited[0] <= 0.5
    texts = markdown(at)
    assert any("Your last result" in value for value in at.header.values)
    assert f"**{EXERCISE.title}:** 5 / 12 points" in texts
    assert any(LONG_MESSAGE in code.value for code in at.code)  # the whole message, not cut
    families = next(value for value in texts if value.startswith("**Where the other points went:**"))
    assert "1 hidden test about **relative position** failed: 4 points" in families
    assert "dtype" not in families  # a family that lost nothing is not listed
    assert "hidden_relative_1" not in " ".join(texts) and "secret" not in " ".join(c.value for c in at.code)
    assert "1 visible test passed" in [item.label for item in at.expander]  # the passed ones, folded

    type_into_editor(at, "first = 2\nsecond = 3\n")
    click(at, "submit")
    service.finish(GRADED)
    at.run()
    history = [item.label for item in at.expander if item.label.startswith("Attempt ")]
    assert len(history) == 2 and history[0].startswith("Attempt 2 ") and "5 / 12 (graded)" in history[0]
    assert "1 visible test failed, first test_norm" in history[0]
    # The attempts start closed (the last result is drawn above them): an attempt is drawn once it is opened.
    assert [code.value for code in at.code if code.language in ("python", "diff")] == []
    attempts = Store(app_env).attempt_details("Ann", "rope")
    at.session_state[f"attempt-open-{attempts[1].id}"] = True
    at.run()
    assert [code.value for code in at.code if code.language == "python"] == ["first = 2\nsecond = 3"]
    diffs = [code.value for code in at.code if code.language == "diff"]
    assert any("-first = 1" in diff and "+first = 2" in diff and "+second = 3" in diff for diff in diffs)
    at.session_state[f"attempt-open-{attempts[0].id}"] = True
    at.run()
    assert [code.value for code in at.code if code.language == "python"] == ["first = 2\nsecond = 3", "first = 1"]
    # The draft differs from attempt 1: loading asks first, and a "keep" leaves the draft alone.
    click(at, f"ask-load-attempt-{attempts[0].id}-open")
    assert any("Your draft differs from attempt 1's code" in w.value for w in at.warning)
    click(at, f"ask-load-attempt-{attempts[0].id}-keep")
    assert Store(app_env).draft("Ann", "rope").code == "first = 2\nsecond = 3\n"
    assert not any("Your draft differs" in w.value for w in at.warning)
    click(at, f"ask-load-attempt-{attempts[0].id}-open")
    click(at, f"load-attempt-{attempts[0].id}")
    assert editor_code(at) == "first = 1\n" and Store(app_env).draft("Ann", "rope").code == "first = 1\n"


def test_typing_not_yet_saved_when_submit_is_clicked_is_saved_once_and_handed_in(app_env, service):
    at = exercise_page()
    type_into_editor(at, "x = 1\n")
    revision = Store(app_env).draft("Ann", "rope").revision
    # The editor's newest text arrives with the click: no run of the editor has handled it yet.
    at.session_state[editor_key(at)] = {
        "id": uuid.uuid4().hex[:8],
        "type": "blur",
        "text": "x = 2\n",
        "lang": "python",
        "selected": "",
        "cursor": "",
    }
    click(at, "submit")
    assert service.submitted == [("Ann", {"rope.py": "x = 2\n"}, ["rope"], "hidden")]
    draft = Store(app_env).draft("Ann", "rope")
    assert (draft.code, draft.revision) == ("x = 2\n", revision + 1)  # saved once, not once per reader
    at.run()  # later runs read the draft and write nothing
    assert Store(app_env).draft("Ann", "rope").revision == revision + 1


def test_a_reload_finds_the_pending_job_and_once_graded_shows_its_result_here_and_on_progress(app_env, service):
    at = exercise_page()
    type_into_editor(at, "x = 1\n")
    click(at, "submit")
    reloaded = exercise_page()
    assert any("before yours" in box.value for box in reloaded.info)
    progress = go(exercise_page(), "app_pages/progress.py")
    assert any("being graded" in box.value for box in progress.info)
    service.finish(GRADED)
    progress.run()
    assert f"{EXERCISE.title}: 1 attempt · grade 5/12 · hints used: 0" in progress_texts(progress.main)
    graded = exercise_page()  # a reload once graded: the last result is shown again, from the store
    assert "Your last result" in graded.header.values
    assert any(f"{EXERCISE.title}:** 5 / 12 points" in text.value for text in graded.markdown)
    assert not any("before yours" in box.value for box in graded.info)


def test_uploads_take_py_files_of_at_most_200_kb_and_the_folder_tab_is_for_local_courses(app_env, service, monkeypatch):
    at = exercise_page()
    uploader = at.get("file_uploader")[0]
    assert "at most 200 KB" in uploader.proto.label
    # Any file is taken, so that a wrong one gets a sentence (a type filter shows only a red "!"); the
    # box's own limit is the smallest Streamlit has, 1 MB, and it is not drawn: only the 200 KB rule is.
    assert list(uploader.proto.type) == [] and uploader.proto.max_upload_size_mb == 1
    assert any("stFileUploaderDropzoneInstructions" in item.proto.body for item in at.get("html"))
    assert [tab.label for tab in at.tabs] == ["Upload a file"]  # POSLAB_LOCAL_WORKSPACE unset: not local
    at.file_uploader(key="upload-rope").set_value(("notes.txt", b"x = 1\n", "text/plain")).run()
    assert any("not a Python file" in box.value for box in at.error)  # said at once, before any click
    assert at.button(key="grade-upload").disabled
    at.file_uploader(key="upload-rope").set_value(("rope.py", b"#" * (200 * 1024 + 1), "text/x-python")).run()
    assert any("at most 200 KB" in box.value for box in at.error) and at.button(key="grade-upload").disabled
    at.file_uploader(key="upload-rope").set_value(("rope.py", b"x = 1\n", "text/x-python")).run()
    assert not at.error and not at.button(key="grade-upload").disabled
    click(at, "grade-upload")
    assert service.submitted[0][1] == {"rope.py": "x = 1\n"}
    monkeypatch.setenv("POSLAB_LOCAL_WORKSPACE", "1")
    local = exercise_page()
    assert [tab.label for tab in local.tabs if "folder" in tab.label] == ["My exercises/ folder"]
    service.store.finish_grading_job(service.store.grading_jobs("Ann", "queued")[0].id, GRADED.to_dict(), [])
    click(local, "grade-folder")
    student, files, exercises, mode = service.submitted[-1]
    assert set(exercises) == {item.id for item in EXERCISES} and files["rope.py"] == STUB


def test_hints_are_revealed_one_tier_at_a_time_and_remembered(app_env, service):
    hints = exercise_hints(EXERCISE.id)
    at = exercise_page(student="Dan")
    at.button(key=f"hint-{EXERCISE.id}").click().run()
    headings = [m for m in markdown(at) if "**Hint " in m]
    assert headings == [f":material/lightbulb: **Hint 1 of {len(hints)}: {HINT_TIERS[0]}**"]
    assert Store(app_env).progress("Dan").exercise("rope").hints_used == 1
    assert len([m for m in markdown(exercise_page(student="Dan")) if "**Hint " in m]) == 1


# --- the real grading service: a warm judge, the sandbox, the hidden suite --------------------------


def wait_for_job(at, timeout: float = 240) -> None:
    """Run the page as its poll would until no job is pending (AppTest has no timer of its own)."""
    deadline = time.monotonic() + timeout
    while any("before yours" in box.value or "Grading" in box.value or "Starting" in box.value for box in at.info):
        assert time.monotonic() < deadline, "the grading did not finish in time"
        time.sleep(0.5)
        at.run()
        assert not at.exception, at.exception


def test_through_the_real_service_from_the_editor_to_the_progress_page(app_env, monkeypatch):
    # The app's service connects to a running cluster, as a deployment with a scheduler does: judges
    # of its own (Dask, torch, the sandbox) cost more than every other test of this module together.
    with shared_judges() as scheduler:
        monkeypatch.setenv("POSLAB_GRADER_SCHEDULER", scheduler)
        grade_through_the_real_service(app_env)


def grade_through_the_real_service(app_env) -> None:
    at = exercise_page(student="Cleo")
    try:
        type_into_editor(at, reference_source())
        click(at, "submit")
        # Wait on the service itself while its judge warms up: a page run every half second meanwhile
        # only took CPU from the warm-up. The page's own poll then shows the result.
        service = grading.grading_service()
        job_id, _ = service.last_submission("Cleo", "rope")
        service.wait(job_id, 240)
        wait_for_job(at)
        assert f"**{EXERCISE.title}:** 20 / 20 points" in markdown(at)
        type_into_editor(at, get_mutant("rope_clockwise").source)
        click(at, "run-public")
        deadline = time.monotonic() + 240
        while not any("Public tests on your draft" in text for text in markdown(at)):
            assert time.monotonic() < deadline
            time.sleep(0.5)
            at.run()
        assert Store(app_env).practice_runs("Cleo", "rope")[0].code == get_mutant("rope_clockwise").source
        stored = Store(app_env).attempt_details("Cleo", "rope")
        assert [a.code for a in stored] == [reference_source()] and stored[0].score == 20
        later = go(exercise_page(student="Cleo"), "app_pages/progress.py")
        assert f"{EXERCISE.title}: 1 attempt · grade 20/20 · hints used: 0" in progress_texts(later.main)
    finally:
        grading.grading_service().close()
