# Styles: torchtune RotaryPositionalEmbeddings cache [max_seq_len, D/2, 2] of (cos, sin) indexed by positions (adjacent pairing); sinusoidal via torch.polar in float64 then view_as_real; ALiBi via torch.full(-inf).triu(1) added; learned via nn.Parameter and an explicit length check.
import math

import torch
from torch import nn


def attention(q, k, v, bias=None):
    logits = torch.matmul(q, k.swapaxes(-1, -2)).div(math.sqrt(q.shape[-1]))
    if bias is not None:
        logits = logits.add(bias)
    probs = logits.softmax(dim=-1)
    return probs.matmul(v), probs


def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    theta = 1.0 / (base ** (torch.arange(0, d_model, 2, dtype=torch.float64) / d_model))
    idx_theta = torch.arange(seq_len, dtype=torch.float64)[:, None] * theta[None, :]
    cis = torch.view_as_real(torch.polar(torch.ones_like(idx_theta), idx_theta))  # (T, D/2, [cos, sin])
    return torch.stack([cis[..., 1], cis[..., 0]], dim=-1).flatten(1).to(torch.float32)


class LearnedPositionalEmbedding(nn.Module):
    def __init__(self, max_len, d_model):
        super().__init__()
        self.max_seq_len = max_len
        self.pos_embedding = nn.Parameter(torch.randn(max_len, d_model) * 0.02)

    def forward(self, x):
        bsz, seq_len, _ = x.shape
        if seq_len > self.max_seq_len:
            raise ValueError(f"seq_len ({seq_len}) of input tensor should be smaller than max_seq_len ({self.max_seq_len})")
        return x + self.pos_embedding[:seq_len, :]


