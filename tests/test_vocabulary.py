"""One vocabulary per concept: the stored strings stay the same, both sides of the sandbox use the
same words, and no bare status or message kind is left outside the vocabulary modules.

The vocabularies: ``poslab/vocabulary.py`` (what the store keeps too), ``grader/vocabulary.py``
(the grader's own) and ``grader/sandboxed/protocol.py`` (the wire, imported by both sides).
"""

from __future__ import annotations

import ast
import json
import re
import typing
from pathlib import Path

import pytest
from _pytest.reports import TestReport

from grader.results import GRADEBOOK_HEADER, SubmissionResult
from grader.sandbox.replies import NOTE_SENTENCES, decode_reply
from grader.sandboxed import exercise_calls
from grader.sandboxed.protocol import FindingCode, MessageKind, NoteCode, PytestOutcome, PytestPhase, StrayScope
from grader.student import CLASS_OPS, OPS, CannotCheck, NotATensor
from grader.vocabulary import ExerciseStatus, Isolation, IsolationSetting, SubmissionStatus, Visibility, WatchState
from poslab.config import PROJECT_ROOT
from poslab.vocabulary import AttemptKind, GradingMode, JobState, TestStatus

# -- the strings the formats hold ----------------------------------------------------------------------

STORED = {  # what results.json, the gradebook and the database hold, as their readers know them
    SubmissionStatus: {"graded", "import_failed", "stopped_grader"},
    TestStatus: {"passed", "failed", "did_not_import"},
    ExerciseStatus: {"graded", "did_not_import", "not_graded"},
    Visibility: {"visible", "hidden", "after_due_date", "after_published"},  # Gradescope's
    Isolation: {"bwrap", "fallback", "none"},
    IsolationSetting: {"auto", "bwrap", "fallback"},  # POSLAB_GRADER_ISOLATION
    GradingMode: {"hidden", "public"},
    JobState: {"queued", "done", "failed"},
    AttemptKind: {"submission", "practice", "superseded"},  # superseded: kept after a regrade
    WatchState: {"starting", "waiting", "grading", "done", "failed"},
}


@pytest.mark.parametrize("vocabulary", list(STORED), ids=lambda vocabulary: vocabulary.__name__)
def test_each_vocabulary_holds_the_strings_its_formats_hold(vocabulary):
    assert {str(member) for member in vocabulary} == STORED[vocabulary]
    assert all(json.dumps(member) == json.dumps(str(member)) for member in vocabulary)  # JSON: the plain string


def test_a_result_stored_before_the_vocabularies_loads_with_its_strings():
    old = {  # as the service stored a result whose judges died, before "stopped_grader" and "none" were typed
        "submission_id": "ann",
        "status": "stopped_grader",
        "tests": [],
        "isolation": "none",
        "public_tests_only": False,
        "submission_hash": "h",
        "suite_hash": "",
        "grader_version": "0.1",
        "execution_time": 3.5,
        "messages": ["Your code stopped the grader twice; nothing was graded."],
        "exercises": {},
        "exercise_status": {},
        "hidden_losses": {},
    }
    result = SubmissionResult.from_dict(old)
    assert (result.status, result.isolation) == (SubmissionStatus.STOPPED_GRADER, Isolation.NONE)
    assert (
        json.loads(result.to_json())["status"] == "stopped_grader"
        and result.gradebook_row()[GRADEBOOK_HEADER.index("status")] == "stopped_grader"
    )
    again = SubmissionResult.from_gradescope(json.loads(json.dumps(result.to_gradescope())))
    assert again == result and again.to_gradescope()["extra_data"]["isolation"] == "none"


def test_an_unknown_status_is_refused_when_a_result_is_read():
    with pytest.raises(ValueError, match="'graded!'"):
        SubmissionResult("ann", "graded!", (), "bwrap", False, "h", "s", "v", 0.1)


# -- both sides of the sandbox ---------------------------------------------------------------------------


def members_named(folder: str, vocabulary: type) -> set[str]:
    """The members of ``vocabulary`` the modules of ``folder`` name (``Vocabulary.MEMBER``)."""
    named = set()
    for path in (PROJECT_ROOT / folder).glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == vocabulary.__name__
            ):
                named.add(node.attr)
    return named


@pytest.mark.parametrize(
    "vocabulary", [MessageKind, FindingCode, NoteCode, StrayScope], ids=lambda vocabulary: vocabulary.__name__
)
def test_the_judge_and_the_sandboxed_side_each_use_every_word_of_the_wire(vocabulary):
    """A word one side sends and the other never names would be a message nobody reads."""
    everything = {member.name for member in vocabulary}
    assert members_named("grader/sandboxed", vocabulary) == everything
    assert members_named("grader/sandbox", vocabulary) == everything


def test_the_judge_words_every_note_and_every_finding_the_sandboxed_side_sends():
    assert set(NOTE_SENTENCES) == set(NoteCode) and all(NOTE_SENTENCES.values())
    no_table = {"type": MessageKind.FINDING, "code": FindingCode.NO_TABLE, "parameters": 0, "buffers": 0}
    with pytest.raises(CannotCheck):
        decode_reply(json.loads(json.dumps(no_table)), bytearray(), "LearnedPositionalEmbedding", (), 0.0)
    not_a_tensor = {
        "type": MessageKind.FINDING,
        "code": FindingCode.NOT_A_TENSOR,
        "returned": "list",
        "output": {"$returned": "list", "values": None},
        "tensors": [],
        "inputs_after": [],
    }
    assert isinstance(decode_reply(json.loads(json.dumps(not_a_tensor)), bytearray(), "f", (), 0.0).output, NotATensor)


