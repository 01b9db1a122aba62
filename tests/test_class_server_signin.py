"""A roster's sign-in behind HAProxy with two app processes (deploy/start-class.sh): it is in the
store, not in one process's memory.

Ada's personal link is used through the proxy; her browser's sign-in cookie then names her in a
tab pinned to app1 (HAProxy's ``POSLAB_APP`` cookie) and in one pinned to app2. What she marks
done through app1 shows through app2; her *Sign out* through app1 signs her out in app2 too.

Needs haproxy and PostgreSQL (``POSLAB_TEST_PG_URL``): skips with the reason, fails under CI=true.
"""

from __future__ import annotations

import asyncio
import shutil
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path

import pytest

from benchmarks.roster_signin import email, sign_in, write_roster
from benchmarks.server_watch import ClassServer
from benchmarks.streamlit_client import ProtocolSession
from poslab.store import Store
from tests.conftest import ROOT, require_system_part
from tests.test_store_support import fresh_postgres_schema, postgres_base_url

ADA = email("ada")
SIGNED_IN = f"Signed in as ada ({ADA})"


@pytest.fixture
def class_with_roster(tmp_path: Path, monkeypatch):
    require_system_part(shutil.which("haproxy") is not None, "haproxy is not installed (apt-get install haproxy)")
    monkeypatch.setenv("POSLAB_ROSTER", str(write_roster(tmp_path / "roster.csv", ["ada", "bob"])))
    monkeypatch.setenv("POSLAB_GRADER_START", "on_demand")  # nothing is graded here
    monkeypatch.setenv("POSLAB_GRADER_WARM_MODES", "hidden")  # so one sandbox worker is enough
    monkeypatch.setenv("POSLAB_STOP_GRACE", "3")  # how the server stops is not tested here
    with fresh_postgres_schema(postgres_base_url()) as db_url:
        server = ClassServer.start(ROOT, processes=2, db_url=db_url, judges=1, folder=tmp_path)
        try:
            yield server
        finally:
            server.stop()


def in_thread(coroutine):
    with ThreadPoolExecutor(1) as pool:  # the browser tests' Playwright may hold this thread's loop
        return pool.submit(asyncio.run, coroutine).result()


async def open_tab(url: str, page: str, cookie: str):
    session, run = await ProtocolSession.open(url, "", page, cookie=cookie)
    assert run.problem is None and not run.exceptions, (run.problem, run.exceptions)
    return session, run


def test_a_sign_in_made_through_one_process_holds_in_the_other_and_so_does_its_sign_out(class_with_roster):
    server = class_with_roster
    store = Store(server.db_url)
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
