"""The passkey probe's math, checked against the recall task's own rule and against values derived by hand."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
import torch
from torch import nn

from poslab.experiments.config import FULL, QUICK
from poslab.experiments.passkey import count_retrieved, needle_batch, needle_position, probe
from poslab.experiments.tasks import IGNORE, recall_targets
from poslab.experiments.tiny_transformer import CannotRun
from poslab.experiments.training import evaluate

V = 16


class Oracle(nn.Module):
    """Logits of ``margin`` on the recall rule's answer and 0 elsewhere (uniform where there is none)."""

    def __init__(self, vocab_size: int, margin: float, longest: int | None = None) -> None:
        super().__init__()
        self.vocab_size, self.margin, self.longest = vocab_size, margin, longest

    def check_length(self, seq_len: int) -> None:
        if self.longest is not None and seq_len > self.longest:
            raise CannotRun(f"{seq_len} > {self.longest}")

    def forward(self, tokens: torch.Tensor, last: int | None = None) -> torch.Tensor:
        targets = recall_targets(tokens)
        logits = torch.zeros(*tokens.shape, self.vocab_size)
        answered = targets != IGNORE
        logits[answered, targets[answered]] = self.margin
        return logits if last is None else logits[:, -last:]


class Constant(Oracle):
    """Always predicts token ``token``."""

    def __init__(self, vocab_size: int, token: int) -> None:
        super().__init__(vocab_size, 0.0)
        self.token = token

    def forward(self, tokens: torch.Tensor, last: int | None = None) -> torch.Tensor:
        logits = torch.zeros(*tokens.shape, self.vocab_size)
        logits[..., self.token] = 1.0
        return logits if last is None else logits[:, -last:]


@pytest.mark.parametrize(
    "seq_len, depth, expected",
    [
        (64, 0.0, 0),
        (64, 1.0, 61),
        (64, 0.5, 31),
        (64, 0.25, 15),
        (512, 0.75, 382),
        (3, 1.0, 0),
        (10, 0.5, 4),
    ],
)
def test_needle_position_by_hand(seq_len, depth, expected):
    # p = round half up of depth * (T - 3): 0.5 * 61 = 30.5 -> 31; 0.25 * 61 = 15.25 -> 15; 0.75 * 509 = 381.75 -> 382
    assert needle_position(seq_len, depth) == expected


@pytest.mark.parametrize("seq_len, depth", [(64, -0.1), (64, 1.5), (2, 0.5)])
def test_needle_position_refuses_what_cannot_hold_a_needle(seq_len, depth):
    with pytest.raises(ValueError):
        needle_position(seq_len, depth)


@pytest.mark.parametrize("seq_len, depth", [(64, 0.0), (64, 0.5), (64, 1.0), (512, 0.25), (7, 1.0)])
def test_the_recall_rule_answers_the_needle_and_nothing_else_holds_the_key(seq_len, depth):
    needles = needle_batch(200, seq_len, depth, V, torch.Generator().manual_seed(1))
    tokens, p = needles.tokens, needles.position
    keys = tokens[:, -1]
    assert tokens.shape == (200, seq_len) and needles.distance == seq_len - 1 - p
    assert torch.equal(tokens[:, p], keys) and torch.equal(tokens[:, p + 1], needles.values)
    copies = (tokens == keys[:, None]).sum(dim=1)
    assert copies.tolist() == [2] * 200  # the needle's key and the query: the filler never holds it
    assert bool((needles.values != keys).all())
    # The task the models learned, computed by its own reference: the answer at the query is the value.
    assert torch.equal(recall_targets(tokens)[:, -1], needles.values)


