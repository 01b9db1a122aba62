"""A class at once: N real sessions against one app, with the server's own figures beside them.

    python benchmarks/bench_sessions.py [--sessions 30] [--pages rope,sinusoidal,...] [--url URL]
    python benchmarks/bench_sessions.py --soak [--rounds 20] [--sessions 30]
    python benchmarks/bench_sessions.py --browser --sessions 3      # Chromium instead of the protocol

Without ``--url`` it starts ``streamlit run app.py`` on a free loopback port, in a temporary data
folder with a fresh SQLite store (its grading service starts as a student's app would). Then:

1. **cold**: one session opens each page once, right after the start (the first render of each);
2. it waits until the server's process tree is quiet (the grader's judges warm up meanwhile);
3. **alone, warm**: that session opens each page again and moves the lesson's slider;
4. **N at once**: N sessions connect at the same moment, each signed in as its own student
   (``?student=<name>``, or with ``--roster`` its own personal link's cookie); each opens the pages in turn (by the sidebar, as a click does) and, on
   the first lesson of the list, moves its first slider by one step.

Each session speaks Streamlit's own websocket protocol (``benchmarks/streamlit_client.py``): a
page's time is from the request to the server's ``script_finished``, with no browser drawing.
``--browser`` drives Chromium (Playwright) instead, for small N: a page's time is from the click
to the app's "not running" state, drawing included.

Printed: per page, p50, p95 and max seconds, runs, exceptions (an ``exception`` element) and
error boxes; the runs a session could not complete (not served); the wall time; the server's
resident memory (the Streamlit process, and its whole tree with the judges) and CPU before, at
its peak/mean during, and after; and Streamlit's own ``/_stcore/metrics`` (active sessions).
``--soak`` runs ``--rounds`` rounds of N sessions that come and go, prints the Streamlit
process's resident memory after each, round 20 against round 1 in percent, and whether the
memory of closed sessions is given back once Streamlit lets them go
(``server.disconnectedSessionTTL``, 120 s by default). Targets (2 cores): alone, every page
<= 0.3 s warm and <= 1 s cold; 30 at once p95 <= 1.5 s, max <= 3 s; 100 at once p95 <= 5 s;
no exception; soak within 15 %.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import roster_sessions  # noqa: E402
from benchmarks.profile_summary import start_recording, stop_recording, summary  # noqa: E402
from benchmarks.server_watch import AppServer, ClassServer, ServerWatch, metrics  # noqa: E402
from benchmarks.streamlit_client import PageRun, ProtocolSession  # noqa: E402

DEFAULT_PAGES = ("rope", "sinusoidal", "position-problem", "exercise", "progress")
TARGETS = {"warm": 0.3, "cold": 1.0, "p95_30": 1.5, "max_30": 3.0, "p95_100": 5.0, "soak_percent": 15.0}


# -- one session's walk ---------------------------------------------------------------------------------


async def walk(
    base_url: str,
    student: str,
    pages: list[str],
    slider_page: str | None,
    timeout: float,
    cookies: dict[str, str] | None = None,
) -> list[PageRun]:
    """Open the pages in turn (the first by its address, the rest by the sidebar); move a slider.

    ``cookies``: with --roster, each student's sign-in cookie (then no ?student=)."""
    runs: list[PageRun] = []
    cookie = (cookies or {}).get(student, "")
    try:
        session, run = await ProtocolSession.open(base_url, "" if cookie else student, pages[0], timeout, cookie=cookie)
    except Exception as error:  # noqa: BLE001 - a refused connection: the session was not served
        return [PageRun(pages[0], problem=f"could not connect: {type(error).__name__}: {error}")]
    try:
        runs.append(run)
        for index, page in enumerate(pages):
            if index:
                runs.append(await session.navigate(page))
            if page == slider_page:
                runs.append(await session.move_slider(runs[-1]))
    finally:
        await session.close()
    return runs


async def class_at_once(
    base_url: str,
    sessions: int,
    pages: list[str],
    slider_page: str | None,
    timeout: float,
    prefix: str,
    cookies: dict[str, str] | None = None,
) -> tuple[list[list[PageRun]], float]:
    start = time.perf_counter()
    walks = await asyncio.gather(
        *(walk(base_url, f"{prefix}{index:03d}", pages, slider_page, timeout, cookies) for index in range(sessions))
    )
    return list(walks), time.perf_counter() - start


# -- figures --------------------------------------------------------------------------------------------


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))]


