"""Exercise 7, decoding with a KV cache: the hidden suite's oracle and error model, checked on their own.

* the float64 oracle agrees with values worked out by hand and with the reference on every case the suite draws;
* correct decoders in five styles (tests/corpus) use at most a third of the tolerance on every value case, in
  float32 and float64;
* every known mistake is shown by some case at least three tolerances away from the truth;
* the tolerance follows the scale of the inputs and the positions (an error model, not a constant).
"""

from __future__ import annotations

import math
from functools import cache
from pathlib import Path

import pytest
import torch

from grader.suite.decode.cases import build, real_only, tolerance, truth
from grader.suite.decode.domains import DecodeCase
from grader.suite.decode.mistakes import mistakes
from grader.suite.decode.oracle import decode_visibility, oracle_decode
from grader.suite.decode.test_decode_hidden import value_cases
from grader.suite.decode.tolerances import cached_key_tolerance, decode_tolerance
from grader.suite.local import namespace_from_source
from poslab.encodings import decode

VALUE_CASES = value_cases()

CORRECT = Path(__file__).parent / "corpus" / "correct"
MARGIN = 3.0


@cache
def correct_decoders() -> dict:
    found = {
        path.stem: namespace_from_source(path.read_text(encoding="utf-8"), path.stem)["decode"]
        for path in sorted(CORRECT.glob("c*.py"))
        if "\ndef decode(" in path.read_text(encoding="utf-8")
    }
    assert len(found) >= 4, found
    return found | {"reference": decode}


def worst_ratio(out: torch.Tensor, case: DecodeCase) -> float:
    inputs = build(case)
    gap = (real_only(out, inputs.real) - real_only(truth(case), inputs.real)).abs()
    return float((gap / tolerance(inputs)).max())


def test_visibility_by_hand():
    real = torch.tensor([[False, True, True, True, True]])
    seen = decode_visibility(real, window=2)[0].int().tolist()
    assert seen == [[0, 0, 0, 0, 0], [0, 1, 0, 0, 0], [0, 1, 1, 0, 0], [0, 0, 1, 1, 0], [0, 0, 0, 1, 1]]


def test_oracle_by_hand_with_one_feature_pair():
    # D = 2, theta = 1: token 1's query (1, 0) at position 1 reads key (1, 0) at 0 with score cos(1) / sqrt(2),
    # and its own key 0 with score 0. A token that sees no key (padding) gets 0.
    q = torch.tensor([[0.0, 0.0], [1.0, 0.0]]).view(1, 1, 2, 2)
    k = torch.tensor([[1.0, 0.0], [0.0, 0.0]]).view(1, 1, 2, 2)
    v = torch.tensor([[1.0, 0.0], [0.0, 1.0]]).view(1, 1, 2, 2)
    positions = torch.tensor([[0, 1]])
    out = oracle_decode(q, k, v, decode_visibility(torch.ones(1, 2, dtype=torch.bool)), positions, positions)
    first = 1 / (1 + math.exp(-math.cos(1) / math.sqrt(2)))
    assert torch.allclose(out[0, 0, 1], torch.tensor([first, 1 - first], dtype=torch.float64), atol=1e-15)
    nothing = oracle_decode(q, k, v, torch.zeros(1, 2, 2, dtype=torch.bool), positions, positions)
    assert torch.equal(nothing, torch.zeros_like(nothing))


def test_oracle_agrees_with_the_reference_on_every_case_in_float64():
    for case in VALUE_CASES:
        inputs = build(case)
        q, k, v = (x.double() for x in (inputs.q, inputs.k, inputs.v))
        out, _ = decode(q, k, v, case.prompt_len, **inputs.kwargs)
        gap = (real_only(out, inputs.real) - real_only(truth(case), inputs.real)).abs().max()
        assert gap < 1e-10, (case, float(gap))


