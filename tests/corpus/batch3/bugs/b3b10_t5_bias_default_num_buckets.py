# Bug (t5): t5: t5_relative_bias does not pass num_buckets = table.shape[0], so every table is bucketed as if it had 32 rows. Base: correct/b3c09_keras_hub_port.py (one line changed).
import math

import torch
from torch import nn


def _masked_softmax(attention_scores, attention_mask=None):
    if attention_mask is not None:
        attention_scores = attention_scores + attention_mask
    return torch.softmax(attention_scores, dim=-1)


def attention(q, k, v, bias=None):
    key_dim = q.shape[-1]
    query = torch.multiply(q, 1.0 / math.sqrt(float(key_dim)))
    attention_scores = torch.einsum("...kd,...qd->...qk", k, query)
    attention_scores = _masked_softmax(attention_scores, bias).to(q.dtype)
    attention_output = torch.einsum("...qk,...kd->...qd", attention_scores, v.to(q.dtype))
    return attention_output, attention_scores


def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    hidden_size = d_model
    positions = torch.arange(seq_len, dtype=torch.float64)
    min_freq = 1.0 / base
    timescales = torch.pow(
        torch.tensor(min_freq, dtype=torch.float64),
        (2 * (torch.arange(hidden_size) // 2)).to(torch.float64) / hidden_size,
    )
    angles = positions[:, None] * timescales[None, :]
    cos_mask = (torch.arange(hidden_size) % 2).to(torch.float64)  # 1 in the odd columns
    sin_mask = 1 - cos_mask
    positional_encodings = torch.sin(angles) * sin_mask + torch.cos(angles) * cos_mask
    return positional_encodings.to(torch.float32)


class LearnedPositionalEmbedding(nn.Module):
    def __init__(self, max_len, d_model):
        super().__init__()
        self.sequence_length = max_len
        self.position_embeddings = nn.Parameter(nn.init.trunc_normal_(torch.empty(max_len, d_model), std=0.02))

    def forward(self, inputs, start_index=0):
        sequence_length = inputs.shape[-2]
        if start_index + sequence_length > self.sequence_length:
            raise ValueError(
                f"Input sequence length {sequence_length} is greater than sequence_length "
                f"(max_len) {self.sequence_length} of the position embedding."
            )
        embeddings = self.position_embeddings[start_index : start_index + sequence_length]
        return inputs + torch.broadcast_to(embeddings, inputs.shape)


def _get_inverse_freq(rotary_dim, max_wavelength, device):
    freq_range = torch.arange(0, rotary_dim, 2, dtype=torch.float32, device=device) / rotary_dim
    return 1.0 / (max_wavelength ** freq_range)


def _apply_rotary_pos_emb(tensor, cos_emb, sin_emb):
    x1, x2 = torch.split(tensor, tensor.shape[-1] // 2, dim=-1)
    half_rot_tensor = torch.stack((-x2, x1), dim=-2).reshape(tensor.shape)
    return (tensor * cos_emb) + (half_rot_tensor * sin_emb)


def apply_rope(x, positions=None, base=10000.0):
    if positions is None:
        positions = torch.arange(x.shape[-2], device=x.device)
    compute = torch.float64 if x.dtype == torch.float64 else torch.float32
    inverse_freq = _get_inverse_freq(x.shape[-1], base, x.device).to(compute)
    freq = torch.einsum("i,j->ij", positions.to(compute), inverse_freq)
    embedding = torch.stack((freq, freq), dim=-2).flatten(-2)  # [T, D]: (freq | freq)
    out = _apply_rotary_pos_emb(x.to(compute), torch.cos(embedding), torch.sin(embedding))
    return out.to(x.dtype)


def alibi_slopes(n_heads):
    def slopes_power_of_2(n):
        return [2 ** (-8 / n * (i + 1)) for i in range(n)]

    if n_heads & (n_heads - 1) == 0:
        return torch.tensor(slopes_power_of_2(n_heads), dtype=torch.float32)
    c = 2 ** int(math.log2(n_heads))
    extra = slopes_power_of_2(2 * c)[::2][: n_heads - c]
    return torch.tensor(slopes_power_of_2(c) + extra, dtype=torch.float32)


def alibi_bias(n_heads, seq_len):
    query_positions = torch.arange(seq_len, dtype=torch.float32)[:, None]
    key_positions = torch.arange(seq_len, dtype=torch.float32)[None, :]
    distance = torch.abs(query_positions - key_positions)
    alibi = -alibi_slopes(n_heads)[:, None, None] * distance[None]
    causal_mask = (key_positions <= query_positions).to(torch.float32)  # 1 = may attend
    return alibi + (1.0 - causal_mask) * -1e9


def t5_relative_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    relative_buckets = 0
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (relative_position > 0).to(torch.int64) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.minimum(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    relative_position_if_large = max_exact + (
        torch.log(relative_position.to(torch.float32) / max_exact)
        / math.log(max_distance / max_exact)
        * (num_buckets - max_exact)
    ).to(torch.int64)
    relative_position_if_large = torch.minimum(relative_position_if_large, torch.full_like(relative_position_if_large, num_buckets - 1))
    relative_buckets += torch.where(is_small, relative_position, relative_position_if_large)
    return relative_buckets.to(torch.int64)


def t5_relative_bias(table, query_len, key_len, bidirectional=True, max_distance=128):
    context_position = torch.arange(query_len, device=table.device)[:, None]
    memory_position = torch.arange(key_len, device=table.device)[None, :]
    relative_position = memory_position - context_position
    rp_bucket = t5_relative_bucket(relative_position, bidirectional, max_distance=max_distance)
    values = nn.functional.embedding(rp_bucket, table)  # [Tq, Tk, H]
    return values.permute(2, 0, 1)
