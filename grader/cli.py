"""The instructor's command line: ``python -m grader grade | validate | release``.

Exit codes: 0 when the command did its job (whatever the scores), 2 for bad usage, 3 when the
grader itself failed (no worker could start, a worker broke), 1 when ``validate`` finds the suite
too weak (the reference not at full marks, or a mutant not losing points).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import queue
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable, Sequence, TextIO

from grader import mutation
from grader.api import Grader, Submission, load_submission, submission_id_for
from grader.cluster import load_suite
from grader.results import GRADEBOOK_HEADER, SubmissionResult
from grader.sandbox import GraderFault
from grader.settings import GraderSettings
from poslab.exercises import EXERCISE_IDS

EXIT_OK, EXIT_WEAK_SUITE, EXIT_USAGE, EXIT_FAULT = 0, 1, 2, 3
SUITE: str | None = None  # "module:attribute" of a stand-in suite for `grade` (tests); None: the hidden suite
DEFAULT_TIMEOUT = GraderSettings().timeout


def atomic_write(path: Path, text: str) -> None:
    """Write via a temporary file in the same folder and ``os.replace``: never half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.chmod(temporary, 0o644)  # mkstemp makes it private; results are meant to be read
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


# ---------------------------------------------------------------- progress and tables


class ProgressBar:
    """A plain progress bar on stderr: redrawn in place on a terminal, one line per step otherwise."""

    def __init__(self, total: int, stream: TextIO | None = None, width: int = 30) -> None:
        self.total, self.done, self.stream, self.width = total, 0, stream or sys.stderr, width
        self.started = time.monotonic()
        self.lock = threading.Lock()
        self.tty = self.stream.isatty()

    def step(self, label: str) -> None:
        with self.lock:
            self.done += 1
            filled = self.width * self.done // max(self.total, 1)
            elapsed = time.monotonic() - self.started
            line = (f"[{'#' * filled}{'.' * (self.width - filled)}] {self.done}/{self.total} "
                    f"{elapsed:5.1f}s  {label}")
            if self.tty:
                self.stream.write("\r" + line[:120].ljust(120) + ("\n" if self.done == self.total else ""))
            else:
                self.stream.write(line + "\n")
            self.stream.flush()


def format_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows)]
    lines = ["  ".join(str(cell).ljust(width) for cell, width in zip(row, widths)).rstrip()
             for row in [header, ["-" * width for width in widths], *rows]]
    return "\n".join(lines)


