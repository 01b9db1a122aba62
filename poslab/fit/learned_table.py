"""Fit a learned position table on a toy task: attend to the recent past.

The model is nothing but a position table E ``[max_len, D]`` and one bilinear map W ``[D, D]``:

    s(p, q) = E_p W E_q^T,   a(p, .) = softmax_{q <= p} s(p, .)

and the target for query p is a recency window over the keys it may see,

    t(p, q) = exp(-(p - q) / tau) / sum_{q' <= p} exp(-(p - q') / tau),

learned by minimising the cross-entropy -sum_q t(p, q) log a(p, q) over the training positions
p < train_len. Rows train_len .. max_len - 1 never enter the loss, so they never move from their
initialisation (std 0.02, Hugging Face's and nanoGPT's GPT-2 convention; OpenAI's GPT-2 code draws
its position table with std 0.01): a learned table knows only the positions it was shown.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from poslab.threads import one_intra_op_thread


@dataclass(frozen=True)
class LearnedFit:
    table: torch.Tensor  # (max_len, D) float32, the learned position table
    losses: tuple[float, ...]  # excess loss (cross-entropy minus the target's entropy) per step
    train_len: int


def recency_target(train_len: int, tau: float) -> torch.Tensor:
    """``[T, T]`` rows summing to 1: t(p, q) proportional to exp(-(p - q) / tau) for q <= p, else 0."""
    positions = torch.arange(train_len, dtype=torch.float32)
    back = positions[:, None] - positions[None, :]  # (T, T): p - q
    return torch.softmax((-back / tau).masked_fill(back < 0, float("-inf")), dim=-1)


def fit_learned_table(
    max_len: int = 64,
    train_len: int = 48,
    d_model: int = 16,
    steps: int = 300,
    seed: int = 0,
    tau: float = 3.0,
    lr: float = 0.05,
) -> LearnedFit:
    """Full-batch Adam on the recency task; same arguments, same table (single-threaded CPU)."""
    if not 2 <= train_len <= max_len:
        raise ValueError(f"train_len must be in 2..max_len={max_len}, got {train_len}")
    generator = torch.Generator().manual_seed(seed)
    table = (torch.randn(max_len, d_model, generator=generator) * 0.02).requires_grad_()
    bilinear = (torch.randn(d_model, d_model, generator=generator) / math.sqrt(d_model)).requires_grad_()
    target = recency_target(train_len, tau)  # (T, T)
    future = torch.ones(train_len, train_len, dtype=torch.bool).triu(1)  # keys after the query
    target_entropy = float(-(target * target.clamp_min(1e-30).log()).sum(-1).mean())
    adam = _Adam([table, bilinear], lr)
    losses = []
    with one_intra_op_thread():  # tiny tensors: a second thread only waits (poslab/threads.py)
        for _ in range(steps):
            seen = table[:train_len]  # (T, D): only these rows get gradients
            logits = (seen @ bilinear @ seen.T).masked_fill(future, float("-inf"))  # (T, T)
            log_weights = torch.log_softmax(logits, dim=-1).masked_fill(future, 0.0)
            loss = -(target * log_weights).sum(-1).mean()
            adam.step(loss)
            losses.append(loss.item() - target_entropy)
    return LearnedFit(table.detach().clone(), tuple(losses), train_len)


class _Adam:
    """Plain Adam (Kingma and Ba, 2015). Written out because the first ``torch.optim.Adam`` in a
    process imports torch._dynamo, about 2 s that the lesson page would wait for."""

    def __init__(self, params: list[torch.Tensor], lr: float, betas=(0.9, 0.999), eps: float = 1e-8) -> None:
        self.params, self.lr, self.betas, self.eps, self.t = params, lr, betas, eps, 0
        self.m = [torch.zeros_like(p) for p in params]
        self.v = [torch.zeros_like(p) for p in params]

    def step(self, loss: torch.Tensor) -> None:
        grads = torch.autograd.grad(loss, self.params)
        self.t += 1
        beta1, beta2 = self.betas
        with torch.no_grad():
            for param, grad, m, v in zip(self.params, grads, self.m, self.v):
                m.mul_(beta1).add_(grad, alpha=1 - beta1)  # m_t = b1 m + (1 - b1) g
                v.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)  # v_t = b2 v + (1 - b2) g^2
                m_hat, v_hat = m / (1 - beta1**self.t), v / (1 - beta2**self.t)
                param.sub_(self.lr * m_hat / (v_hat.sqrt() + self.eps))
