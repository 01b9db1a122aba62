"""``bench_sessions.py --roster``: the class signs in as a roster class does, each session with its
own personal link, so the pages are measured with sign-in on.

Before the app starts, a roster of every student the run names is written (``POSLAB_ROSTER``);
once it runs, each student's link is issued in the store and used as a browser uses it
(``roster_signin.sign_in``); each session then connects with its sign-in cookie and no
``?student=``. Signing in is set-up: it is not in the pages' times.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from datetime import timedelta
from pathlib import Path

from benchmarks.roster_signin import email, sign_in, write_roster
from benchmarks.streamlit_client import ProtocolSession
from poslab.store import Store


def students(args: argparse.Namespace) -> list[str]:
    """Every name bench_sessions.py gives a session in this run (alone, at once, the soak's rounds)."""
    names = ["bench-alone", "bench-after"] + [f"student-{index:03d}" for index in range(args.sessions)]
    if args.soak:
        names += [
            f"{prefix}{index:03d}"
            for prefix in [f"r{number:02d}-" for number in range(1, args.rounds + 1)] + ["again-"]
            for index in range(args.sessions)
        ]
    return names


def write_class_roster(args: argparse.Namespace) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="poslab-roster-"))
    return write_roster(folder / "roster.csv", students(args))


def sign_in_run(args: argparse.Namespace, server, base_url: str) -> dict[str, str]:
    """Every student of the run signed in (the app's store: the started one's, or --db-url's)."""
    db_url = args.db_url if args.processes else f"sqlite:///{server.folder / 'store.db'}"
    cookies = sign_in_everyone(base_url, db_url, students(args))
    print(f"signed in {len(cookies)} students with their roster links (not timed)")
    return cookies


def sign_in_everyone(base_url: str, db_url: str, names: list[str]) -> dict[str, str]:
    """student name -> the Cookie header of a browser signed in by that student's link."""
    store = Store(db_url)
    try:
        tokens = store.issue_links([email(name) for name in names], timedelta(days=1))
    finally:
        store.close()
    cookies = {name: sign_in(base_url, tokens[email(name)]) for name in names}
    asyncio.run(_check_signed_in(base_url, names[0], cookies[names[0]]))
    return cookies


async def _check_signed_in(base_url: str, name: str, cookie: str) -> None:
    """One session with its cookie must be signed in as its student, or the figures would not be."""
    session, run = await ProtocolSession.open(base_url, "", "progress", cookie=cookie)
    await session.close()
    if not any(text.startswith(f"Signed in as {name} ") for text in run.texts):
        raise RuntimeError(f"a session with {name}'s sign-in cookie is not signed in: {run.texts[:5]}")
