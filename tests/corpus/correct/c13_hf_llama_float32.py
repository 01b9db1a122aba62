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
