"""Incremental decoding with a KV cache, for one RoPE attention layer: a prefill, then one token at a time.

    decode(q, k, v, prompt_len, *, cache="rotated", window=None, attention_mask=None,
           position_ids=None, pairing="half", base=10000.0) -> (out, cached_keys)

    q, k, v         [B, H, T, D]  the projections of every token, D even: the prompt's P = prompt_len
                    tokens (1 <= P <= T), then the T - P tokens decoded after it
    cache           "rotated": each key is rotated by its position once, before it is cached (Llama);
                    "raw": keys are cached as given and rotated by their positions when read
                    (StreamingLLM, dynamic NTK)
    window          None: a token sees every token before it and itself;
                    W >= 1: it sees the last W tokens, itself included (Mistral's sliding window),
                    and the cache keeps at most W keys (a rolling buffer)
    attention_mask  None, or [B, P]: 1 (or True) for a prompt token, 0 for left padding
    position_ids    None, or an integer tensor [B, T]: the position of every token
    pairing         "interleaved", (x[2i], x[2i+1]), or "half", (x[i], x[i + D/2]): RoPE as in the
                    RoPE exercise, theta_i = base^(-2i/D), pair i turned counter-clockwise by p * theta_i

    out          [B, H, T, D]  the attention output of every token
    cached_keys  [B, H, S, D]  the keys the cache holds after the last token, oldest first:
                               S = T without a window, min(W, T) with one; rotated or raw, as `cache` says

How it runs: the prefill attends over the P prompt tokens at once, causally; then each later token
appends its key and value to the cache and attends to the keys the cache holds. Every step gives
the full causal forward:

    out[b, h, t] = sum over s of softmax_s( <R(p_t) q_t, R(p_s) k_s> / sqrt(D) ) v_s
                   keys s: s <= t, s > t - W (with a window), and not padding
    R(p): RoPE at position p;  p_t: the position of token t in its row

Positions are tracked apart from the cache:
- position_ids given: token t of row b is at position_ids[b, t];
- else, with an attention_mask: a token after j real (not padding) tokens of its row is at j, so each
  row starts at 0 at its first real token and the decoded tokens carry on from there;
- else: 0, 1, ..., T - 1.
With left padding, or a rolling buffer of W keys, the number of keys in the cache is not the position.

Rules:
- Padding is only on the left of the prompt, and every row has at least one real token. Padding
  keys get no weight. The outputs of padding tokens, and their entries in cached_keys, are not
  checked (any values). A left-padded batch gives every row the result of its unpadded sequence.
- Both cache modes give the same out.
- out and cached_keys keep q's dtype (float32 or float64). q, k, v, attention_mask and position_ids
  are not modified in place; non-contiguous inputs (e.g. transposed views) work.
"""

from __future__ import annotations

from typing import Literal

import torch


def decode(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    prompt_len: int,
    *,
    cache: Literal["rotated", "raw"] = "rotated",
    window: int | None = None,
    attention_mask: torch.Tensor | None = None,
    position_ids: torch.Tensor | None = None,
    pairing: Literal["interleaved", "half"] = "half",
    base: float = 10000.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The prefill of prompt_len tokens, then one token at a time: (out, cached_keys). See the module docstring."""
    raise NotImplementedError("decode is not implemented yet")
