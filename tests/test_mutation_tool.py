"""grader/mutation: the cosmic-ray adapter, the recorded equivalents, the answer digests, and the
command on one exercise end to end (sandboxed, like any grading)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch

from grader.mutation.equivalents import EquivalentsError, claim_for, load_equivalents, load_file
from grader.mutation.generate import generate
from grader.mutation.recording import changed_tests, differences, digest_of
from poslab.config import PROJECT_ROOT
from poslab.exercises import EXERCISE_IDS

SOURCE = """from __future__ import annotations

import torch


def alibi_slopes(n_heads: int) -> torch.Tensor:
    if n_heads < 1:
        raise ValueError(f"n_heads must be >= 1, got {n_heads - 0}")
    return torch.tensor([2.0 ** (-8.0 * (h + 1) / n_heads) for h in range(n_heads)])


def alibi_bias(n_heads: int, seq_len: int) -> torch.Tensor:
    return alibi_slopes(n_heads)[:, None, None] * torch.zeros(seq_len, seq_len)


def unused(x: int = 3) -> int:
    return x + 1
"""


def test_mutants_are_whole_sources_of_reached_code_without_annotations_or_messages():
    mutants = generate(SOURCE)
    assert mutants and all(m.source != SOURCE for m in mutants)
    assert {m.function for m in mutants} <= {"alibi_slopes", "alibi_bias"}  # `unused` reaches no exercise
    assert all(m.exercises == ("alibi",) for m in mutants)
    assert not any("n_heads - 0" not in m.source for m in mutants)  # the f-string is never mutated
    assert not any("int -" in m.mutated or "Tensor -" in m.mutated for m in mutants)  # nor an annotation
    flipped = [m for m in mutants if m.original == "if n_heads < 1:" and m.mutated == "if n_heads <= 1:"]
    assert len(flipped) == 1 and "if n_heads <= 1:" in flipped[0].source
    compile(flipped[0].source, "<mutant>", "exec")
    assert len({m.source for m in mutants}) == len(mutants)


def write(tmp_path, text: str):
    path = tmp_path / "equivalents.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_equivalents_are_parsed_matched_and_refused_when_malformed(tmp_path):
    entry = "[[equivalent]]\nfunction = 'f'\noriginal = 'a  =  1'\nmutated = '*'\nreason = 'never runs'\n"
    exact = entry.replace("mutated = '*'", "mutated = 'a = 2'").replace("never runs", "exact")
    claims = load_file(write(tmp_path, entry + "\n" + exact), "rope")
    assert claim_for(claims, ("f", "a = 1", "a = 2"), "rope").reason == "exact"  # an exact entry first
    assert claim_for(claims, ("f", "a = 1", "a = 3"), "rope").reason == "never runs"
    assert claim_for(claims, ("f", "a = 1", "a = 3"), "t5") is None  # claimed for the file's exercise only
    with pytest.raises(EquivalentsError, match="missing: reason"):
        load_file(write(tmp_path, entry.replace("reason = 'never runs'\n", "")), "rope")
    with pytest.raises(EquivalentsError, match="unknown: exercises"):
        load_file(write(tmp_path, entry + "exercises = ['rope']\n"), "rope")
    with pytest.raises(EquivalentsError, match="records twice"):
        load_file(write(tmp_path, entry + "\n" + entry), "rope")


def test_the_checked_in_equivalents_load_and_give_reasons():
    claims = load_equivalents()
    assert len(claims) >= 10 and all(len(claim.reason) > 20 for claim in claims)
    assert {claim.exercises[0] for claim in claims} <= set(EXERCISE_IDS)


def test_digests_compare_values_not_representations():
    a = torch.tensor([0.0, float("nan"), 1.5])
    assert digest_of(a) == digest_of(torch.tensor([-0.0, float("nan"), 1.5]))
    assert digest_of(a) != digest_of(a.double())  # the dtype is part of the answer
    assert digest_of(a) != digest_of(torch.tensor([0.0, float("nan"), 1.5000001]))
    assert digest_of(torch.empty(2, 3, device="meta")) == digest_of(torch.empty(2, 3, device="meta"))


def test_differences_allow_the_named_members_call_by_call():
    reference = {("t", "op", "1"): "r1", ("t", "op", "2"): "r2", ("other", "op", "1"): "x"}
    member = {("t", "op", "1"): "m1", ("t", "op", "2"): "m2"}
    mutant = {("t", "op", "1"): "m1", ("t", "op", "2"): "r2", ("other", "op", "1"): "different"}
    assert differences(reference, mutant, {"t"}) == ["t: op answered differently"]
    assert differences(reference, mutant, {"t"}, (member,)) == []
    assert differences(reference, {("t", "op", "1"): "r1"}, {"t"}) == ["t: op was called only for the reference"]


def test_the_tests_that_saw_a_mutant_are_those_with_another_answer_or_another_call():
    reference = {("t", "op", "1"): "r1", ("u", "op", "1"): "r", ("w", "op", "1"): "r", ("other", "op", "1"): "x"}
    mutant = {("t", "op", "1"): "m1", ("u", "op", "1"): "r", ("v", "op", "2"): "m", ("other", "op", "1"): "y"}
    assert changed_tests(reference, mutant, {"t", "u", "v", "w"}) == {"t", "v", "w"}


def test_the_command_scores_an_exercise_and_checks_its_equivalents(tmp_path):
    report = tmp_path / "mutation.json"
    done = subprocess.run(
        [sys.executable, "-m", "grader", "mutation", "--exercise", "learned", "--jobs", "1", "--json", str(report)],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    line = done.stdout.splitlines()[0]
    assert line.startswith("learned: 100.0% (") and "non-equivalent" in line and "equivalent)" in line
    data = json.loads(report.read_text())
    assert data["passed"] and data["survivors"] == [] and data["false_equivalents"] == []
    assert data["scores"][0]["exercise"] == "learned" and data["scores"][0]["equivalent"] > 0
    # By kind: every killed mutant counts for the kinds of the tests it failed (learned's table has values,
    # an error and behaviours), each kind at the target.
    kinds = {score["kind"]: score for score in data["kinds"]}
    assert {"value", "error", "behaviour"} <= set(kinds)
    assert all(score["killed"] == score["touched"] > 0 for score in kinds.values()), kinds
    assert "by kind of promise" in done.stdout and "behaviour: 100.0% (" in done.stdout