def page_table(walks: list[list[PageRun]]) -> list[dict]:
    by_page: dict[str, list[PageRun]] = {}
    for runs in walks:
        for run in runs:
            by_page.setdefault(run.page, []).append(run)
    rows = []
    for page, runs in by_page.items():
        served = [run.seconds for run in runs if run.problem is None]
        rows.append(
            {
                "page": page,
                "runs": len(runs),
                "served": len(served),
                "p50": statistics.median(served) if served else None,
                "p95": percentile(served, 0.95) if served else None,
                "max": max(served) if served else None,
                "exceptions": sum(len(run.exceptions) for run in runs),
                "error_boxes": sum(len(run.error_alerts) for run in runs),
                "problems": sorted({run.problem for run in runs if run.problem})[:3],
                "first_exception": next((e for run in runs for e in run.exceptions), None),
            }
        )
    return rows


def print_table(title: str, rows: list[dict]) -> None:
    print(f"\n{title}")
    print(f"  {'page':34} {'runs':>5} {'p50 s':>7} {'p95 s':>7} {'max s':>7} {'exceptions':>10} {'error boxes':>11}")
    for row in rows:
        figures = " ".join(f"{row[key]:7.3f}" if row[key] is not None else "      -" for key in ("p50", "p95", "max"))
        served = f"{row['served']}/{row['runs']}" if row["served"] != row["runs"] else str(row["runs"])
        print(f"  {row['page']:34} {served:>5} {figures} {row['exceptions']:>10} {row['error_boxes']:>11}")
        for problem in row["problems"]:
            print(f"      not served: {problem}")
        if row["first_exception"]:
            print(f"      first exception: {row['first_exception'][:200]}")


def all_served(walks: list[list[PageRun]], pages: list[str]) -> bool:
    return all(len(runs) >= len(pages) and all(run.problem is None for run in runs) for runs in walks)


# -- the runs -------------------------------------------------------------------------------------------


async def cold_and_alone(
    base_url: str,
    pages: list[str],
    slider_page: str | None,
    timeout: float,
    watch: ServerWatch,
    cookies: dict[str, str] | None = None,
) -> dict:
    cold = await walk(base_url, "bench-alone", pages, slider_page, timeout, cookies)
    print_table("cold: the first render of each page after the start (one session)", page_table([cold]))
    quiet = watch.wait_quiet() if watch.process is not None else 0.0
    print(f"\nwaited {quiet:.1f} s for the server to be quiet (the grader's judges warming up)")
    warm = await walk(base_url, "bench-alone", pages, slider_page, timeout, cookies)
    print_table("alone, warm: the same session again", page_table([warm]))
    return {"cold": page_table([cold]), "warm": page_table([warm])}


async def main_run(args: argparse.Namespace, base_url: str, watch: ServerWatch) -> dict:
    pages, slider_page = args.pages, args.slider_page
    report = {"sessions": args.sessions, "pages": pages, "url": base_url}
    if not args.no_alone:
        report.update(await cold_and_alone(base_url, pages, slider_page, args.timeout, watch, args.cookies))
    elif watch.process is not None:  # the class must not meet the judges' warm-up either
        print(f"waited {watch.wait_quiet():.1f} s for the server to be quiet (the grader's judges warming up)")
    before = watch.snapshot("before")
    recorder = start_recording(watch.process.pid, args.profile) if args.profile and watch.process else None
    cpu_before = watch.cpu_seconds()
    watch.start_sampling()
    walks, wall = await class_at_once(
        base_url, args.sessions, pages, slider_page, args.timeout, "student-", args.cookies
    )
    during = watch.stop_sampling()
    cpu_used = watch.cpu_seconds() - cpu_before
    if recorder is not None:
        stop_recording(recorder)
    await asyncio.sleep(3)
    after = watch.snapshot("after")
    rows = page_table(walks)
    print_table(
        f"{args.sessions} sessions at once, {len(pages)} pages each"
        f"{' and a slider on ' + slider_page if slider_page else ''}",
        rows,
    )
    print(f"\n  wall time for all: {wall:.1f} s; every session served: {all_served(walks, pages)}")
    every = [run.seconds for runs in walks for run in runs if run.problem is None]
    if every:
        print(
            f"  all runs: p50 {statistics.median(every):.3f} s, p95 {percentile(every, 0.95):.3f} s, "
            f"max {max(every):.3f} s"
        )
    runs = sum(len(runs) for runs in walks)
    if watch.process is not None:
        # CPU seconds of the Streamlit process per run: what a page costs the server, whatever the
        # machine's load (the wall times above stretch with the load; this does much less).
        print(f"  Streamlit process CPU: {cpu_used:.1f} s for {runs} runs, {1000 * cpu_used / runs:.0f} ms per run")
    watch.print_resources(before, during, after)
    if recorder is not None:
        print("\n" + summary(args.profile))
    report.update(
        {
            "at_once": rows,
            "wall_seconds": wall,
            "cpu_ms_per_run": 1000 * cpu_used / max(1, runs),
            "all_served": all_served(walks, pages),
            "server": {"before": before, "during": during, "after": after},
        }
    )
    return report


