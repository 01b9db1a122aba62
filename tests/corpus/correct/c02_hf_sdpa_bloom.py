# Styles: F.scaled_dot_product_attention for out with weights computed apart; float64 table cast; nn.Embedding + position_ids buffer with IndexError (HF/nn.Embedding practice); HF rotate_half with cached cos/sin; BLOOM closed-form slopes; finfo(float32).min future mask (HF practice).
import math

import torch
import torch.nn.functional as F
from torch import nn


def attention(q, k, v, bias=None):
    scale = 1.0 / math.sqrt(q.size(-1))
    mask = None if bias is None else bias.to(dtype=q.dtype, device=q.device)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale)
    logits = torch.matmul(q, k.transpose(-1, -2)) * scale
    if mask is not None:
        logits = logits + mask
    weights = F.softmax(logits, dim=-1)
    return out, weights


def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    position = torch.arange(seq_len, dtype=torch.float64).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float64) * (-math.log(base) / d_model))
    pe = torch.zeros(seq_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe.to(torch.float32)


class LearnedPositionalEmbedding(nn.Module):
    def __init__(self, max_len, d_model):
        super().__init__()
        self.max_len = max_len
        self.wpe = nn.Embedding(max_len, d_model)
        nn.init.normal_(self.wpe.weight, std=0.02)
        self.register_buffer("position_ids", torch.arange(max_len).expand((1, -1)), persistent=False)

    def forward(self, x):
        seq_len = x.size(1)
        if seq_len > self.max_len:
            # nn.Embedding itself raises IndexError for an out-of-range index.
            raise IndexError(f"index out of range: sequence length {seq_len} > max_len {self.max_len}")
        return x + self.wpe(self.position_ids[:, :seq_len])


_ROPE_CACHE = {}


def _cos_sin(seq_len, dim, base, device):
    key = (seq_len, dim, base, str(device))
    if key not in _ROPE_CACHE:
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float64, device=device) / dim))
        t = torch.arange(seq_len, dtype=torch.float64, device=device)
        freqs = torch.outer(t, inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        _ROPE_CACHE[key] = (emb.cos().float(), emb.sin().float())
    return _ROPE_CACHE[key]


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rope(x, positions=None, base=10000.0):
    seq_len = x.shape[-2]
    if positions is None:
        cos, sin = _cos_sin(seq_len, x.shape[-1], base, x.device)
    else:
        needed = int(positions.max()) + 1 if x.device.type != "meta" else seq_len
        cos, sin = _cos_sin(max(needed, 1), x.shape[-1], base, x.device)
        cos, sin = cos[positions], sin[positions]
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    xw = x.to(work)
    out = xw * cos.to(work) + rotate_half(xw) * sin.to(work)
    return out.to(x.dtype)


def _get_slopes(num_heads):
    closest_power_of_2 = 2 ** math.floor(math.log2(num_heads))
    base = torch.tensor(2 ** (-(2 ** -(math.log2(closest_power_of_2) - 3))), dtype=torch.float32)
    powers = torch.arange(1, 1 + closest_power_of_2, dtype=torch.int32)
    slopes = torch.pow(base, powers)
    if closest_power_of_2 != num_heads:
        extra_base = torch.tensor(2 ** (-(2 ** -(math.log2(2 * closest_power_of_2) - 3))), dtype=torch.float32)
        num_remaining_heads = min(closest_power_of_2, num_heads - closest_power_of_2)
        extra_powers = torch.arange(1, 1 + 2 * num_remaining_heads, 2, dtype=torch.int32)
        slopes = torch.cat([slopes, torch.pow(extra_base, extra_powers)], dim=0)
    return slopes


def alibi_slopes(n_heads):
    return _get_slopes(n_heads)


def alibi_bias(n_heads, seq_len):
    pos = torch.arange(seq_len)
    rel = (pos[None, :] - pos[:, None]).to(torch.float32)  # j - i
    bias = _get_slopes(n_heads)[:, None, None] * rel
    return bias.masked_fill(rel > 0, torch.finfo(torch.float32).min)


# ---- decode: a buffer preallocated for the whole sequence and filled with index_copy_ (static-cache style), the
# sliding window and the padding as one boolean mask for F.scaled_dot_product_attention, cos/sin tables gathered
# by position; the interleaved pairing by repeat_interleave and a pairwise swap.


def _swap_pairs(x):
    return torch.stack((-x[..., 1::2], x[..., 0::2]), dim=-1).flatten(-2)


def _rotate_by(x, positions, base, pairing):
    dim = x.shape[-1]
    needed = int(positions.max()) + 1
    cos, sin = _cos_sin(max(needed, 1), dim, base, x.device)  # float32 (seq, D), halves repeated
    cos, sin = cos[positions.clamp(min=0)][:, None], sin[positions.clamp(min=0)][:, None]  # (B, 1, N, D)
    if pairing == "interleaved":
        cos = cos[..., : dim // 2].repeat_interleave(2, dim=-1)
        sin = sin[..., : dim // 2].repeat_interleave(2, dim=-1)
        turned = _swap_pairs(x)
    else:
        turned = rotate_half(x)
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    return (x.to(work) * cos.to(work) + turned.to(work) * sin.to(work)).to(x.dtype)


def decode(q, k, v, prompt_len, *, cache="rotated", window=None, attention_mask=None,
           position_ids=None, pairing="half", base=10000.0):
    b, h, n, d = q.shape
    keep = torch.ones(b, n, dtype=torch.bool, device=q.device)
    if attention_mask is not None:
        keep[:, :prompt_len] = attention_mask != 0
    pos = position_ids if position_ids is not None else keep.long().cumsum(1) - 1
    key_buffer = torch.zeros(b, h, n, d, dtype=q.dtype, device=q.device)
    value_buffer = torch.zeros_like(key_buffer)
    outs = []
    for lo, hi in [(0, prompt_len)] + [(t, t + 1) for t in range(prompt_len, n)]:
        slots = torch.arange(lo, hi, device=q.device)
        new_keys = k[:, :, lo:hi] if cache == "raw" else _rotate_by(k[:, :, lo:hi], pos[:, lo:hi], base, pairing)
        key_buffer.index_copy_(2, slots, new_keys.contiguous())
        value_buffer.index_copy_(2, slots, v[:, :, lo:hi].contiguous())
        keys = key_buffer[:, :, :hi]
        if cache == "raw":
            keys = _rotate_by(keys, pos[:, :hi], base, pairing)
        kv = torch.arange(hi, device=q.device)
        visible = (kv[None, :] <= slots[:, None]) & keep[:, None, None, :hi]
        if window is not None:
            visible = visible & (slots[:, None] - kv[None, :] < window)
        query = _rotate_by(q[:, :, lo:hi], pos[:, lo:hi], base, pairing)
        outs.append(F.scaled_dot_product_attention(query, keys, value_buffer[:, :, :hi], attn_mask=visible))
    kept = n if window is None else min(window, n)
    return torch.cat(outs, dim=2), key_buffer[:, :, n - kept:]
