"""The two-hop probe: follow a chain of two needles, in the spirit of RULER's multi-hop tracing.

RULER (Hsieh et al., 2024) finds that models which pass a single needle at a length often fail
harder tasks there, multi-hop variable tracking among them. This probe builds a two-step chain
from the recall rule the lab's models were trained on (``tasks``), so they need no new training:

    filler ... A B ... filler ... B C ... filler  A  B   ->  answers: B at the A, C at the B
               ^ needle 1, depth d    ^ needle 2, halfway to the query

Needle 1 says "after A comes B", needle 2 "after B comes C". The model is asked A, must answer B,
and, reading its own answer B next, must answer C. Teacher forcing gives both answers in one pass:
the first answer cannot see the B placed after the query (the mask is causal), so the chain is
followed exactly when both predictions are right, as a model writing its own first answer would.
The filler never holds A or B, and C is neither, so the recall rule's answers are B, then C
(checked against ``recall_targets`` in the tests). A blind guess follows a chain about one time in
(V - 1)(V - 2): it names one of the V - 1 tokens other than A, then one of the V - 2 others.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from poslab.experiments.config import ExperimentConfig
from poslab.experiments.results import CANNOT_RUN, OK, TWO_HOP, ProbeMeasurement
from poslab.experiments.rope_arms import arm_model
from poslab.experiments.tiny_transformer import CannotRun, TinyDecoder
from poslab.experiments.training import ATTENTION_BUDGET

TWO_HOP_SEED_OFFSET = 30_000  # chains come from their own stream, the same for every arm
SHORTEST = 7  # two needles of two tokens, a token between them, the query and the first answer


def chain_positions(seq_len: int, depth: float) -> tuple[int, int]:
    """Where needle 1 and needle 2 start: needle 1 at ``round(depth * (T - 6))``, needle 2 halfway
    between its end and the query (at ``T - 2``), so it ends at ``T - 3`` at the latest."""
    if not 0.0 <= depth <= 1.0:
        raise ValueError(f"depth must be in [0, 1], got {depth}")
    if seq_len < SHORTEST:
        raise ValueError(f"a two-hop chain needs at least {SHORTEST} tokens, got {seq_len}")
    first = int(depth * (seq_len - 6) + 0.5)  # half up, the same on every platform
    return first, (first + seq_len - 1) // 2


@dataclass(frozen=True)
class Chains:
    tokens: torch.Tensor  # (B, T): filler, A B at ``first``, B C at ``second``, then A and B last
    middles: torch.Tensor  # (B,): B, the answer at the query A (position T - 2)
    ends: torch.Tensor  # (B,): C, the answer at the B after it (position T - 1)
    first: int
    second: int

    @property
    def distance(self) -> int:
        """Tokens from needle 1's key to the query: the first hop's reach."""
        return self.tokens.shape[1] - 2 - self.first


def _draw_except(excluded: list[torch.Tensor], shape: tuple[int, int], vocab_size: int, generator) -> torch.Tensor:
    """Uniform over the tokens not in ``excluded`` (each ``(B, 1)``, distinct per row): draw from
    the V - k others, then step over the excluded tokens in increasing order."""
    drawn = torch.randint(vocab_size - len(excluded), shape, generator=generator)
    for skipped in torch.sort(torch.cat(excluded, dim=1), dim=1).values.unbind(dim=1):
        drawn = drawn + (drawn >= skipped[:, None]).long()
    return drawn


def chain_batch(trials: int, seq_len: int, depth: float, vocab_size: int, generator: torch.Generator) -> Chains:
    """``trials`` sequences of ``seq_len`` tokens, each with its own A, B and C."""
    first, second = chain_positions(seq_len, depth)
    a = torch.randint(vocab_size, (trials, 1), generator=generator)  # (B, 1)
    b = _draw_except([a], (trials, 1), vocab_size, generator)  # (B, 1)
    c = _draw_except([a, b], (trials, 1), vocab_size, generator)  # (B, 1)
    tokens = _draw_except([a, b], (trials, seq_len), vocab_size, generator)  # (B, T)
    tokens[:, first], tokens[:, first + 1] = a[:, 0], b[:, 0]
    tokens[:, second], tokens[:, second + 1] = b[:, 0], c[:, 0]
    tokens[:, -2], tokens[:, -1] = a[:, 0], b[:, 0]
    return Chains(tokens, b[:, 0], c[:, 0], first, second)


@torch.no_grad()
def count_followed(model: TinyDecoder, chains: Chains) -> int:
    """How many chains have both answers as the top predictions; ``CannotRun`` past a table."""
    trials, seq_len = chains.tokens.shape
    model.check_length(seq_len)
    chunk = max(1, ATTENTION_BUDGET // seq_len)
    hits = 0
    for start in range(0, trials, chunk):
        guesses = model(chains.tokens[start : start + chunk], last=2).argmax(dim=-1)  # (B, 2, V) -> (B, 2)
        right = guesses.eq(torch.stack([chains.middles, chains.ends], dim=1)[start : start + chunk])
        hits += int(right.all(dim=1).sum())
    return hits


def probe_two_hop(model: TinyDecoder, config: ExperimentConfig, arm: str, seed: int) -> list[ProbeMeasurement]:
    """One row per (test length, depth of needle 1), the same chains for every arm of a seed."""
    generator = torch.Generator().manual_seed(TWO_HOP_SEED_OFFSET + seed)
    rows = []
    for eval_len in config.eval_lens:
        for depth in config.probe_depths:
            chains = chain_batch(config.probe_trials, eval_len, depth, config.vocab_size, generator)
            try:
                followed, status = count_followed(arm_model(model, arm, eval_len, config.train_len), chains), OK
            except CannotRun:
                followed, status = None, CANNOT_RUN
            rows.append(
                ProbeMeasurement(
                    arm,
                    seed,
                    config.train_len,
                    eval_len,
                    depth,
                    chains.distance,
                    config.probe_trials,
                    followed,
                    status,
                    TWO_HOP,
                )
            )
    return rows
