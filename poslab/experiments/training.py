"""Train one toy decoder on the recall task, and score it: accuracy and perplexity by length.

Accuracy is over every scored position of a test sequence, so positions before ``train_len`` count
too, as they do in the ALiBi paper's perplexities. Perplexity is exp of the mean cross-entropy of
the answers at those same positions: 1 is certain and right, ``vocab_size`` is a uniform guess.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch.nn import functional as F

from poslab.experiments.config import ExperimentConfig
from poslab.experiments.tasks import IGNORE, recall_batch
from poslab.experiments.tiny_transformer import TinyDecoder

EVAL_SEED_OFFSET = 10_000  # test sequences come from their own stream, the same for every encoding
ATTENTION_BUDGET = 4_096  # tokens per forward pass when testing: bounds the (B, H, T, T) weights in memory


def learning_rate_factor(step: int, config: ExperimentConfig) -> float:
    """Linear warmup, then a cosine decay to a tenth of the peak."""
    if step < config.warmup_steps:
        return (step + 1) / config.warmup_steps
    progress = (step - config.warmup_steps) / max(1, config.steps - config.warmup_steps)
    return 0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * progress))


def train_model(
    config: ExperimentConfig, encoding: str, seed: int, on_step: Callable[[int], None] | None = None
) -> TinyDecoder:
    """Train one model on ``train_len``-token sequences; the seed fixes both the weights and the data."""
    with torch.random.fork_rng(devices=[]):  # seed the weights without touching the caller's global RNG
        torch.manual_seed(seed)
        model = TinyDecoder(config.model_config(encoding))
    data = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: learning_rate_factor(step, config))
    model.train()
    for step in range(config.steps):
        tokens, targets = recall_batch(config.batch_size, config.train_len, config.vocab_size, data)
        logits = model(tokens)  # (B, T, V)
        loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=IGNORE)  # (B*T, V) vs (B*T,)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        if on_step is not None:
            on_step(step + 1)
    return model.eval()


@dataclass(frozen=True)
class Score:
    accuracy: float  # share of scored positions whose top prediction is the answer
    perplexity: float  # exp(mean cross-entropy of the answers)


@torch.no_grad()
def evaluate(model: TinyDecoder, config: ExperimentConfig, eval_len: int, seed: int) -> Score:
    """Accuracy and perplexity on ``eval_len``-token sequences; ``CannotRun`` past a learned table."""
    model.check_length(eval_len)
    data = torch.Generator().manual_seed(EVAL_SEED_OFFSET + seed)
    n_sequences = max(1, config.eval_tokens // eval_len)
    chunk = max(1, ATTENTION_BUDGET // eval_len)
    correct = scored = 0
    cross_entropy = 0.0
    for start in range(0, n_sequences, chunk):
        tokens, targets = recall_batch(min(chunk, n_sequences - start), eval_len, config.vocab_size, data)
        logits = model(tokens)  # (B, T, V)
        has_answer = targets != IGNORE
        correct += int((logits.argmax(dim=-1).eq(targets) & has_answer).sum())
        scored += int(has_answer.sum())
        cross_entropy += float(F.cross_entropy(logits[has_answer], targets[has_answer], reduction="sum"))
    return Score(correct / scored, math.exp(cross_entropy / scored))
