"""Two app processes behind HAProxy (deploy/start-class.sh), one PostgreSQL store, one grading cluster.

A student's sessions are pinned to a process by HAProxy's cookie (``POSLAB_APP=app1``), as a
browser is after its first request. Through app1 the student opens a lesson and submits a
correct RoPE (its draft saved earlier); through app2 another tab then shows that lesson visited
and the submission graded with full marks. Each app's own ``/_stcore/metrics`` shows which
process served which tab. Every process of the class server but HAProxy listens on loopback.

Needs haproxy and PostgreSQL (``POSLAB_TEST_PG_URL``): skips with the reason, fails under CI=true.
"""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path

import psutil
import pytest

from benchmarks.server_watch import ClassServer, metrics
from benchmarks.streamlit_client import ProtocolSession, run_sessions
from grader.mutants import reference_source
from poslab.exercises import get_exercise
from poslab.store import Store
from tests.conftest import ROOT, require_system_part
from tests.test_listening_sockets import beyond_loopback, explain, listeners
from tests.test_store_support import fresh_postgres_schema, postgres_base_url

SCRIPT = ROOT / "deploy" / "start-class.sh"
GRADED_WITHIN = 300.0  # seconds: a judge warming up on a loaded machine, then the grading


@pytest.fixture
def class_server(tmp_path: Path, monkeypatch):
    require_system_part(shutil.which("haproxy") is not None, "haproxy is not installed (apt-get install haproxy)")
    monkeypatch.setenv("POSLAB_GRADER_WARM_MODES", "hidden")  # no practice run here: one sandbox worker
    monkeypatch.setenv("POSLAB_STOP_GRACE", "3")  # how the server stops is not tested here
    with fresh_postgres_schema(postgres_base_url()) as db_url:
        server = ClassServer.start(ROOT, processes=2, db_url=db_url, judges=1, folder=tmp_path)
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
    pending = next(iter(store.grading_jobs("ada", "queued")), None)
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
