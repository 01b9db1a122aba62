"""The passkey probe: can a model trained short fetch one fact from far back in a long sequence?

Perplexity can hold up past the training length while a model reads only the last stretch of
its input. Press et al. (2022) trace most of ALiBi's gain at longer lengths to fewer early tokens
with too little context, not to the use of far context, and Chi et al. (2023) find ALiBi's attention
working, in effect, within a window about as long as its training sequences. A passkey test
(Mohtashami and Jaggi, 2023) tells the two apart: hide one fact in a long stretch of filler, then
ask for it. This probe asks the lab's toy models in the words of the task they were trained on
(``tasks``), so they need no new training:

    filler ... filler  K  V  filler ... filler  K   ->  the answer is V
                       ^ the needle, at depth d     ^ the query: the last of T tokens

The filler is drawn uniformly from every token but the key K, so the needle holds the only earlier
K, and the recall rule's answer at the last position is its value V. The needle sits at position
``p = round(d * (T - 3))``: depth 0 is the very start, depth 1 puts V just before the query (as in
Kamradt's needle-in-a-haystack grids, where depth is a share of the document). The query is
``T - 1 - p`` tokens after the key: at the longest test lengths, far more than any gap the model saw
in training (at most ``train_len - 1``). V is any token but K (a K right after K would move the last
occurrence), so a guess is right one time in V - 1. Retrieval accuracy is the share of needles whose
value is the model's top prediction at the last position.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from poslab.experiments.config import ExperimentConfig
from poslab.experiments.results import CANNOT_RUN, OK, ProbeMeasurement
from poslab.experiments.rope_arms import arm_model
from poslab.experiments.tiny_transformer import CannotRun, TinyDecoder
from poslab.experiments.training import ATTENTION_BUDGET

PROBE_SEED_OFFSET = 20_000  # needles come from their own stream, the same for every encoding


def needle_position(seq_len: int, depth: float) -> int:
    """Where the key goes: 0 at depth 0, ``seq_len - 3`` at depth 1 (the value then sits just before the query)."""
    if not 0.0 <= depth <= 1.0:
        raise ValueError(f"depth must be between 0 and 1, got {depth}")
    if seq_len < 3:
        raise ValueError(f"a needle and its query need at least 3 tokens, got {seq_len}")
    return int(depth * (seq_len - 3) + 0.5)  # half up, the same on every platform


@dataclass(frozen=True)
class Needles:
    tokens: torch.Tensor  # (B, T): filler, the key and its value at ``position``, the key again last
    values: torch.Tensor  # (B,): what the last position must predict
    position: int  # of the key

    @property
    def distance(self) -> int:
        """Tokens from the needle's key to the query."""
        return self.tokens.shape[1] - 1 - self.position


def _any_token_but(
    keys: torch.Tensor, shape: tuple[int, int], vocab_size: int, generator: torch.Generator
) -> torch.Tensor:
    """Uniform over the V - 1 tokens other than each row's key: draw from V - 1, then step over the key."""
    drawn = torch.randint(vocab_size - 1, shape, generator=generator)
    return drawn + (drawn >= keys).long()


def needle_batch(trials: int, seq_len: int, depth: float, vocab_size: int, generator: torch.Generator) -> Needles:
    """``trials`` sequences of ``seq_len`` tokens, each with its own key and value at ``depth``."""
    position = needle_position(seq_len, depth)
    keys = torch.randint(vocab_size, (trials, 1), generator=generator)  # (B, 1)
    values = _any_token_but(keys, (trials, 1), vocab_size, generator)  # (B, 1)
    tokens = _any_token_but(keys, (trials, seq_len), vocab_size, generator)  # (B, T)
    tokens[:, position] = keys[:, 0]
    tokens[:, position + 1] = values[:, 0]
    tokens[:, -1] = keys[:, 0]
    return Needles(tokens, values[:, 0], position)


@torch.no_grad()
def count_retrieved(model: TinyDecoder, needles: Needles) -> int:
    """How many needles' values are the top prediction at the last position; ``CannotRun`` past a table."""
    trials, seq_len = needles.tokens.shape
    model.check_length(seq_len)
    chunk = max(1, ATTENTION_BUDGET // seq_len)
    hits = 0
    for start in range(0, trials, chunk):
        last = model(needles.tokens[start : start + chunk], last=1)[:, -1]  # (B, 1, V) -> (B, V)
        hits += int(last.argmax(dim=-1).eq(needles.values[start : start + chunk]).sum())
    return hits


def probe(model: TinyDecoder, config: ExperimentConfig, arm: str, seed: int) -> list[ProbeMeasurement]:
    """One row per (test length, depth) for one arm (``rope_arms``). Every arm gets the same needles
    for a seed: the batch is drawn even where the model cannot run, so the stream stays in step."""
    generator = torch.Generator().manual_seed(PROBE_SEED_OFFSET + seed)
    rows = []
    for eval_len in config.eval_lens:
        for depth in config.probe_depths:
            needles = needle_batch(config.probe_trials, eval_len, depth, config.vocab_size, generator)
            try:
                retrieved, status = count_retrieved(arm_model(model, arm, eval_len, config.train_len), needles), OK
            except CannotRun:
                retrieved, status = None, CANNOT_RUN
            rows.append(
                ProbeMeasurement(
                    arm,
                    seed,
                    config.train_len,
                    eval_len,
                    depth,
                    needles.distance,
                    config.probe_trials,
                    retrieved,
                    status,
                )
            )
    return rows
