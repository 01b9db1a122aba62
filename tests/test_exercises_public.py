"""The exercises a student receives: stubs, their spec and hints, and the public tests.

The public tests run in a subprocess, as a student runs them (``pytest exercises/``): they pass
on the reference (``--impl=reference``) and every one of them fails on the untouched stubs with
"not implemented yet".
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import poslab.encodings
from poslab.exercises import EXERCISES, HINT_TIERS, hints, spec

ROOT = Path(__file__).resolve().parent.parent
EXERCISES_DIR = ROOT / "exercises"


def load_stub(filename: str):
    spec_ = importlib.util.spec_from_file_location(f"stub_{Path(filename).stem}", EXERCISES_DIR / filename)
    module = importlib.util.module_from_spec(spec_)
    spec_.loader.exec_module(module)
    return module


PUBLIC_RUNS = (("--impl=reference",), ())  # on the reference, and on the untouched stubs
# One interpreter imports torch and pytest once, then forks a child per run: each child is
# `pytest exercises ...` as a student runs it (pytest.main with the same arguments, its output on
# a file of its own, its exit code the child's), as fresh as a new process for what it imports.
RUN = """
import json, os, sys
import pytest, torch
outcomes = []
for index, options in enumerate(json.loads(sys.argv[1])):
    with open(sys.argv[2] + f".{index}", "w") as out:
        pid = os.fork()
        if pid == 0:
            os.dup2(out.fileno(), 1)
            os.dup2(out.fileno(), 2)
            code = 3
            try:
                code = int(pytest.main(["exercises", "-n", "0", "-p", "no:cacheprovider", "-q", "-rf", *options]))
            finally:
                sys.stdout.flush()
                os._exit(code)
    outcomes.append(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
print(json.dumps(outcomes))
"""


def _public_runs(tmp: Path) -> dict[tuple[str, ...], subprocess.CompletedProcess]:
    env = {key: value for key, value in os.environ.items() if key != "POSLAB_IMPL"}
    env["COLUMNS"] = "400"  # the short summary keeps each failure's whole first line
    done = subprocess.run(
        [sys.executable, "-c", RUN, json.dumps(PUBLIC_RUNS), str(tmp / "public")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    codes = json.loads(done.stdout.splitlines()[-1])
    return {
        options: subprocess.CompletedProcess(options, code, (tmp / f"public.{index}").read_text(), "")
        for index, (options, code) in enumerate(zip(PUBLIC_RUNS, codes))
    }


@pytest.fixture(scope="module")
def public_runs(tmp_path_factory) -> dict[tuple[str, ...], subprocess.CompletedProcess]:
    return _public_runs(tmp_path_factory.mktemp("public"))


def counts(output: str) -> dict[str, int]:
    return {word: int(number) for number, word in re.findall(r"(\d+) (passed|failed|error)", output)}


def test_public_tests_pass_on_the_reference(public_runs):
    result = public_runs[("--impl=reference",)]
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert counts(result.stdout).get("passed", 0) >= 15 and "failed" not in counts(result.stdout)


def test_public_tests_fail_on_the_stubs_saying_not_implemented(public_runs):
    result = public_runs[()]
    found = counts(result.stdout)
    assert result.returncode == 1 and found.get("failed", 0) >= 15 and "passed" not in found, result.stdout[-3000:]
    failure_lines = [line for line in result.stdout.splitlines() if line.startswith("FAILED ")]
    assert len(failure_lines) == found["failed"]
    assert all("not implemented yet" in line for line in failure_lines), failure_lines
    assert "Traceback" not in result.stdout  # one clear line per unfinished stub


def test_every_exercise_has_public_tests():
    for exercise in EXERCISES:
        assert (EXERCISES_DIR / f"test_{exercise.filename}").is_file(), exercise.id


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.id)
def test_stub_docstring_is_the_official_spec(exercise):
    stub = load_stub(exercise.filename)
    assert " ".join(stub.__doc__.split()) == " ".join(spec(exercise.id).split())


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.id)
def test_stub_signatures_match_the_reference(exercise):
    stub = load_stub(exercise.filename)
    for name in exercise.names:
        ours, reference = getattr(stub, name), getattr(poslab.encodings, name)
        if inspect.isclass(reference):
            for method in ("__init__", "forward"):
                assert inspect.signature(getattr(ours, method)) == inspect.signature(getattr(reference, method))
        else:
            assert inspect.signature(ours) == inspect.signature(reference), name


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.id)
def test_stubs_raise_not_implemented(exercise):
    stub = load_stub(exercise.filename)
    calls = {
        "attention": lambda f: f(None, None, None),
        "sinusoidal_encoding": lambda f: f(4, 8),
        "LearnedPositionalEmbedding": lambda f: f(4, 8),
        "apply_rope": lambda f: f(None),
        "alibi_slopes": lambda f: f(8),
        "alibi_bias": lambda f: f(8, 4),
        "t5_relative_bucket": lambda f: f(None),
        "t5_relative_bias": lambda f: f(None, 4, 4),
        "decode": lambda f: f(None, None, None, 1),
        "scaled_inv_freq": lambda f: f(8),
    }
    for name in exercise.names:
        with pytest.raises(NotImplementedError, match="not implemented yet"):
            calls[name](getattr(stub, name))


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.id)
def test_spec_states_shapes_and_conventions(exercise):
    text = spec(exercise.id)
    assert all(name.split(".")[-1] in text for name in exercise.names)
    assert any(
        shape in text
        for shape in ("[B, H, T", "[B, T", "[n_heads, T, T]", "[seq_len, d_model]", "[n_heads, Tq, Tk]", "[D/2]")
    )
    if exercise.id == "t5":
        assert "key position - query position" in text and "LongTensor" in text
    if exercise.id == "sinusoidal":
        assert "interleaved" in text and "concatenated" in text
    if exercise.id == "rope":
        assert "(x[2i], x[2i+1])" in text and "(x[i], x[i + D/2])" in text
    if exercise.id == "decode":
        assert all(
            word in text
            for word in (
                '"interleaved"',
                '"half"',
                '"rotated"',
                '"raw"',
                "position_ids",
                "attention_mask",
                "window",
                "cached_keys",
                "[B, H, T, D]",
            )
        )


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.id)
def test_hints_come_in_tier_order_without_the_solution(exercise):
    tiers = hints(exercise.id)
    assert len(tiers) == len(HINT_TIERS) == 3
    assert all(tier.strip() for tier in tiers) and len(set(tiers)) == 3
    assert "..." in tiers[-1]  # the skeleton leaves the work to the student


def test_unknown_exercise_ids_are_refused():
    with pytest.raises(KeyError):
        spec("positional-magic")
    with pytest.raises(KeyError):
        hints("positional-magic")
