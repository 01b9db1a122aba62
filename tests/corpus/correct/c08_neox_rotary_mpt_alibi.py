# Styles: GPT-NeoX RotaryEmbedding module with inv_freq buffer and cos/sin cache (half pairing, rotate_half); MPT gen_slopes (next power of two, odd then even); nn.Embedding position table with position_ids buffer and ValueError; einsum sinusoidal angles.
import math

import torch
from torch import nn


def attention(q, k, v, bias=None):
    norm_factor = math.sqrt(q.shape[-1])
    attn_scores = torch.einsum("...id,...jd->...ij", q, k) / norm_factor
    if bias is not None:
        attn_scores = attn_scores + bias
    attn_probs = torch.nn.functional.softmax(attn_scores, dim=-1)
    return torch.einsum("...ij,...jd->...id", attn_probs, v), attn_probs


def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    inv_freq = 1.0 / (base ** (torch.arange(0.0, d_model, 2.0, dtype=torch.float64) / d_model))
    sinusoid_inp = torch.einsum("i,j->ij", torch.arange(seq_len, dtype=torch.float64), inv_freq)
    out = torch.empty(seq_len, d_model, dtype=torch.float32)
    out[:, 0::2] = sinusoid_inp.sin()
    out[:, 1::2] = sinusoid_inp.cos()
    return out


class LearnedPositionalEmbedding(nn.Module):
    def __init__(self, max_len, d_model):
        super().__init__()
        self.max_len = max_len
        self.position_embeddings = nn.Embedding(max_len, d_model)
        self.register_buffer("position_ids", torch.arange(max_len), persistent=False)

    def forward(self, x):
        seq_length = x.shape[1]
        if seq_length > self.max_len:
            raise ValueError(f"seq_length {seq_length} > max_position_embeddings {self.max_len}")
        return x + self.position_embeddings(self.position_ids[:seq_length])


class RotaryEmbedding(nn.Module):
    def __init__(self, dim, base=10000.0):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self.seq_len_cached = 0
        self.cos_cached = self.sin_cached = None

    def forward(self, seq_len):
        if seq_len > self.seq_len_cached:
            self.seq_len_cached = seq_len
            t = torch.arange(seq_len, dtype=torch.float64, device=self.inv_freq.device)
            freqs = torch.einsum("i,j->ij", t, self.inv_freq)
            emb = torch.cat((freqs, freqs), dim=-1)
            self.cos_cached, self.sin_cached = emb.cos(), emb.sin()
        return self.cos_cached[:seq_len], self.sin_cached[:seq_len]


_ROTARY = {}


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_rope(x, positions=None, base=10000.0):
    key = (x.shape[-1], float(base), x.device.type)
    if key not in _ROTARY:
        _ROTARY[key] = RotaryEmbedding(x.shape[-1], base).to(x.device)
    rotary = _ROTARY[key]
    if positions is None:
        cos, sin = rotary(x.shape[-2])
    else:
        cos, sin = rotary(int(positions.max()) + 1)
        cos, sin = cos[positions], sin[positions]
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    cos, sin, xw = cos.to(work), sin.to(work), x.to(work)
    return (xw * cos + rotate_half(xw) * sin).to(x.dtype)


def gen_slopes(n_heads, alibi_bias_max=8):
    _n_heads = 2 ** math.ceil(math.log2(n_heads))
    m = torch.arange(1, _n_heads + 1, dtype=torch.float32)
    m = m.mul(alibi_bias_max / _n_heads)
    slopes = 1.0 / torch.pow(2, m)
    if _n_heads != n_heads:
        slopes = torch.concat([slopes[1::2], slopes[::2]])[:n_heads]
    return slopes


def alibi_slopes(n_heads):
    return gen_slopes(n_heads)


def alibi_bias(n_heads, seq_len):
    rel = torch.arange(seq_len).view(-1, 1) - torch.arange(seq_len).view(1, -1)  # i - j
    bias = -gen_slopes(n_heads).view(-1, 1, 1) * rel.float()
    return bias.masked_fill(rel < 0, float("-inf"))


# ---- decode: Mistral's rolling buffer (token t in slot t % window, each slot's position kept beside it, the buffer
# unrolled oldest first at the end); GPT-NeoX rotate_half, the interleaved pairing by permuting features to halves.


def _neox_turn(x, positions, base, pairing):
    dim = x.shape[-1]
    order = torch.arange(dim, device=x.device)
    if pairing == "interleaved":
        order = torch.cat([order[0::2], order[1::2]])  # (x0, x2, ..., x1, x3, ...): pairs become halves
        x = x[..., order]
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float64, device=x.device) / dim))
    freqs = positions.double()[..., None] * inv_freq
    emb = torch.cat((freqs, freqs), dim=-1)[:, None]
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    xw = x.to(work)
    out = xw * emb.cos().to(work) + rotate_half(xw) * emb.sin().to(work)
    if pairing == "interleaved":
        out = out[..., torch.argsort(order)]
    return out.to(x.dtype)


def decode(q, k, v, prompt_len, *, cache="rotated", window=None, attention_mask=None,
           position_ids=None, pairing="half", base=10000.0):
    B, H, T, D = q.shape
    size = T if window is None else window
    real = torch.ones(B, T, dtype=torch.bool, device=q.device)
    if attention_mask is not None:
        real[:, :prompt_len] = attention_mask.bool()
    if position_ids is None:
        position_ids = (real.long().cumsum(-1) - 1).clamp(min=0)
    buf_k, buf_v = q.new_zeros(B, H, size, D), q.new_zeros(B, H, size, D)
    buf_pos = position_ids.new_zeros(B, size)
    buf_ok = torch.zeros(B, size, dtype=torch.bool, device=q.device)
    scale = 1.0 / math.sqrt(D)
    # The prefill attends within the prompt (causal, windowed); the buffer then takes its last `size` tokens.
    prompt_pos = position_ids[:, :prompt_len]
    qp, kp = (_neox_turn(x[:, :, :prompt_len], prompt_pos, base, pairing) for x in (q, k))
    i = torch.arange(prompt_len, device=q.device)
    allowed = (i[None, :] <= i[:, None]) & (i[None, :] > i[:, None] - size) & real[:, None, None, :prompt_len]
    scores = (qp @ kp.transpose(-1, -2) * scale).masked_fill(~allowed, float("-inf"))
    outs = [torch.softmax(scores, dim=-1) @ v[:, :, :prompt_len]]
    for t in range(max(0, prompt_len - size), T):
        slot = t % size
        key = k[:, :, t:t + 1] if cache == "raw" else _neox_turn(k[:, :, t:t + 1], position_ids[:, t:t + 1], base, pairing)
        buf_k[:, :, slot], buf_v[:, :, slot] = key[:, :, 0], v[:, :, t]
        buf_pos[:, slot], buf_ok[:, slot] = position_ids[:, t], real[:, t]
        if t < prompt_len:
            continue
        keys = buf_k if cache == "rotated" else _neox_turn(buf_k, buf_pos, base, pairing)
        query = _neox_turn(q[:, :, t:t + 1], position_ids[:, t:t + 1], base, pairing)
        scores = (query @ keys.transpose(-1, -2) * scale).masked_fill(~buf_ok[:, None, None, :], float("-inf"))
        outs.append(torch.softmax(scores, dim=-1) @ buf_v)
    order = (torch.arange(size, device=q.device) + T) % size  # oldest first: the slot after the newest
    kept = min(size, T)
    return torch.cat(outs, dim=2), buf_k[:, :, order][:, :, size - kept:]
