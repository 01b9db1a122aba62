# Styles: Hugging Face LlamaRotaryEmbedding (float32 inv_freq @ position_ids, cat(freqs, freqs), rotate_half); eager_attention_forward (matmul * scaling, softmax in float32 then cast back); learned nn.Embedding + expanded position_ids buffer; torch.finfo(dtype).min causal mask built with torch.full + triu.
import math

import torch
from torch import nn


def attention(q, k, v, bias=None):
    scaling = q.shape[-1] ** -0.5
    attn_weights = torch.matmul(q, k.transpose(-2, -1)) * scaling
    if bias is not None:
        attn_weights = attn_weights + bias
    upcast = torch.float64 if q.dtype == torch.float64 else torch.float32
    attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=upcast).to(q.dtype)
    attn_output = torch.matmul(attn_weights, v)
    return attn_output, attn_weights


def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    inv_freq = 1.0 / (base ** (torch.arange(0, d_model, 2, dtype=torch.int64).float() / d_model))
    t = torch.arange(seq_len, dtype=torch.float32)
    freqs = torch.outer(t, inv_freq)
    return torch.stack((freqs.sin(), freqs.cos()), dim=-1).reshape(seq_len, d_model)


class LearnedPositionalEmbedding(nn.Module):
    def __init__(self, max_len, d_model):
        super().__init__()
        self.max_len = max_len
        self.position_embeddings = nn.Embedding(max_len, d_model)
        self.position_embeddings.weight.data.normal_(mean=0.0, std=0.02)
        self.register_buffer("position_ids", torch.arange(max_len).expand((1, -1)), persistent=False)

    def forward(self, x):
        seq_length = x.shape[1]
        if seq_length > self.max_len:
            raise ValueError(f"Sequence length {seq_length} is larger than max_position_embeddings {self.max_len}")
        position_ids = self.position_ids[:, :seq_length]
        return x + self.position_embeddings(position_ids)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rope(x, positions=None, base=10000.0):
    dim = x.shape[-1]
    if positions is None:
        positions = torch.arange(x.shape[-2], device=x.device)
    position_ids = positions[None, :]
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64, device=x.device).float() / dim))
    inv_freq_expanded = inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
    position_ids_expanded = position_ids[:, None, :].float()
    freqs = (inv_freq_expanded.float() @ position_ids_expanded.float()).transpose(1, 2)
    emb = torch.cat((freqs, freqs), dim=-1)[0]
    cos, sin = emb.cos(), emb.sin()
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    xw = x.to(work)
    return (xw * cos.to(work) + rotate_half(xw) * sin.to(work)).to(x.dtype)


def alibi_slopes(n_heads):
    def slopes_power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [start ** (i + 1) for i in range(n)]
    if (n_heads & (n_heads - 1)) == 0:
        return torch.tensor(slopes_power_of_2(n_heads), dtype=torch.float32)
    c = 2 ** math.floor(math.log2(n_heads))
    return torch.tensor(slopes_power_of_2(c) + slopes_power_of_2(2 * c)[0::2][: n_heads - c], dtype=torch.float32)


def alibi_bias(n_heads, seq_len):
    dtype = torch.float32
    min_dtype = torch.finfo(dtype).min
    causal_mask = torch.full((seq_len, seq_len), fill_value=min_dtype, dtype=dtype)
    causal_mask = torch.triu(causal_mask, diagonal=1)
    pos = torch.arange(seq_len, dtype=dtype)
    linear = alibi_slopes(n_heads)[:, None, None] * (pos[None, :] - pos[:, None]).clamp(max=0)
    return linear + causal_mask


# ---- decode: Hugging Face's generate loop: position_ids from the attention mask's cumsum (padding set to 1), then
# the last position + 1 per step; a DynamicCache layer whose update() returns the full states (a sliding one keeps
# W - 1 tokens); float32 cos/sin from inv_freq @ position_ids; an additive finfo.min mask; the softmax in float32;
# GPT-J's rotate_every_two for the interleaved pairing.