@pytest.mark.parametrize(
    "style",
    [
        "c02_hf_sdpa_bloom",
        "c03_meta_llama_complex",
        "c08_neox_rotary_mpt_alibi",
        "c13_hf_llama_float32",
        "c14_torchtune_cache",
        "reference",
    ],
)
def test_correct_decoders_stay_within_a_third_of_the_tolerance(style):
    decoder = correct_decoders()[style]
    worst = 0.0
    for case in VALUE_CASES:
        inputs = build(case)
        out, _ = decoder(inputs.q, inputs.k, inputs.v, case.prompt_len, **inputs.kwargs)
        worst = max(worst, worst_ratio(out, case))
    print(f"\n{style}: worst error / tolerance over {len(VALUE_CASES)} cases = {worst:.4f}")
    assert worst <= 1 / MARGIN


def test_every_known_mistake_is_shown_well_outside_the_tolerance():
    """Each mistake is shown by some case at least MARGIN tolerances away (a case may show it weakly: with large
    scores the softmax is nearly one-hot, and a wrong key can get almost no weight)."""
    clearest: dict[str, float] = {}
    for case in VALUE_CASES:
        inputs = build(case)
        for name, wrong in mistakes(inputs).items():
            gap = (real_only(wrong(), inputs.real) - real_only(truth(case), inputs.real)).abs()
            clearest[name] = max(clearest.get(name, 0.0), float((gap / tolerance(inputs)).max()))
    print("\n" + "\n".join(f"{ratio:12.0f} tolerances: {name}" for name, ratio in sorted(clearest.items())))
    assert len(clearest) >= 12
    assert all(ratio >= MARGIN for ratio in clearest.values()), clearest


def test_the_tolerance_follows_the_inputs_scale_and_positions():
    inputs = build(DecodeCase(batch=1, heads=1, length=6, dim=8, prompt_len=2))
    q, k, v, positions = inputs.q, inputs.k, inputs.v, inputs.positions
    seen = decode_visibility(inputs.real)

    def allowed(q=q, k=k, v=v, positions=positions):
        return decode_tolerance(q, k, v, positions, seen, 10000.0, "half")

    base = allowed()
    assert torch.allclose(allowed(v=10 * v), 10 * base, rtol=1e-9)  # out is linear in v (above the underflow)
    assert bool((allowed(q=10 * q) > 5 * base).all())  # the scores grow with q
    assert bool((allowed(positions=positions + 10_000) > 10 * base).all())  # angles err more far out
    assert bool((allowed(q.double(), k.double(), v.double()) > 0.9 * base).all())  # float32 arithmetic allowed
    keys = cached_key_tolerance(k, positions, 10000.0, "half")
    far = cached_key_tolerance(k, positions + 1000, 10000.0, "half")
    assert bool((far >= keys).all()) and bool((far[..., 0] > 10 * keys[..., 0]).all())  # pair 0 turns fastest
    assert torch.allclose(cached_key_tolerance(3 * k, positions, 10000.0, "half"), 3 * keys, rtol=1e-6)


def test_the_window_test_meets_every_boundary_of_prompt_decoded_and_window():
    """P shorter than, equal to, one longer and longer than W, with 0, 1 and a few decoded tokens, each in both cache
    modes; every kind of position ids (stepping ones among them) meets a window with and without padding."""
    from grader.suite.decode.domains import POSITION_KINDS
    from grader.suite.decode.test_decode_hidden import test_window_masks_the_full_forward

    cases = test_window_masks_the_full_forward.prepare()
    boundaries = set()
    for case in cases:
        prompt_vs_window = (
            "shorter"
            if case.prompt_len < case.window
            else "equal"
            if case.prompt_len == case.window
            else "one longer"
            if case.prompt_len == case.window + 1
            else "longer"
        )
        decoded = min(case.length - case.prompt_len, 2)
        boundaries.add((prompt_vs_window, decoded, case.cache))
    assert boundaries >= {
        (p, d, c) for p in ("shorter", "equal", "one longer", "longer") for d in (0, 1, 2) for c in ("rotated", "raw")
    }

    def kind(case):
        return (
            "stepped"
            if case.stride >= 2 and not case.spread
            else "far"
            if case.start or case.spread
            else "given"
            if case.position_ids
            else "counted"
        )

    assert {(kind(case), case.pads is not None) for case in cases} >= {
        (k, p) for k in POSITION_KINDS for p in (True, False)
    }