async def soak(args: argparse.Namespace, base_url: str, watch: ServerWatch) -> dict:
    pages, slider_page = args.pages, args.slider_page
    await walk(base_url, "bench-alone", pages, slider_page, args.timeout, args.cookies)  # the imports and caches
    if watch.process is not None:
        watch.wait_quiet()
    print(f"\nsoak: {args.rounds} rounds of {args.sessions} sessions that come and go")
    print(
        f"  {'round':>5} {'wall s':>7} {'p95 s':>7} {'max s':>7} {'exceptions':>10} {'served':>6} "
        f"{'app RSS MiB':>11} {'tree RSS MiB':>12}"
    )
    rounds = []
    for number in range(1, args.rounds + 1):
        walks, wall = await class_at_once(
            base_url, args.sessions, pages, slider_page, args.timeout, f"r{number:02d}-", args.cookies
        )
        await asyncio.sleep(args.settle)
        snapshot = watch.snapshot(f"round {number}")
        every = [run.seconds for runs in walks for run in runs if run.problem is None]
        exceptions = sum(len(run.exceptions) for runs in walks for run in runs)
        row = {
            "round": number,
            "wall": wall,
            "p95": percentile(every, 0.95) if every else None,
            "max": max(every) if every else None,
            "exceptions": exceptions,
            "served": all_served(walks, pages),
            **snapshot,
        }
        rounds.append(row)
        print(
            f"  {number:>5} {wall:7.1f} {row['p95'] or 0:7.3f} {row['max'] or 0:7.3f} {exceptions:>10} "
            f"{str(row['served']):>6} {row.get('app_rss_mib', 0):11.0f} {row.get('tree_rss_mib', 0):12.0f}"
        )
    report = {"rounds": rounds}
    if watch.process is not None and rounds:
        first, last = rounds[0]["app_rss_mib"], rounds[-1]["app_rss_mib"]
        growth = 100.0 * (last - first) / first
        print(
            f"\n  app RSS: round 1 {first:.0f} MiB, round {len(rounds)} {last:.0f} MiB: {growth:+.1f} % "
            f"(target within {TARGETS['soak_percent']:g} %)"
        )
        report["growth_percent"] = growth
        if args.release_wait > 0:
            report["released"] = await released(base_url, args, watch, last)
    return report


