"""A small decoder-only transformer whose only switch is how it learns about position.

Built from the course's own reference encodings (``poslab.encodings``), in the shape of
nanoGPT's ``model.py``: pre-LayerNorm blocks of causal self-attention and an MLP.

Shape vocabulary: B batch, H heads, T positions, D features per head; the residual stream is
H * D wide and V is the vocabulary size.

Where position enters, per encoding:

* ``none``        nowhere: only the causal mask (NoPE)
* ``sinusoidal``  a fixed sinusoid table added to the token embeddings
* ``learned``     a trainable table of ``max_len`` rows added to the token embeddings
* ``rope``        q and k rotated by their position inside every attention layer
* ``alibi``       a per-head linear distance penalty added to the attention logits
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from poslab.encodings import (
    LearnedPositionalEmbedding,
    RopeSchedule,
    alibi_bias,
    apply_rope,
    apply_rotary,
    attention,
    sinusoidal_encoding,
)

ENCODINGS = ("none", "sinusoidal", "learned", "rope", "alibi")


class CannotRun(ValueError):
    """The model has no way to represent a sequence this long (a learned table ran out of rows)."""


@dataclass(frozen=True)
class ModelConfig:
    encoding: str
    vocab_size: int
    max_len: int  # rows of the learned table; other encodings ignore it
    n_layers: int = 2
    n_heads: int = 4
    d_model: int = 64

    def __post_init__(self) -> None:
        if self.encoding not in ENCODINGS:
            raise ValueError(f"unknown encoding {self.encoding!r}; known: {', '.join(ENCODINGS)}")
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model {self.d_model} is not a multiple of n_heads {self.n_heads}")


class CausalSelfAttention(nn.Module):
    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.n_heads = config.n_heads
        self.use_rope = config.encoding == "rope"
        self.qkv = nn.Linear(config.d_model, 3 * config.d_model, bias=False)
        self.proj = nn.Linear(config.d_model, config.d_model, bias=False)

    def forward(
        self, x: torch.Tensor, bias: torch.Tensor, rope: RopeSchedule | None = None, queries: int | None = None
    ) -> torch.Tensor:
        """``queries``: only the last this many positions ask (every position is still a key)."""
        B, T, width = x.shape
        H, D = self.n_heads, width // self.n_heads
        q, k, v = self.qkv(x).split(width, dim=2)
        q = q.view(B, T, H, D).transpose(1, 2)  # (B, T, H*D) -> (B, H, T, D)
        k = k.view(B, T, H, D).transpose(1, 2)  # (B, T, H*D) -> (B, H, T, D)
        v = v.view(B, T, H, D).transpose(1, 2)  # (B, T, H*D) -> (B, H, T, D)
        if self.use_rope and rope is None:
            q, k = apply_rope(q), apply_rope(k)
        elif self.use_rope:  # a context-extension schedule, applied at test time only
            q = apply_rotary(q, rope.inv_freq) * rope.attention_scale
            k = apply_rotary(k, rope.inv_freq) * rope.attention_scale
        if queries is not None:
            q, bias, T = q[:, :, -queries:], bias[..., -queries:, :], queries  # (B, H, T', D), T' = queries
        out, _ = attention(q, k, v, bias)  # (B, H, T, D)
        out = out.transpose(1, 2).reshape(B, T, width)  # (B, H, T, D) -> (B, T, H*D)
        return self.proj(out)


class Block(nn.Module):
    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.norm_attention = nn.LayerNorm(config.d_model)
        self.attention = CausalSelfAttention(config)
        self.norm_mlp = nn.LayerNorm(config.d_model)
        self.mlp = nn.Sequential(
            nn.Linear(config.d_model, 4 * config.d_model),
            nn.GELU(),
            nn.Linear(4 * config.d_model, config.d_model),
        )

    def forward(
        self, x: torch.Tensor, bias: torch.Tensor, rope: RopeSchedule | None = None, queries: int | None = None
    ) -> torch.Tensor:
        x = (x if queries is None else x[:, -queries:]) + self.attention(self.norm_attention(x), bias, rope, queries)
        return x + self.mlp(self.norm_mlp(x))


class TinyDecoder(nn.Module):
    """Token ids ``[B, T]`` -> next-step logits ``[B, T, V]``."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.config = config
        self.token_embedding = nn.Embedding(config.vocab_size, config.d_model)
        self.learned_positions = (
            LearnedPositionalEmbedding(config.max_len, config.d_model) if config.encoding == "learned" else None
        )
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.n_layers))
        self.norm_out = nn.LayerNorm(config.d_model)
        self.head = nn.Linear(config.d_model, config.vocab_size, bias=False)

    @property
    def longest_sequence(self) -> int | None:
        """The longest input the model can represent, or None when any length runs."""
        return self.config.max_len if self.config.encoding == "learned" else None

    def check_length(self, seq_len: int) -> None:
        longest = self.longest_sequence
        if longest is not None and seq_len > longest:
            raise CannotRun(
                f"a learned table of {longest} rows has no embedding for position {longest} "
                f"or later, so a sequence of {seq_len} tokens cannot run"
            )

    def attention_bias(self, seq_len: int) -> torch.Tensor:
        if self.config.encoding == "alibi":
            return alibi_bias(self.config.n_heads, seq_len)  # (H, T, T), causal mask included
        future = torch.ones(seq_len, seq_len, dtype=torch.bool).triu(1)
        return torch.zeros(seq_len, seq_len).masked_fill(future, float("-inf"))  # (T, T)

    def forward(self, tokens: torch.Tensor, rope: RopeSchedule | None = None, last: int | None = None) -> torch.Tensor:
        """``rope``: RoPE's frequencies and attention scale from a context-extension schedule
        (``poslab.encodings.rope_scaling``) in place of the trained ones; RoPE models only.
        ``last``: the logits of the last this many positions only, ``[B, last, V]`` (a probe's
        answers): the top block then computes nothing for the positions before them."""
        T = tokens.shape[1]
        self.check_length(T)
        x = self.token_embedding(tokens)  # (B, T, H*D)
        if self.config.encoding == "sinusoidal":
            x = x + sinusoidal_encoding(T, self.config.d_model)  # (B, T, H*D) + (T, H*D)
        elif self.learned_positions is not None:
            x = self.learned_positions(x)
        bias = self.attention_bias(T)
        if rope is not None and self.config.encoding != "rope":
            raise ValueError(f"a RoPE schedule given to a model with {self.config.encoding!r} positions")
        for index, block in enumerate(self.blocks):
            x = block(x, bias, rope, last if index == len(self.blocks) - 1 else None)
        return self.head(self.norm_out(x))  # (B, T, V)