def gradebook_csv(results: Sequence[SubmissionResult]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(GRADEBOOK_HEADER)
    for result in results:
        writer.writerow(result.gradebook_row())
    return buffer.getvalue()


# ---------------------------------------------------------------- grading many submissions


def grade_in_parallel(items: Sequence[Submission], jobs: int, make_grader: Callable[[], Grader],
                      on_result: Callable[[SubmissionResult], None]) -> None:
    """Grade ``items`` with ``jobs`` threads, each owning one Grader (one worker process).

    The judging threads share this process (the hidden tests run here); each worker and its
    children are separate processes. The first grader fault stops the run and is re-raised.
    """
    pending: queue.Queue[Submission] = queue.Queue()
    for item in items:
        pending.put(item)
    faults: list[BaseException] = []

    def run() -> None:
        try:
            with make_grader() as grading:
                while not faults:
                    try:
                        item = pending.get_nowait()
                    except queue.Empty:
                        return
                    on_result(grading.grade(item))
        except BaseException as error:  # noqa: BLE001 - handed to the main thread
            faults.append(error)

    threads = [threading.Thread(target=run, name=f"grader-{index}", daemon=True) for index in range(max(1, min(jobs, len(items))))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if faults:
        raise faults[0]


def grade_with_service(items: Sequence[Submission], settings: GraderSettings,
                       on_result: Callable[[SubmissionResult], None], *, scheduler: str | None, judges: int) -> None:
    """Grade ``items`` on the grading service: ``judges`` warm judges here, or the cluster at ``scheduler``.

    Nothing goes to the store; the first grader fault stops the run and is raised.
    """
    if not items:
        return
    from grader.service import GradingService, as_completed

    with GradingService(scheduler, workers=judges, settings=settings, suite=SUITE, warm_modes=("hidden",)) as service:
        jobs = [service.submit_submission(item) for item in items]
        for job in as_completed(jobs):
            on_result(job.result())


def previous_result(path: Path) -> SubmissionResult | None:
    try:
        return SubmissionResult.from_gradescope(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None  # absent or not ours: grade again


def command_grade(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    ids: dict[str, Path] = {}
    for raw in args.paths:
        path = Path(raw)
        if not path.exists():
            parser.error(f"{raw} does not exist")
        submission_id = submission_id_for(path)
        if submission_id in ids:
            parser.error(f"{raw} and {ids[submission_id]} would both be graded as {submission_id!r}")
        ids[submission_id] = path
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    if args.timeout is not None and args.timeout <= 0:
        parser.error("--timeout must be positive")
    if args.scheduler is not None and "://" not in args.scheduler:
        parser.error(f"--scheduler must be an address like tcp://host:8786, got {args.scheduler!r}")
    settings = GraderSettings.from_env().with_changes(timeout=args.timeout)
    out = Path(args.out)
    suite_hash = Grader(settings, suite=load_suite(SUITE)).suite_hash()
    submissions = [load_submission(path, submission_id, settings) for submission_id, path in ids.items()]
    results: dict[str, SubmissionResult] = {}
    todo = []
    for submission in submissions:
        old = previous_result(out / submission.submission_id / "results.json")
        if (old is not None and old.submission_hash == submission.content_hash
                and old.suite_hash == suite_hash and not old.public_tests_only):
            results[submission.submission_id] = old
        else:
            todo.append(submission)
    if results:
        print(f"{len(results)} submission(s) unchanged since the last run: kept their results.", file=sys.stderr)
    progress = ProgressBar(len(todo))
    lock = threading.Lock()

    def keep(result: SubmissionResult) -> None:
        atomic_write(out / result.submission_id / "results.json",
                     json.dumps(result.to_gradescope(), indent=2) + "\n")
        with lock:
            results[result.submission_id] = result
        progress.step(f"{result.submission_id}: {result.score:g}/{result.max_score:g}")

    try:
        # No more judges than submissions to grade: each costs a torch start-up.
        grade_with_service(todo, settings, keep, scheduler=args.scheduler, judges=max(1, min(args.jobs, len(todo))))
    except GraderFault as fault:
        print(f"grader fault: {fault}", file=sys.stderr)
        return EXIT_FAULT
    ordered = [results[submission_id] for submission_id in ids]
    atomic_write(out / "gradebook.csv", gradebook_csv(ordered))
    rows = [result.gradebook_row() + [result.isolation] for result in ordered]
    print(format_table([*GRADEBOOK_HEADER, "isolation"], rows))
    print(f"\nwrote {out / 'gradebook.csv'} and {len(ordered)} results.json")
    return EXIT_OK


# ---------------------------------------------------------------- validate


def command_validate(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from grader.mutants import PatchError, list_mutants, reference_source

    settings = GraderSettings.from_env().with_changes(timeout=args.timeout)
    try:
        mutants = {mutant.name: mutant for mutant in list_mutants()}
    except PatchError as error:
        print(f"grader fault: the bundled mutants no longer fit the reference: {error}", file=sys.stderr)
        return EXIT_FAULT
    submissions = [load_submission({"reference.py": reference_source()}, "reference", settings)]
    submissions += [load_submission({f"{name}.py": mutant.source}, name, settings) for name, mutant in mutants.items()]
    results: dict[str, SubmissionResult] = {}
    progress = ProgressBar(len(submissions))

    def keep(result: SubmissionResult) -> None:
        results[result.submission_id] = result
        progress.step(result.submission_id)

    try:
        grade_in_parallel(submissions, args.jobs, lambda: Grader(settings), keep)
    except GraderFault as fault:
        print(f"grader fault: {fault}", file=sys.stderr)
        return EXIT_FAULT
    rows, weak = [], 0
    reference = results["reference"]
    ok = reference.status == "graded" and reference.max_score > 0 and reference.score == reference.max_score
    weak += not ok
    rows.append(["reference", "all", f"{reference.score:g}/{reference.max_score:g}", "-",
                 "full marks" if ok else "NOT FULL MARKS"])
    for name, mutant in mutants.items():
        result = results[name]
        own = result.exercises.get(mutant.exercise)
        # Caught means its own exercise lost points while it imported and ran: a mutant that fails
        # to import loses everything and would otherwise hide a suite that catches nothing.
        caught = result.status == "graded" and own is not None and own.score < own.max_score
        weak += not caught
        rows.append([name, mutant.exercise, f"{result.score:g}/{result.max_score:g}",
                     f"{own.score:g}/{own.max_score:g}" if own else "-", "caught" if caught else "NOT CAUGHT"])
    print(format_table(["submission", "exercise", "total", "its exercise", "verdict"], rows))
    print(f"\n{len(mutants)} mutants, {weak} problem(s)")
    return EXIT_OK if weak == 0 else EXIT_WEAK_SUITE


# ---------------------------------------------------------------- release


def command_release(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from grader.release import ReleaseError, build_bundle

    try:
        copied = build_bundle(Path(args.dir))
    except ReleaseError as error:
        parser.error(str(error))
    print(f"wrote a student bundle of {len(copied)} files to {args.dir}")
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m grader", description="Position Lab's autograder.")
    commands = parser.add_subparsers(dest="command", required=True)
    grade = commands.add_parser("grade", help="grade submissions with the hidden suite",
                                description="Grade submissions (a .py file, or a folder of .py files; "
                                            "test_*.py and conftest.py are ignored).")
    grade.add_argument("paths", nargs="+", metavar="PATH",
                       help="a submission; its id is the file's stem or the folder's name "
                            "(for a folder named 'exercises', its parent's name)")
    grade.add_argument("--out", required=True, metavar="DIR", help="where gradebook.csv and <id>/results.json go")
    grade.add_argument("--jobs", type=int, default=1, metavar="N",
                       help="warm judges started on this machine, submissions graded at once (default 1)")
    grade.add_argument("--scheduler", default=None, metavar="tcp://HOST:8786",
                       help="grade on this Dask cluster (workers: dask worker ADDRESS --nthreads 1 "
                            "--preload grader.cluster) instead of judges started here")
    grade.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                       help=f"wall-clock limit per exercise (default {DEFAULT_TIMEOUT:g}, "
                            f"or POSLAB_GRADER_TIMEOUT)")
    validate = commands.add_parser("validate", help="check the reference scores full marks and every mutant loses points")
    validate.add_argument("--jobs", type=int, default=2, metavar="N", help="submissions graded at once (default 2)")
    validate.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                          help=f"wall-clock limit per exercise (default {DEFAULT_TIMEOUT:g})")
    release = commands.add_parser("release", help="write a student bundle (no hidden tests, no mutants)")
    release.add_argument("dir", metavar="DIR", help="an empty or new folder")
    from grader.gradescope.package import add_gradescope_command

    add_gradescope_command(commands)
    mutation.add_arguments(commands.add_parser("mutation", help="score the hidden suite on mutants of the reference"))
    return parser


def command_gradescope(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from grader.gradescope.package import command_gradescope as write_package

    return write_package(args, parser)


COMMANDS = {"grade": command_grade, "validate": command_validate, "release": command_release,
            "gradescope": command_gradescope, "mutation": lambda args, parser: mutation.run(args)}


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return COMMANDS[args.command](args, parser)
    except GraderFault as fault:
        print(f"grader fault: {fault}", file=sys.stderr)
        return EXIT_FAULT
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