def test_filler_and_values_are_uniform_over_the_other_tokens():
    needles = needle_batch(4_000, 32, 0.5, V, torch.Generator().manual_seed(0))
    keys = needles.tokens[:, -1]
    filler = torch.cat([needles.tokens[:, : needles.position], needles.tokens[:, needles.position + 2 : -1]], dim=1)
    # Each of the V - 1 other tokens: 1/(V-1) of the filler, within a few standard errors.
    shifted = (filler - keys[:, None]) % V  # 0 would be the key; 1..V-1 the others
    counts = torch.bincount(shifted.flatten(), minlength=V).double() / filler.numel()
    assert counts[0] == 0
    assert torch.allclose(counts[1:], torch.full((V - 1,), 1 / (V - 1), dtype=torch.float64), atol=0.004)
    value_counts = torch.bincount((needles.values - keys) % V, minlength=V).double() / len(keys)
    assert value_counts[0] == 0 and value_counts[1:].min() > 0.04  # 1/15 = 0.067 each, 4,000 draws


def test_count_retrieved_by_hand():
    needles = needle_batch(100, 40, 0.3, V, torch.Generator().manual_seed(2))
    assert count_retrieved(Oracle(V, 5.0), needles) == 100
    for token in (0, 7):  # a model that always says `token` is right exactly where the value is `token`
        assert count_retrieved(Constant(V, token), needles) == int((needles.values == token).sum())
    with pytest.raises(CannotRun):
        count_retrieved(Oracle(V, 5.0, longest=32), needles)


def test_perplexity_and_accuracy_by_hand():
    config = replace(QUICK, eval_tokens=2_048)
    # Uniform logits: perplexity is exactly V; every argmax is token 0.
    uniform = evaluate(Oracle(V, 0.0), config, 64, seed=0)
    assert uniform.perplexity == pytest.approx(V, rel=1e-6)
    # A margin m on the answer: cross-entropy log(e^m + V - 1) - m, so perplexity 1 + (V - 1) e^-m.
    for margin in (1.0, 3.0):
        score = evaluate(Oracle(V, margin), config, 64, seed=0)
        assert score.accuracy == 1.0
        assert score.perplexity == pytest.approx(1 + (V - 1) * math.exp(-margin), rel=1e-5)


def test_probe_rows_cover_lengths_and_depths_and_stop_where_a_table_ends():
    config = replace(QUICK, probe_trials=8, probe_depths=FULL.probe_depths)
    rows = probe(Oracle(V, 5.0, longest=128), config, "learned", seed=3)
    assert [(r.eval_len, r.depth) for r in rows] == [(n, d) for n in config.eval_lens for d in config.probe_depths]
    assert all(r.retrieved == 8 and r.status == "ok" for r in rows if r.eval_len <= 128)
    assert all(r.retrieved is None and r.status == "cannot_run" for r in rows if r.eval_len > 128)
    assert {r.distance for r in rows if r.eval_len == 512} == {511, 384, 256, 129, 2}


class Recorder(Constant):
    """Keeps every batch it is shown; refuses the lengths in ``refuse``."""

    def __init__(self, refuse: tuple[int, ...] = ()) -> None:
        super().__init__(V, 0)
        self.refuse, self.seen = refuse, []

    def check_length(self, seq_len: int) -> None:
        if seq_len in self.refuse:
            raise CannotRun(str(seq_len))

    def forward(self, tokens: torch.Tensor, last: int | None = None) -> torch.Tensor:
        self.seen.append(tokens.clone())
        return super().forward(tokens, last)


def test_every_encoding_of_a_seed_gets_the_same_needles_whatever_could_not_run():
    config = replace(QUICK, probe_trials=4, probe_depths=FULL.probe_depths)
    everywhere, blocked = Recorder(), Recorder(refuse=(128,))
    probe(everywhere, config, "rope", seed=1)
    probe(blocked, config, "rope", seed=1)
    longer = [batch for batch in everywhere.seen if batch.shape[1] != 128]
    assert len(longer) == len(blocked.seen) == 15
    assert all(torch.equal(a, b) for a, b in zip(longer, blocked.seen))
    other_seed = Recorder()
    probe(other_seed, config, "rope", seed=2)
    assert not torch.equal(other_seed.seen[0], everywhere.seen[0])
