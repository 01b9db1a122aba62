"""The lab's context extension: RoPE arms scaled at test time, the two-hop probe, the training gaps,
effective length as RULER defines it, the distance chart and the reading, by hand."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest
import torch

from poslab.encodings import rope_schedule
from poslab.experiments.config import QUICK
from poslab.experiments.results import TWO_HOP, ExtrapolationResults, ProbeMeasurement
from poslab.experiments.rope_arms import ScaledRope, arm_model
from poslab.experiments.tasks import recall_targets, share_of_gaps_at_least
from poslab.experiments.tiny_transformer import TinyDecoder
from poslab.experiments.two_hop import chain_batch, chain_positions, count_followed, probe_two_hop
from poslab.viz import extrapolation as lesson
from poslab.viz.common import convention_problems
from poslab.viz.extrapolation_extension import effective_lengths, effective_table, extension_reading
from tests.test_lesson_extrapolation import DEPTHS, PAPER_LIKE, distance, make_results
from tests.test_passkey import Constant, Oracle

V = 16


def test_share_of_far_gaps_against_every_sequence_counted():
    # All 3^6 sequences of 6 tokens over 3 symbols: the recall rule's matches, counted one by one.
    gaps = []
    for tokens in itertools.product(range(3), repeat=6):
        for t, token in enumerate(tokens):
            earlier = [j for j in range(t) if tokens[j] == token]
            if earlier:
                gaps.append(t - earlier[-1])
    for gap in (1, 2, 3, 5):
        counted = sum(g >= gap for g in gaps) / len(gaps)
        assert share_of_gaps_at_least(gap, 6, 3) == pytest.approx(counted, rel=1e-12)


@pytest.mark.parametrize("seq_len, depth, expected", [(64, 0.0, (0, 31)), (64, 1.0, (58, 60)), (7, 0.5, (1, 3))])
def test_chain_positions_by_hand(seq_len, depth, expected):
    # first = round half up of depth * (T - 6) (0.5 * 1 -> 1); second = (first + T - 1) // 2: 58 + 63 = 121 -> 60,
    # which ends at T - 3 = 61.
    assert chain_positions(seq_len, depth) == expected


@pytest.mark.parametrize("seq_len, depth", [(64, 0.0), (64, 0.5), (64, 1.0), (512, 0.25), (7, 1.0)])
def test_the_recall_rule_answers_both_hops(seq_len, depth):
    chains = chain_batch(300, seq_len, depth, V, torch.Generator().manual_seed(4))
    tokens = chains.tokens
    a, b = tokens[:, -2], tokens[:, -1]
    assert bool((b == chains.middles).all()) and len({*zip(a.tolist(), b.tolist(), chains.ends.tolist())}) > 100
    assert bool(((chains.ends != a) & (chains.ends != b) & (a != b)).all())
    assert (tokens == a[:, None]).sum(dim=1).tolist() == [2] * 300  # needle 1's A and the query
    assert (tokens == b[:, None]).sum(dim=1).tolist() == [3] * 300  # needle 1's B, needle 2's B, the answer
    targets = recall_targets(tokens)  # the task's own reference, hop by hop
    assert torch.equal(targets[:, -2], chains.middles) and torch.equal(targets[:, -1], chains.ends)
    assert chains.distance == seq_len - 2 - chains.first


def test_count_followed_by_hand():
    chains = chain_batch(60, 40, 0.3, V, torch.Generator().manual_seed(5))
    assert count_followed(Oracle(V, 5.0), chains) == 60
    for token in (0, 9):  # always `token`: both answers right only where B and C are both `token`: never
        assert count_followed(Constant(V, token), chains) == 0


def test_two_hop_rows_are_marked_and_a_blind_guess_is_rare():
    config = replace(QUICK, probe_trials=4)
    rows = probe_two_hop(Oracle(V, 5.0, longest=128), config, "rope", seed=0)
    assert {r.probe for r in rows} == {TWO_HOP} and len(rows) == len(config.eval_lens) * len(config.probe_depths)
    assert all(r.retrieved == 4 for r in rows if r.eval_len <= 128) and all(r.retrieved is None for r in rows[-3:])
    assert config.two_hop_chance == pytest.approx(1 / (15 * 14))


def test_scaled_arms_use_the_registry_and_are_plain_rope_at_the_training_length():
    torch.manual_seed(0)
    model = TinyDecoder(QUICK.model_config("rope")).eval()
    tokens = torch.randint(V, (2, 128))
    assert arm_model(model, "rope+yarn", 64, 64) is model and arm_model(model, "alibi", 512, 64) is model
    scaled = arm_model(model, "rope+linear", 256, 64)
    assert isinstance(scaled, ScaledRope) and scaled.factor == 4.0
    assert torch.equal(scaled.schedule.inv_freq, rope_schedule("linear", 16, 10000.0, 4.0, 64).inv_freq)
    yarn = arm_model(model, "rope+yarn", 512, 64)
    assert yarn.schedule.attention_scale == pytest.approx(0.1 * torch.log(torch.tensor(8.0)).item() + 1)
    # The default schedule reproduces the trained model; a scaled one changes what it computes.
    plain = model(tokens, rope=rope_schedule("none", 16, 10000.0, 1.0, 64))
    assert torch.allclose(plain, model(tokens), atol=1e-5)
    assert not torch.allclose(scaled(tokens), model(tokens), atol=1e-3)
    with pytest.raises(ValueError, match="RoPE schedule given to a model with 'alibi'"):
        TinyDecoder(QUICK.model_config("alibi"))(tokens, rope=scaled.schedule)


def test_the_last_positions_alone_match_the_whole_forward_pass():
    torch.manual_seed(1)
    for encoding in ("rope", "alibi", "sinusoidal"):
        model = TinyDecoder(QUICK.model_config(encoding)).eval()
        tokens = torch.randint(V, (3, 50))
        assert torch.allclose(model(tokens, last=2), model(tokens)[:, -2:], atol=1e-5)


def with_arms() -> ExtrapolationResults:
    """PAPER_LIKE's accuracy table plus three RoPE arms, and a two-hop probe for RoPE and its arms."""
    base = make_results(
        {
            "rope": [[1.0, 0.60, 0.30, 0.20]],
            "alibi": [[0.90, 0.88, 0.86, 0.85]],
            "rope+linear": [[1.0, 0.97, 0.93, 0.50]],
            "rope+ntk": [[1.0, 0.96, 0.50, 0.30]],
            "rope+yarn": [[1.0, 0.98, 0.96, 0.95]],
        },
        probes={
            "rope": {64: [9, 10, 10], 512: [1, 1, 1]},
            "rope+linear": {64: [9, 10, 10], 512: [8, 9, 10]},
            "rope+ntk": {64: [9, 10, 10], 512: [1, 2, 3]},
            "rope+yarn": {64: [9, 10, 10], 512: [9, 9, 10]},
        },
    )
    hops = {"rope": (28, 2), "rope+linear": (28, 3), "rope+ntk": (28, 1), "rope+yarn": (28, 4)}  # of 30 at 64, 512
    rows = tuple(
        ProbeMeasurement(arm, 0, 64, length, depth, distance(length, depth), 10, hits, "ok", TWO_HOP)
        for arm, (at_64, at_512) in hops.items()
        for length, total in ((64, at_64), (512, at_512))
        for depth, hits in zip(DEPTHS, (total // 3 + (total % 3 > 0), total // 3 + (total % 3 > 1), total // 3))
    )
    record = replace(base.record, two_hop="two-hop", two_hop_chance=1 / 210)
    return ExtrapolationResults(base.measurements, record, base.probes + rows)


def test_effective_length_by_hand():
    results = with_arms()
    # Recall accuracy: bar = 1/16 + 0.9 x (1.0 - 1/16) = 0.90625. RoPE 1.0 then 0.60: 64. PI 0.97, 0.93, then 0.50:
    # 256. NTK 0.96 then 0.50: 128. YaRN to 0.95: 512. ALiBi 0.90 < 0.906 already at 64: under 64.
    accuracy = {e.arm: e.length for e in effective_lengths(results, "accuracy")}
    assert accuracy == {"rope": 64, "alibi": None, "rope+linear": 256, "rope+ntk": 128, "rope+yarn": 512}
    # Passkey pooled over depths: RoPE 29/30 at 64, bar 1/15 + 0.9 (29/30 - 1/15) = 0.8767. At 512: PI 27/30 = 0.9
    # passes, YaRN 28/30 passes, NTK 6/30 fails; only 64 and 512 were probed.
    passkey = {e.arm: e.length for e in effective_lengths(results, "passkey")}
    assert passkey == {"rope": 64, "rope+linear": 512, "rope+ntk": 64, "rope+yarn": 512}
    two_hop = {e.arm: e.length for e in effective_lengths(results, "two_hop")}
    assert two_hop == {"rope": 64, "rope+linear": 64, "rope+ntk": 64, "rope+yarn": 64}  # 4/30 at best at 512
    table = effective_table(results).set_index("arm")
    assert table.loc["RoPE+PI", "recall accuracy (bar 91%)"] == "256 (4x)"
    assert table.loc["ALiBi", "recall accuracy (bar 91%)"] == "under 64"


def test_extension_reading_says_what_the_schedules_did_and_where_the_hard_probe_parts():
    text = extension_reading(with_arms())
    assert "chance plus 90% of plain RoPE's margin over chance at the training length (64 tokens)" in text
    assert "The bars: recall accuracy 91%, passkey retrieval 88%, two-hop chains followed 84%." in text
    assert (
        "**YaRN** (RoPE+YaRN): effective length on recall accuracy 512 (RoPE: 64); passkey retrieval 512 "
        "(RoPE: 64); two-hop chains followed 64 (RoPE: 64). At 512 tokens, from plain RoPE to this arm: recall "
        "accuracy 20% to 95%, passkey retrieval 10% to 93%, two-hop chains followed 7% to 13%."
    ) in text
    assert "**Cheap at test time, and not enough:** RoPE+PI, RoPE+NTK and RoPE+YaRN lengthened" in text
    assert "has no RoPE arms" in extension_reading(PAPER_LIKE)
    flat = make_results({"rope": [[1.0, 0.5, 0.3, 0.2]], "rope+yarn": [[1.0, 0.5, 0.3, 0.2]]})
    assert "**No schedule lengthened RoPE's effective length**" in extension_reading(flat)
    hard_only = make_results({"rope": [[1.0, 0.5, 0.3, 0.2]], "rope+yarn": [[1.0, 0.5, 0.3, 0.2]]})
    hops = tuple(
        ProbeMeasurement(arm, 0, 64, length, 0.5, distance(length, 0.5), 10, hits, "ok", TWO_HOP)
        for arm, per_length in {"rope": (10, 0), "rope+yarn": (10, 10)}.items()
        for length, hits in zip((64, 128), per_length)
    )
    hard_only = ExtrapolationResults(hard_only.measurements, replace(hard_only.record, two_hop_chance=0.01), hops)
    assert "**Only the two-hop chain gained:** RoPE+YaRN lengthened" in extension_reading(hard_only)


def test_distance_chart_draws_one_line_per_test_length():
    view = lesson.view(with_arms(), "t")
    assert list(view.distance_charts) == ["RoPE", "RoPE+PI", "RoPE+NTK", "RoPE+YaRN"]
    chart = view.distance_charts["RoPE+PI"]
    assert convention_problems(chart) == []
    spec = chart.to_dict()
    lines = spec["layer"][0]
    assert lines["encoding"]["color"]["field"] == "length" and lines["encoding"]["x"]["field"] == "distance"
    assert spec["title"]["text"] == "t: RoPE+PI's passkey retrieval by distance" and spec["padding"]["top"] > 0
    assert (
        "64 tokens (1x): 100% at 2 back, 100% at 32 back, 90% at 63 back; "
        "512 tokens (8x): 100% at 2 back, 90% at 256 back, 80% at 511 back"
    ) in spec["description"]