def test_the_sandboxed_sides_ops_are_the_judges_class_ops():
    assert set(exercise_calls.LEARNED_OPS) == {f"learned.{action}" for action in CLASS_OPS} <= set(OPS)
    assert set(exercise_calls.DESCRIBED_OPS) < set(exercise_calls.LEARNED_OPS)


def test_the_public_tests_report_uses_pytests_own_words():
    hints = typing.get_type_hints(TestReport)
    assert set(typing.get_args(hints["outcome"])) == set(PytestOutcome)
    assert {PytestPhase.SETUP, PytestPhase.CALL, PytestPhase.TEARDOWN, PytestPhase.COLLECT} == set(PytestPhase)
    from _pytest.reports import CollectReport

    assert CollectReport.when == PytestPhase.COLLECT


# -- no bare words -----------------------------------------------------------------------------------------

VOCABULARY_MODULES = {"poslab/vocabulary.py", "grader/vocabulary.py", "grader/sandboxed/protocol.py"}
WORDS = sorted(
    {
        str(member)
        for vocabulary in [*STORED, MessageKind, FindingCode, NoteCode, StrayScope, PytestOutcome, PytestPhase]
        for member in vocabulary
    }
)
Q, W = "[\"']", "(" + "|".join(WORDS) + ")"
# A vocabulary word as a value: compared, returned, assigned to a field of that kind, a dict entry
# under such a key, an argument of a result type, or appended. (A dict key, a subscript or a
# sentence that contains the word is not a value.) The same pattern as the closing note's grep.
BARE = re.compile(
    rf"(==|!=|\bin|\breturn)\s*[(\[{{]?\s*{Q}{W}{Q}|{Q}{W}{Q}\s*(==|!=)"
    rf"|\w*(status|state|mode|modes|isolation|kind|code|outcome|when|visibility|scope|type)\b[^=\n(]{{0,30}}=\s*[(\[]?\s*{Q}{W}{Q}"
    rf"|{Q}(type|status|state|code|outcome|when|mode|isolation|kind|visibility|stray_scope){Q}\s*:\s*{Q}{W}{Q}"
    rf"|\b(TestOutcome|SubmissionResult|JobStatus|GradingJob|Finding|Watch)\([^)\n]*{Q}{W}{Q}|\.append\(\s*{Q}{W}{Q}"
)
NOT_CHECKED_YET: set[str] = set()
# Streamlit's own words: an st.status container's state ("running", "complete", "error") is its API's.
THIRD_PARTY = re.compile(
    r"\bstatus\.update\(|\bst\.status\(|\bvisibilityState\b"
)  # Streamlit's and the browser's own words


def bare_words(paths: list[Path], root: Path = PROJECT_ROOT) -> list[str]:
    found = []
    for path in paths:
        relative = path.relative_to(root).as_posix()
        if relative in VOCABULARY_MODULES | NOT_CHECKED_YET:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if BARE.search(line) and not THIRD_PARTY.search(line):
                found.append(f"{relative}:{number}: {line.strip()}")
    return found


def test_no_bare_status_or_message_kind_outside_the_vocabularies():
    paths = [PROJECT_ROOT / "app.py"] + [
        path
        for folder in ("app_pages", "grader", "poslab/store")
        for path in sorted((PROJECT_ROOT / folder).rglob("*.py"))
        # A revision is frozen history: it writes the words as they were, never today's vocabulary.
        if "alembic" not in path.relative_to(PROJECT_ROOT).parts
    ]
    assert len(paths) > 50
    assert bare_words(paths) == []


@pytest.mark.parametrize(
    "line",
    [
        'if result.status == "graded":',
        'return "not_graded"',
        'status="import_failed",',
        'mode: str = "hidden",',
        'self.send({"type": "pong"})',
        'raise Finding("no_table", parameters=1)',
        'notes.append("table_in_buffer")',
        'JobStatus(job_id, "waiting", 2)',
        'isolation="none",',
        'warm_modes=("hidden",)',
        'if kind in ("result", "finding"):',
        "elif header['type'] == 'reap':",
    ],
)
def test_the_check_finds_a_bare_word(tmp_path, line):
    (tmp_path / "module.py").write_text(f"x = 1\n{line}\n")
    assert bare_words([tmp_path / "module.py"], tmp_path) == [f"module.py:2: {line}"]


@pytest.mark.parametrize(
    "line",
    [
        'kind = "public tests" if attempt.public_tests_only else "graded attempt"',
        'header.get("error")',
        'sa.Column("passed", sa.Boolean)',
        '{"status": TestStatus.PASSED}',
        'test["status"] == TestStatus.PASSED',
        'st.info("Grading your code in a sandbox…")',
    ],
)
def test_the_check_leaves_field_names_and_sentences_alone(tmp_path, line):
    (tmp_path / "module.py").write_text(f"{line}\n")
    assert bare_words([tmp_path / "module.py"], tmp_path) == []
