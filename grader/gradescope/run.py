"""What ``run_autograder`` runs for each submission on Gradescope: ``python3 -m grader.gradescope.run``.

Paths hang off ``GRADESCOPE_ROOT`` (default ``/autograder``): the package in ``source/``, the
submission in ``submission/`` (one ``.py`` file, several, or an ``exercises/`` folder), and
``results/results.json``, which this judge writes after the worker and every child are gone.

Run as root (Gradescope does), it first takes ``source/`` (the grader and the hidden suite) and
``results/`` away from every other uid: owned by root, mode 0700, files 0600. A child runs
under a uid of its own (``POSLAB_GRADER_UID_BASE`` and up), so even the fallback isolation,
which does not hide the file system, cannot read the suite or write the results there. Run as
another user it cannot do that (nor drop the child's uid), and ``extra_data`` says so.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from grader.api import Grader, load_submission
from grader.gradescope.assignment import chosen_assignment, counted, with_assignment
from grader.results import SubmissionResult
from grader.settings import GraderSettings
from grader.vocabulary import Visibility
from poslab.exercises import EXERCISES
from poslab.vocabulary import TestStatus

DEFAULT_ROOT = "/autograder"
MAX_RESULTS_BYTES = 1_000_000  # Gradescope refuses larger results files
EXIT_FAULT = 3
PROBE_HOSTS = (("1.1.1.1", 443), ("8.8.8.8", 53))
# Graded in a child of the same worker, after the submission: reports what a child can do here.
PROBE_SOURCE = f"""
import os, socket, torch

def attention(q, k, v, bias=None):
    reachable = 0.0
    for host in {PROBE_HOSTS!r}:  # numeric: resolving a name may import codecs the child cannot read
        probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        probe.settimeout(1.5)
        try:
            probe.connect(host)
            reachable = 1.0
            break
        except OSError:
            pass
        finally:
            probe.close()
    return torch.tensor([reachable, float(os.getuid())], dtype=torch.float64), torch.zeros(1)
"""


@dataclass(frozen=True)
class GradescopePaths:
    root: Path

    @classmethod
    def from_env(cls) -> GradescopePaths:
        return cls(Path(os.environ.get("GRADESCOPE_ROOT", "").strip() or DEFAULT_ROOT))

    @property
    def source(self) -> Path:
        return self.root / "source"

    @property
    def submission(self) -> Path:
        return self.root / "submission"

    @property
    def results(self) -> Path:
        return self.root / "results"

    @property
    def results_file(self) -> Path:
        return self.results / "results.json"

    @property
    def hidden_suite(self) -> Path:
        return self.source / "grader" / "suite"

    def submitted(self) -> Path:
        """The folder to grade: ``submission/``, or its ``exercises/`` folder if the .py files are there."""
        nested = self.submission / "exercises"
        if nested.is_dir() and not any(self.submission.glob("*.py")):
            return nested
        return self.submission


# ---------------------------------------------------------------- closing the fallback's gap


def lock_down(paths: GradescopePaths, euid: int | None = None) -> dict:
    """As root: the package and the results folder readable and writable by root alone."""
    euid = os.geteuid() if euid is None else euid
    if euid != 0:
        return {
            "performed": False,
            "reason": f"run_autograder ran as uid {euid}, not root: the source and "
            f"results folders were left as they were, and the child could not get a uid of its own",
        }
    paths.results.mkdir(parents=True, exist_ok=True)
    locked = []
    for top in (paths.source, paths.hidden_suite, paths.results):
        for path in [top, *top.rglob("*")]:
            if path.is_symlink():
                continue
            os.chown(path, 0, 0)
            os.chmod(path, 0o700 if path.is_dir() else 0o600)
        locked.append(str(top))
    return {"performed": True, "paths": locked, "mode": "owner root, folders 0700, files 0600"}


def closed_to_others(path: Path) -> bool:
    """Neither group nor others may enter, read or write ``path`` (a root-owned folder)."""
    info = path.stat()
    return info.st_uid == 0 and not info.st_mode & (stat.S_IRWXG | stat.S_IRWXO)


# ---------------------------------------------------------------- what a child can do here


@dataclass
class ChildReport:
    network_reachable: bool | None
    uid: int | None


class NetworkProbe:
    """A one-case suite: the probe's ``attention`` says if a child reached the network, and its uid."""

    def __init__(self) -> None:
        self.report = ChildReport(None, None)

    @staticmethod
    def collect():
        return (ProbeCase(),)

    def run_case(self, case, student):
        import torch

        try:
            reading, _ = student.attention(torch.zeros(1, 1, 1), torch.zeros(1, 1, 1), torch.zeros(1, 1, 1))
            self.report = ChildReport(bool(reading[0] > 0.5), int(reading[1]))
        except Exception:  # noqa: BLE001 - a probe that could not run reports nothing
            pass
        return case

    @staticmethod
    def suite_hash() -> str:
        return "network-probe"


