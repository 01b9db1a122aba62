"""Two app processes behind HAProxy (deploy/start-class.sh), one PostgreSQL store, one grading cluster.

A student's sessions are pinned to a process by HAProxy's cookie (``POSLAB_APP=app1``), as a
browser is after its first request. Through app1 the student opens a lesson and submits a
correct RoPE (its draft saved earlier); through app2 another tab then shows that lesson visited
and the submission graded with full marks. Each app's own ``/_stcore/metrics`` shows which
process served which tab. Every process of the class server but HAProxy listens on loopback.

A roster's sign-in is in the store, not in one process's memory: with a roster in the store, Ada's
personal link is used through the proxy; her browser's sign-in cookie then names her in a tab
pinned to app1 and in one pinned to app2. What she marks done through app1 shows through app2; her
*Sign out* through app1 signs her out in app2 too.

Both tests share one class server (two app starts, a scheduler and a warm judge): the typed-name
test runs first; the roster test puts its roster into the store as ``POSLAB_ROSTER`` does at an
app's start (that a roster file is read at the start: ``tests/test_signin_server.py``) and takes it
out again at its end.

Needs haproxy and PostgreSQL (``POSLAB_TEST_PG_URL``): skips with the reason, fails under CI=true.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path

import psutil
import pytest

from benchmarks.roster_signin import email, sign_in, write_roster
from benchmarks.server_watch import ClassServer, metrics
from benchmarks.streamlit_client import ProtocolSession, run_sessions
from grader.mutants import reference_source
from poslab.exercises import get_exercise
from poslab.roster import read_roster
from poslab.store import Store
from tests.conftest import ROOT, require_system_part
from tests.test_listening_sockets import beyond_loopback, explain, listeners
from tests.test_store_support import fresh_postgres_schema, postgres_base_url

SCRIPT = ROOT / "deploy" / "start-class.sh"
GRADED_WITHIN = 300.0  # seconds: a judge warming up on a loaded machine, then the grading
ADA = email("ada")
SIGNED_IN = f"Signed in as ada ({ADA})"


@pytest.fixture(scope="module")
def class_server(tmp_path_factory: pytest.TempPathFactory):
    """One class server for the module: its start (two apps, a scheduler, a judge) is most of the cost."""
    require_system_part(shutil.which("haproxy") is not None, "haproxy is not installed (apt-get install haproxy)")
    with pytest.MonkeyPatch.context() as monkeypatch, fresh_postgres_schema(postgres_base_url()) as db_url:
        monkeypatch.setenv("POSLAB_GRADER_WARM_MODES", "hidden")  # no practice run here: one sandbox worker
        monkeypatch.setenv("POSLAB_STOP_GRACE", "3")  # how the server stops is not tested here
        folder = tmp_path_factory.mktemp("class")
        server = ClassServer.start(ROOT, processes=2, db_url=db_url, judges=1, folder=folder)
        try:
            yield server
        finally:
            server.stop()


def active_sessions(app_url: str) -> int:
    return int(metrics(app_url).get("active_sessions", -1))


def wait_until_graded(store: Store, student: str, exercise: str, job_id: str, run_dir: Path) -> None:
    deadline = time.monotonic() + GRADED_WITHIN
    while time.monotonic() < deadline:
        if store.grading_job(job_id).status != "queued":
            return
        time.sleep(0.2)
    logs = "\n".join(
        f"--- {log.name}\n" + "\n".join(log.read_text(errors="replace").splitlines()[-15:])
        for log in sorted(run_dir.glob("*.log"))
    )
    pytest.fail(
        f"{student}'s {exercise} was not graded within {GRADED_WITHIN:g} s: {store.grading_job(job_id)}\n{logs}"
    )


def test_progress_and_a_submission_made_through_one_process_show_through_the_other(class_server):
    store = Store(class_server.db_url)
    assert store.roster_members() == (), (
        "a roster is in the store: typed names are refused (the roster test ran first?)"
    )
    store.save_draft("ada", "rope", reference_source(), saved_by="earlier-tab")
    url, apps = class_server.url, class_server.apps

    async def through_app1() -> None:
        lesson, run = await ProtocolSession.open(url, "ada", "rope", cookie="POSLAB_APP=app1")
        assert run.problem is None and not run.exceptions, (run.problem, run.exceptions)
        assert (active_sessions(apps["app1"]), active_sessions(apps["app2"])) == (1, 0)
        lesson.params["exercise"] = "rope"  # as Progress's "Open RoPE" link: /exercise?exercise=rope
        run = await lesson.navigate("exercise")
        assert run.problem is None and not run.exceptions, (run.problem, run.exceptions)
        clicked = await lesson.click(run, "Submit for grading")
        assert clicked.problem is None and not clicked.exceptions, (clicked.problem, clicked.exceptions)
        await lesson.close()

    run_sessions(through_app1())
    # A warm judge may have graded it already: the job is ada's one, whatever its state now.
    pending = next(iter(store.grading_jobs("ada")), None)
    assert pending is not None and pending.lease_holder, "the click did not hand in a submission"
    wait_until_graded(store, "ada", "rope", pending.id, class_server.folder / "run")
    job = store.grading_job(pending.id)
    assert job.status == "done", job

    async def through_app2() -> list[str]:
        tab, run = await ProtocolSession.open(url, "ada", "progress", cookie="POSLAB_APP=app2")
        assert run.problem is None and not run.exceptions, (run.problem, run.exceptions)
        assert (active_sessions(apps["app1"]), active_sessions(apps["app2"])) == (0, 1)
        await tab.close()
        return run.texts

    texts = run_sessions(through_app2())
    lesson_bar = next(text for text in texts if text.startswith("RoPE: "))
    assert lesson_bar.startswith("RoPE: visited"), lesson_bar
    graded = [text for text in texts if "1 attempt · grade" in text]
    assert len(graded) == 1 and graded[0].startswith(f"{get_exercise('rope').title}: "), texts
    score, maximum = re.search(r"grade ([\d.]+)/([\d.]+)", graded[0]).groups()
    assert float(score) == float(maximum) > 0, graded[0]

    exposed = beyond_loopback(
        listeners(psutil.Process(class_server.process.pid)), allowed_port=class_server.public_port
    )
    assert not exposed, explain(exposed)


# -- a roster's sign-in -------------------------------------------------------------------------------


def in_thread(coroutine):
    with ThreadPoolExecutor(1) as pool:  # the browser tests' Playwright may hold this thread's loop
        return pool.submit(asyncio.run, coroutine).result()


async def open_tab(url: str, page: str, cookie: str):
    session, run = await ProtocolSession.open(url, "", page, cookie=cookie)
    assert run.problem is None and not run.exceptions, (run.problem, run.exceptions)
    return session, run


def test_a_sign_in_made_through_one_process_holds_in_the_other_and_so_does_its_sign_out(class_server, tmp_path):
    server = class_server
    store = Store(server.db_url)
    # What each app process does with POSLAB_ROSTER at its start: the file's students become the roster.
    roster = read_roster(write_roster(tmp_path / "roster.csv", ["ada", "bob"]).read_bytes())
    store.replace_roster(roster.students, actor="POSLAB_ROSTER")
    try:
        signin = sign_in(server.url, store.issue_links([ADA], timedelta(days=1))[ADA])  # through HAProxy
        on_app1, on_app2 = f"{signin}; POSLAB_APP=app1", f"{signin}; POSLAB_APP=app2"

        async def mark_done_through_app1() -> list[str]:
            tab, run = await open_tab(server.url, "rope", on_app1)
            clicked = await tab.click(run, "Mark lesson done")
            await tab.close()
            return run.texts + clicked.texts

        assert SIGNED_IN in in_thread(mark_done_through_app1())
        assert store.progress(ADA).lesson("rope").marked_done

        async def progress_through_app2() -> list[str]:
            tab, run = await open_tab(server.url, "progress", on_app2)
            await tab.close()
            return run.texts

        texts = in_thread(progress_through_app2())
        assert SIGNED_IN in texts and any(text.startswith("RoPE: done") for text in texts), texts

        async def sign_out_through_app1_then_app2() -> list[str]:
            tab, run = await open_tab(server.url, "rope", on_app1)
            await tab.click(run, "Sign out")
            await tab.close()
            other, after = await open_tab(server.url, "rope", on_app2)
            await other.close()
            return after.texts

        after = in_thread(sign_out_through_app1_then_app2())
        assert SIGNED_IN not in after and any("personal sign-in link" in text for text in after), after
    finally:
        store.clear_roster(actor="POSLAB_ROSTER")  # typed names again, for any test after this one
