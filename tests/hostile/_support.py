"""Helpers for the grader's tests: a correct one-file submission built from the reference code,
a small stand-in suite, and the bubblewrap requirement.

Not a submission itself (the leading underscore keeps it out of the hostile list).
"""

from __future__ import annotations

import importlib
import inspect
import os
import re
from collections.abc import Callable
from dataclasses import dataclass

import pytest
import torch

import poslab.encodings as reference
from grader.results import TestOutcome
from grader.settings import GraderSettings

_MODULES = tuple(
    importlib.import_module(f"poslab.encodings.{name}")
    for name in ("_checks", "attention", "sinusoidal", "learned", "rope", "alibi")
)


def reference_submission() -> str:
    """The reference encodings as one standalone file (the project's imports removed)."""
    parts = [
        "from __future__ import annotations\nimport math\nfrom typing import Literal\nimport torch\nfrom torch import nn\n"
    ]
    for module in _MODULES:
        source = inspect.getsource(module)
        source = re.sub(r"^from __future__ import annotations\n", "", source, flags=re.M)
        source = re.sub(r"^from poslab[^\n]*\n", "", source, flags=re.M)
        parts.append(source)
    return "\n\n".join(parts)


# ---------------------------------------------------------------- a small, fast stand-in suite


@dataclass(frozen=True)
class ProbeCase:
    name: str
    exercise: str
    points: float
    visibility: str
    family: str
    check: Callable


def _close(actual, expected) -> bool:
    # Compared here, in the judging process, with the judge's own torch.
    return (
        isinstance(actual, torch.Tensor)
        and actual.shape == expected.shape
        and bool(torch.allclose(actual.double(), expected.double(), atol=1e-5, equal_nan=True))
    )


def _check_attention(student):
    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 5, 8, generator=gen) for _ in range(3))
    out, weights = student.attention(q, k, v)
    expected_out, expected_weights = reference.attention(q, k, v)
    assert _close(out, expected_out) and _close(weights, expected_weights), "attention values differ"


def _check_sinusoidal(student):
    assert _close(student.sinusoidal_encoding(16, 8), reference.sinusoidal_encoding(16, 8)), "table differs"


def _check_learned(student):
    table = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    x = torch.ones(2, 3, 6)
    assert _close(student.learned_forward(4, 6, x, table=table), x + table[:3]), "forward differs"


def _check_rope(student):
    x = torch.randn(3, 6, 8, generator=torch.Generator().manual_seed(1))
    assert _close(student.apply_rope(x), reference.apply_rope(x)), "rope differs"


def _check_alibi(student):
    assert _close(student.alibi_slopes(8), reference.alibi_slopes(8)), "slopes differ"
    assert _close(student.alibi_bias(4, 5), reference.alibi_bias(4, 5)), "bias differs"


class ProbeSuite:
    """One quick value check per exercise, expected values from the reference in this process.

    Same interface as ``grader.suite`` (collect, run_case returning a ``TestOutcome``, suite_hash), so the infrastructure can
    be tested without depending on the hidden suite's size or speed.
    """

    CASES = (
        ProbeCase("attention: values", "attention", 2.0, "visible", "values", _check_attention),
        ProbeCase("sinusoidal: values", "sinusoidal", 2.0, "visible", "values", _check_sinusoidal),
        ProbeCase("learned: forward", "learned", 2.0, "hidden", "values", _check_learned),
        ProbeCase("rope: values", "rope", 2.0, "visible", "values", _check_rope),
        ProbeCase("alibi: values", "alibi", 2.0, "visible", "values", _check_alibi),
    )

    @staticmethod
    def collect():
        return ProbeSuite.CASES

    @staticmethod
    def run_case(case, student):
        try:
            case.check(student)
        except Exception as error:  # noqa: BLE001 - as grader.suite.run_case: every failure is an outcome
            reason = getattr(error, "reason", None) or str(error)
            return TestOutcome(
                case.name,
                case.exercise,
                0.0,
                case.points,
                "failed",
                f"{type(error).__name__}: {reason}",
                case.visibility,
                case.family,
            )
        return TestOutcome(
            case.name, case.exercise, case.points, case.points, "passed", "ok", case.visibility, case.family
        )

    @staticmethod
    def suite_hash():
        return "probe-suite-1"


PROBE_MAX = sum(case.points for case in ProbeSuite.CASES)


def require_bwrap() -> None:
    """Skip (with the reason) where bubblewrap cannot run; under CI=true, fail instead."""
    from grader.sandbox import bwrap_problem

    problem = bwrap_problem(GraderSettings())
    if problem is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"bubblewrap is required under CI: {problem}")
        pytest.skip(f"bubblewrap is unusable here: {problem}")


# The grader gives a judge's children uids from uid_base to uid_base + 2**30 - 1: a block of 256 for
# each (judge pid % 65536, worker slot of 64), see grader/sandbox/worker_process.py. The hostile run
# takes the span above the default one, which every other test's graders use.
SANDBOX_UID_SPAN = 1 << 30
SANDBOX_SETTINGS = GraderSettings(timeout=3.0)  # the sandbox tests' worker (``worker`` in tests/conftest.py)
HOSTILE_UID_BASE = GraderSettings().uid_base + SANDBOX_UID_SPAN


def live_processes(uids: range) -> dict[int, tuple[int, str]]:
    """pid -> (real uid, name) of the live processes on this machine whose real uid is in ``uids``."""
    found = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/status", encoding="ascii", errors="replace") as handle:
                fields = dict(line.split(":", 1) for line in handle.read().splitlines() if ":" in line)
        except OSError:
            continue
        uid = int(fields["Uid"].split()[0])
        if uid in uids and fields.get("State", "").strip()[:1] not in ("Z", "X"):
            found[int(entry)] = (uid, fields.get("Name", "").strip())
    return found


def sandbox_uids_alive(uid_base: int) -> list[str]:
    """Processes on this machine whose real uid is one that a grader with this ``uid_base`` gives its
    children (``uid_base`` to ``uid_base + SANDBOX_UID_SPAN - 1``)."""
    alive = live_processes(range(uid_base, uid_base + SANDBOX_UID_SPAN))
    return [f"{pid} uid={uid} {name}" for pid, (uid, name) in alive.items()]