class DynamicLayer:
    def __init__(self, sliding_window=None):
        self.keys = self.values = None
        self.sliding_window = sliding_window

    def update(self, key_states, value_states):
        if self.keys is not None:
            key_states = torch.cat([self.keys, key_states], dim=-2)
            value_states = torch.cat([self.values, value_states], dim=-2)
        start = 0 if self.sliding_window is None else max(key_states.shape[-2] - (self.sliding_window - 1), 0)
        self.keys, self.values = key_states[:, :, start:, :], value_states[:, :, start:, :]
        return key_states, value_states


def rotate_every_two(x):
    x1, x2 = x[..., ::2], x[..., 1::2]
    return torch.stack((-x2, x1), dim=-1).flatten(-2)


def _cos_sin_for(position_ids, dim, base, device):
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64, device=device).float() / dim))
    freqs = (inv_freq[None, :, None] @ position_ids[:, None, :].float()).transpose(1, 2)  # (B, N, D/2)
    return freqs.cos(), freqs.sin()


def _apply_rotary(x, cos, sin, pairing):
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    if pairing == "half":
        cos, sin, turn = torch.cat((cos, cos), dim=-1), torch.cat((sin, sin), dim=-1), rotate_half
    else:
        cos, sin, turn = cos.repeat_interleave(2, dim=-1), sin.repeat_interleave(2, dim=-1), rotate_every_two
    xw = x.to(work)
    return (xw * cos[:, None].to(work) + turn(xw) * sin[:, None].to(work)).to(x.dtype)


def decode(q, k, v, prompt_len, *, cache="rotated", window=None, attention_mask=None,
           position_ids=None, pairing="half", base=10000.0):
    bsz, _, total, head_dim = q.shape
    mask_2d = torch.ones(bsz, total, dtype=torch.long, device=q.device)
    if attention_mask is not None:
        mask_2d[:, :prompt_len] = attention_mask.long()
    if position_ids is None:
        position_ids = mask_2d.cumsum(-1) - 1
        position_ids = position_ids.masked_fill(mask_2d == 0, 1)
    key_layer, value_layer = DynamicLayer(window), DynamicLayer(window)
    position_layer = DynamicLayer(window)  # raw keys need their positions at read time
    outputs, past = [], 0
    for stop in [prompt_len] + list(range(prompt_len + 1, total + 1)):
        step_ids = position_ids[:, past:stop]
        cos, sin = _cos_sin_for(step_ids, head_dim, base, q.device)
        query_states = _apply_rotary(q[:, :, past:stop], cos, sin, pairing)
        key_states = k[:, :, past:stop] if cache == "raw" else _apply_rotary(k[:, :, past:stop], cos, sin, pairing)
        key_states, value_states = key_layer.update(key_states, v[:, :, past:stop])
        if cache == "raw":
            key_ids, _ = position_layer.update(step_ids[:, None, :, None], step_ids[:, None, :, None])
            key_cos, key_sin = _cos_sin_for(key_ids[:, 0, :, 0], head_dim, base, q.device)
            key_states = _apply_rotary(key_states, key_cos, key_sin, pairing)
        kv_idx = torch.arange(stop - key_states.shape[-2], stop, device=q.device)
        q_idx = torch.arange(past, stop, device=q.device)
        allowed = (kv_idx[None, :] <= q_idx[:, None]) & mask_2d[:, None, None, kv_idx].bool()
        if window is not None:
            allowed = allowed & (kv_idx[None, :] > q_idx[:, None] - window)
        causal_mask = torch.zeros(allowed.shape, dtype=q.dtype, device=q.device)
        causal_mask = causal_mask.masked_fill(~allowed, torch.finfo(q.dtype).min)
        attn_weights = torch.matmul(query_states, key_states.transpose(2, 3)) * head_dim ** -0.5 + causal_mask
        attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(q.dtype)
        outputs.append(torch.matmul(attn_weights, value_states))
        cached_keys, past = key_states if cache == "rotated" else k[:, :, stop - key_states.shape[-2]:stop], stop
    kept = total if window is None else min(window, total)
    return torch.cat(outputs, dim=2), cached_keys[:, :, cached_keys.shape[-2] - kept:]