@dataclass(frozen=True)
class ProbeCase:
    """Also serves as its own outcome: the probe's result is read from ``NetworkProbe.report``."""

    name: str = "probe"
    exercise: str = "attention"
    score: float = 0.0
    max_score: float = 0.0
    status: TestStatus = TestStatus.PASSED
    output: str = ""
    visibility: Visibility = Visibility.HIDDEN
    family: str = "probe"


def probe_child(grading: Grader, settings: GraderSettings) -> ChildReport:
    probe = NetworkProbe()
    prober = Grader(settings, suite=probe)
    prober.worker = grading.worker  # the same worker and isolation the submission had
    try:
        prober.grade(load_submission({"probe.py": PROBE_SOURCE}, "network-probe", settings), exercises=["attention"])
    finally:
        if prober.worker is not grading.worker:
            prober.close()  # it had to start a worker of its own
        prober.worker = None  # the shared one is closed by its owner
    return probe.report


# ---------------------------------------------------------------- results.json


def summary(result: SubmissionResult, isolation_note: str) -> str:
    """One paragraph: the total, each exercise, import problems, and how it was run."""
    scores = result.exercises
    parts = ", ".join(
        f"{exercise.id} {scores[exercise.id].score:g}/{scores[exercise.id].max_score:g}"
        for exercise in EXERCISES
        if exercise.id in scores and scores[exercise.id].max_score
    )
    text = f"Score {result.score:g}/{result.max_score:g} on the hidden suite ({parts})."
    if result.messages:
        text += " " + " ".join(message.rstrip(".") + "." for message in result.messages)
    if result.accounting_lines():  # where the hidden points went, per property family
        text += " " + " ".join(result.accounting_lines())
    return f"{text} {isolation_note}"


def isolation_note(isolation: str, child: ChildReport) -> str:
    network = {
        True: "could reach the network",
        False: "could not reach the network",
        None: "could not be probed for network access",
    }[child.network_reachable]
    return f"Your code ran in a sandbox ({isolation}) and {network}."


def results_json(
    result: SubmissionResult, settings: GraderSettings, lockdown: dict, child: ChildReport, judge_uid: int
) -> str:
    data = result.to_gradescope()
    data["output"] = summary(result, isolation_note(result.isolation, child))
    data["extra_data"].update(
        {
            "gradescope": True,
            "timeout": settings.timeout,
            "isolation_setting": settings.isolation,
            "network_reachable_from_child": child.network_reachable,
            "child_uid": child.uid,
            "child_uid_dropped": child.uid is not None and child.uid != judge_uid,
            "lockdown": lockdown,
        }
    )
    text = json.dumps(data, indent=1)
    limit = 2000
    while len(text.encode()) > MAX_RESULTS_BYTES and limit > 50:
        for test in data["tests"]:
            test["output"] = test["output"][:limit]
        data["extra_data"]["messages"] = [message[:limit] for message in data["extra_data"]["messages"]]
        text, limit = json.dumps(data), limit // 2
    return text + "\n"


def write_results(paths: GradescopePaths, text: str) -> None:
    paths.results.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=paths.results, prefix=".results.", suffix=".tmp")
    with os.fdopen(handle, "w", encoding="utf-8") as stream:
        stream.write(text)
    os.chmod(temporary, 0o644)
    os.replace(temporary, paths.results_file)  # replaces anything else that was there


def submission_id(paths: GradescopePaths, unknown: str = "submission") -> str:
    """Gradescope's id of the submission (from its metadata), else ``unknown``."""
    try:
        metadata = json.loads((paths.root / "submission_metadata.json").read_text(encoding="utf-8"))
        return str(metadata.get("id") or unknown)
    except (OSError, ValueError, AttributeError):
        return unknown


def main() -> int:
    paths = GradescopePaths.from_env()
    settings = GraderSettings.from_env()
    paths.results_file.unlink(missing_ok=True)  # only what this run writes may count
    lockdown = lock_down(paths)
    submission = load_submission(paths.submitted(), submission_id(paths), settings)
    assigned = chosen_assignment(paths)
    try:
        with Grader(settings) as grading:
            result = grading.grade(submission, assigned[0].exercises if assigned else None)
            child = probe_child(grading, settings)
    except Exception as fault:  # noqa: BLE001 - the grader's own failure: no results, so Gradescope says it failed
        paths.results_file.unlink(missing_ok=True)
        print(f"grader fault (not the submission's doing): {type(fault).__name__}: {fault}", file=sys.stderr)
        return EXIT_FAULT
    # The worker and every child are gone now (the Grader closed them): only the judge writes.
    paths.results_file.unlink(missing_ok=True)
    text = results_json(result, settings, lockdown, child, os.geteuid())
    if assigned:
        text = with_assignment(text, counted(paths, result, *assigned))
    write_results(paths, text)
    print(f"graded {submission.submission_id}: {result.score:g}/{result.max_score:g} ({result.isolation})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