def _build_rope_cache(max_seq_len, dim, base, device):
    theta = 1.0 / (base ** (torch.arange(0, dim, 2, device=device)[: dim // 2].double() / dim))
    seq_idx = torch.arange(max_seq_len, dtype=torch.float64, device=device)
    idx_theta = torch.einsum("i, j -> ij", seq_idx, theta)
    return torch.stack([torch.cos(idx_theta), torch.sin(idx_theta)], dim=-1)  # (L, D/2, 2)


def apply_rope(x, positions=None, base=10000.0):
    *lead, seq_len, dim = x.shape
    if positions is None:
        rope_cache = _build_rope_cache(seq_len, dim, base, x.device)
    else:
        rope_cache = _build_rope_cache(int(positions.max()) + 1, dim, base, x.device)[positions]
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    xshaped = x.to(work).reshape(*lead, seq_len, dim // 2, 2)
    rope_cache = rope_cache.to(work)
    x_out = torch.stack(
        [
            xshaped[..., 0] * rope_cache[..., 0] - xshaped[..., 1] * rope_cache[..., 1],
            xshaped[..., 1] * rope_cache[..., 0] + xshaped[..., 0] * rope_cache[..., 1],
        ],
        -1,
    )
    return x_out.flatten(-2).type_as(x)


def alibi_slopes(n_heads):
    c = 2 ** math.floor(math.log2(n_heads))
    ratio = 2.0 ** (-8.0 / c)
    slopes = [ratio ** (h + 1) for h in range(c)]
    if c < n_heads:
        ratio2 = 2.0 ** (-8.0 / (2 * c))
        slopes += [ratio2 ** (h + 1) for h in range(2 * c)][::2][: n_heads - c]
    return torch.tensor(slopes, dtype=torch.float32)


def alibi_bias(n_heads, seq_len):
    pos = torch.arange(seq_len, dtype=torch.float32)
    distance = (pos[:, None] - pos[None, :]).abs()
    causal = torch.full((seq_len, seq_len), float("-inf")).triu(1)
    return -alibi_slopes(n_heads)[:, None, None] * distance + causal


# ---- decode: torchtune's KVCache (preallocated [B, H, max_seq_len, D], index writes at the cache position), a
# boolean mask over the filled part of the buffer, and a (cos, sin) table indexed by the positions.


class KVCache:
    def __init__(self, batch_size, num_heads, max_seq_len, head_dim, dtype, device):
        shape = (batch_size, num_heads, max_seq_len, head_dim)
        self.k_cache = torch.zeros(shape, dtype=dtype, device=device)
        self.v_cache = torch.zeros(shape, dtype=dtype, device=device)
        self.size = 0

    def update(self, k_val, v_val):
        seq_len = k_val.shape[2]
        self.k_cache[:, :, self.size:self.size + seq_len] = k_val
        self.v_cache[:, :, self.size:self.size + seq_len] = v_val
        self.size += seq_len
        return self.k_cache[:, :, :self.size], self.v_cache[:, :, :self.size]


def _pair_table(max_pos, dim, base, device):
    inv = 1.0 / (base ** (torch.arange(0, dim, 2, device=device).double() / dim))
    idx_theta = torch.outer(torch.arange(max_pos, dtype=torch.float64, device=device), inv)
    return torch.stack([idx_theta.cos(), idx_theta.sin()], dim=-1)  # (max_pos, D/2, 2)


def _tt_rope(x, input_pos, base, pairing):
    dim = x.shape[-1]
    rope = _pair_table(int(input_pos.max()) + 1, dim, base, x.device)[input_pos][:, None]  # (B, 1, N, D/2, 2)
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    if pairing == "interleaved":
        xs = x.to(work).reshape(*x.shape[:-1], dim // 2, 2)
    else:
        xs = torch.stack([x[..., : dim // 2], x[..., dim // 2:]], dim=-1).to(work)
    rope = rope.to(work)
    turned = torch.stack([xs[..., 0] * rope[..., 0] - xs[..., 1] * rope[..., 1],
                          xs[..., 1] * rope[..., 0] + xs[..., 0] * rope[..., 1]], -1)
    if pairing == "interleaved":
        return turned.flatten(-2).type_as(x)
    return torch.cat([turned[..., 0], turned[..., 1]], dim=-1).type_as(x)


def decode(q, k, v, prompt_len, *, cache="rotated", window=None, attention_mask=None,
           position_ids=None, pairing="half", base=10000.0):
    bsz, n_heads, seq_len, head_dim = q.shape
    is_real = torch.ones(bsz, seq_len, dtype=torch.bool, device=q.device)
    if attention_mask is not None:
        is_real[:, :prompt_len] = attention_mask.bool()
    input_pos = position_ids if position_ids is not None else (is_real.long().cumsum(-1) - 1).clamp(min=0)
    kv_cache = KVCache(bsz, n_heads, seq_len, head_dim, q.dtype, q.device)
    out = torch.empty(bsz, n_heads, seq_len, head_dim, dtype=q.dtype, device=q.device)
    for start, stop in [(0, prompt_len)] + [(t, t + 1) for t in range(prompt_len, seq_len)]:
        pos = input_pos[:, start:stop]
        k_val = k[:, :, start:stop]
        if cache == "rotated":
            k_val = _tt_rope(k_val, pos, base, pairing)
        keys, values = kv_cache.update(k_val, v[:, :, start:stop])
        if cache == "raw":
            keys = _tt_rope(keys, input_pos[:, :stop], base, pairing)
        q_pos = torch.arange(start, stop, device=q.device)[:, None]
        kv_pos = torch.arange(stop, device=q.device)[None, :]
        mask = (kv_pos <= q_pos) & is_real[:, None, None, :stop]
        if window is not None:
            mask &= kv_pos > q_pos - window
        scores = _tt_rope(q[:, :, start:stop], pos, base, pairing) @ keys.transpose(-2, -1) / math.sqrt(head_dim)
        weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
        out[:, :, start:stop] = weights.nan_to_num(0.0) @ values
    kept = seq_len if window is None else min(window, seq_len)
    return out, kv_cache.k_cache[:, :, seq_len - kept:]