async def released(base_url: str, args: argparse.Namespace, watch: ServerWatch, loaded_mib: float) -> dict:
    """Wait out Streamlit's keep-for-reconnect time, nudge it to let the closed sessions go, measure."""
    print(
        f"  waiting {args.release_wait:.0f} s: Streamlit keeps a closed session {args.release_wait - 10:.0f} s "
        "for a reconnect (server.disconnectedSessionTTL)"
    )
    await asyncio.sleep(args.release_wait)
    await walk(base_url, "bench-after", args.pages[:1], None, args.timeout, args.cookies)  # expiry: on the next store
    await asyncio.sleep(args.settle)
    snapshot = watch.snapshot("released")
    sessions = metrics(base_url).get("active_sessions")
    print(
        f"  after the closed sessions expired: app RSS {snapshot['app_rss_mib']:.0f} MiB "
        f"({snapshot['app_rss_mib'] - loaded_mib:+.0f} MiB against the last round); active sessions {sessions}"
    )
    # The allocator keeps freed pages, so RSS rarely falls; what was given back shows as room:
    # another round of as many sessions should fit in it without the process growing.
    await class_at_once(base_url, args.sessions, args.pages, args.slider_page, args.timeout, "again-", args.cookies)
    await asyncio.sleep(args.settle)
    again = watch.snapshot("one more round")
    print(
        f"  one more round of {args.sessions} sessions after that: app RSS {again['app_rss_mib']:.0f} MiB "
        f"({again['app_rss_mib'] - snapshot['app_rss_mib']:+.0f} MiB): the closed sessions' memory "
        f"{'was' if again['app_rss_mib'] - snapshot['app_rss_mib'] < 0.02 * loaded_mib else 'may not have been'} "
        "given back to the process's heap"
    )
    return {**snapshot, "active_sessions": sessions, "rss_after_one_more_round_mib": again["app_rss_mib"]}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="an app that runs (its server's memory and CPU need --server-pid)")
    parser.add_argument("--server-pid", type=int, help="with --url: the Streamlit process, for its figures")
    parser.add_argument("--sessions", type=int, default=30)
    parser.add_argument(
        "--pages",
        type=lambda text: [p.strip() for p in text.split(",") if p.strip()],
        default=list(DEFAULT_PAGES),
        help="url paths, in order (default: %(default)s)",
    )
    parser.add_argument("--slider-page", default="rope", help="the lesson whose first slider moves ('' for none)")
    parser.add_argument("--timeout", type=float, default=180.0, help="seconds one run may take")
    parser.add_argument("--no-alone", action="store_true", help="skip the cold and alone measurements")
    parser.add_argument("--soak", action="store_true")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--settle", type=float, default=3.0, help="seconds after a round before measuring")
    parser.add_argument(
        "--release-wait",
        type=float,
        default=130.0,
        help="soak: seconds to wait for closed sessions to be let go (0: skip)",
    )
    parser.add_argument("--browser", action="store_true", help="Chromium through Playwright (small N)")
    parser.add_argument(
        "--server-option",
        action="append",
        default=[],
        help="extra 'streamlit run' option for the started app, e.g. --runner.postScriptGC=false",
    )
    parser.add_argument(
        "--processes",
        type=int,
        default=0,
        help="start that many app processes behind HAProxy (deploy/start-class.sh) instead of one; "
        "needs --db-url or POSLAB_DB_URL (PostgreSQL)",
    )
    parser.add_argument(
        "--db-url",
        default=os.environ.get("POSLAB_DB_URL", ""),
        help="with --processes: the PostgreSQL store they share",
    )
    parser.add_argument(
        "--app-dir",
        type=Path,
        default=ROOT,
        help="the checkout whose app.py to start (default: this one), e.g. an older commit's export",
    )
    parser.add_argument("--env", action="append", default=[], help="KEY=VALUE for the started app")
    parser.add_argument(
        "--profile",
        type=Path,
        help="record the Streamlit process with py-spy during the "
        "sessions-at-once phase (raw format) and print its top entries",
    )
    parser.add_argument("--json", type=Path, help="write the figures here as JSON")
    parser.add_argument(
        "--roster",
        action="store_true",
        help="sign in as a roster class does: a roster of the "
        "run's students, each session signed in with its own link (benchmarks/roster_sessions.py)",
    )
    args = parser.parse_args(argv)
    if args.roster and args.url:
        parser.error("--roster starts its own app (or processes) with the run's roster: leave out --url")
    if args.slider_page and args.slider_page not in args.pages:
        args.slider_page = None
    return args


def start_server(args: argparse.Namespace) -> AppServer | ClassServer | None:
    if args.url:
        return None
    if args.roster:  # every app process loads it when it starts
        os.environ["POSLAB_ROSTER"] = str(roster_sessions.write_class_roster(args))
    if args.processes:
        if not args.db_url.startswith("postgresql"):
            raise SystemExit("--processes needs a PostgreSQL store: --db-url or POSLAB_DB_URL=postgresql+psycopg://...")
        return ClassServer.start(args.app_dir, args.processes, args.db_url)
    return AppServer.start(args.app_dir, args.server_option, dict(item.split("=", 1) for item in args.env))


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    server = start_server(args)
    base_url = args.url or server.url
    pid = args.server_pid or (server.process.pid if server else None)
    args.cookies = roster_sessions.sign_in_run(args, server, base_url) if args.roster else None
    watch = ServerWatch(pid, base_url)
    shape = f"{args.processes} app processes behind HAProxy" if args.processes else "one app process"
    print(f"app at {base_url} ({shape}; pid {pid}); {watch.machine_note()}")
    try:
        if args.browser:
            from benchmarks.browser_sessions import run_browsers

            report = run_browsers(base_url, args, watch)
        elif args.soak:
            report = asyncio.run(soak(args, base_url, watch))
        else:
            report = asyncio.run(main_run(args, base_url, watch))
    finally:
        if server is not None:
            server.stop()
    if args.json:
        args.json.write_text(json.dumps(report, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
