# Style: Megatron-LM core attention: sequence-first [sq, b*np, hn] layout, raw scores from torch.baddbmm(beta=0, alpha=1/norm_factor) into an empty buffer, an nn.Softmax module, bmm for the context; Megatron's RotaryEmbedding (emb = cat(freqs, freqs) as [s, 1, 1, d], _rotate_half, applied sequence-first); nn.Embedding position table with init_method_normal(0.02) and expanded position_ids; grow-once cached sinusoid table (NeMo-style) with the 2*(i//2) exponent; ALiBi from a tril'd distance matrix; T5 buckets with torch.sign and torch.floor in float64, bias via table[buckets].permute.
import functools
import math

import torch
from torch import nn


def attention(q, k, v, bias=None):
    *lead, sq, hn = q.shape
    sk = k.shape[-2]
    norm_factor = math.sqrt(hn)
    lead = list(torch.broadcast_shapes(tuple(lead), k.shape[:-2], v.shape[:-2]))
    batch = math.prod(lead)
    # [b, np, s, hn] -> [s, b * np, hn], the layout Megatron keeps its activations in
    query_layer = q.expand(*lead, sq, hn).reshape(batch, sq, hn).transpose(0, 1)
    key_layer = k.expand(*lead, sk, hn).reshape(batch, sk, hn).transpose(0, 1)
    value_layer = v.expand(*lead, sk, v.shape[-1]).reshape(batch, sk, v.shape[-1]).transpose(0, 1)
    matmul_input_buffer = torch.empty(batch, sq, sk, dtype=q.dtype, device=q.device)
    matmul_result = torch.baddbmm(
        matmul_input_buffer,
        query_layer.transpose(0, 1),  # [b * np, sq, hn]
        key_layer.transpose(0, 1).transpose(1, 2),  # [b * np, hn, sk]
        beta=0.0,
        alpha=1.0 / norm_factor,
    )
    attention_scores = matmul_result.view(*lead, sq, sk)
    if bias is not None:
        attention_scores = attention_scores + bias
    attention_probs = nn.Softmax(dim=-1)(attention_scores).to(q.dtype)
    # [b * np, sq, sk] x [b * np, sk, hn] -> [b * np, sq, hn]
    context = torch.bmm(attention_probs.reshape(batch, sq, sk), value_layer.transpose(0, 1))
    return context.view(*lead, sq, v.shape[-1]), attention_probs


@functools.lru_cache(maxsize=16)
def _sinusoid_table(max_len, d_model, base):
    column = torch.arange(d_model, dtype=torch.float64)
    exponent = 2 * torch.div(column, 2, rounding_mode="floor") / d_model
    angle = torch.arange(max_len, dtype=torch.float64)[:, None] / (base ** exponent)
    return torch.where(column.long() % 2 == 0, torch.sin(angle), torch.cos(angle)).float()


def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    max_len = 1 << max(seq_len - 1, 0).bit_length()  # grow the cached table in powers of two
    return _sinusoid_table(max_len, d_model, float(base))[:seq_len].clone()


class LearnedPositionalEmbedding(nn.Module):
    def __init__(self, max_len, d_model):
        super().__init__()
        self.max_sequence_length = max_len
        self.position_embeddings = nn.Embedding(max_len, d_model)
        nn.init.normal_(self.position_embeddings.weight, mean=0.0, std=0.02)

    def forward(self, x):
        b, s, _ = x.size()
        if s > self.max_sequence_length:
            raise ValueError(f"sequence length {s} is larger than max_sequence_length {self.max_sequence_length}")
        position_ids = torch.arange(s, dtype=torch.long, device=x.device).unsqueeze(0).expand(b, -1)
        return x + self.position_embeddings(position_ids)


def _rotate_half(x):
    x1, x2 = torch.chunk(x, 2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def _rotary_freqs(positions, dim, base):
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float32, device=positions.device) / dim))
    freqs = torch.outer(positions.to(inv_freq.dtype), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb[:, None, None, :]  # [s, 1, 1, d]


def apply_rope(x, positions=None, base=10000.0):
    *lead, s, d = x.shape
    if positions is None:
        positions = torch.arange(s, device=x.device)
    freqs = _rotary_freqs(positions, d, base)
    # Megatron is sequence first: [b, np, s, d] -> [s, b, np, d]
    t = x.reshape(1, math.prod(lead), s, d).permute(2, 0, 1, 3)
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    cos_, sin_ = freqs.cos().to(work), freqs.sin().to(work)
    t = t.to(work)
    t = (t * cos_) + (_rotate_half(t) * sin_)
    return t.permute(1, 2, 0, 3).reshape(x.shape).to(x.dtype)


def alibi_slopes(n_heads):
    def get_slopes_power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [start ** (i + 1) for i in range(n)]

    if math.log2(n_heads).is_integer():
        slopes = get_slopes_power_of_2(n_heads)
    else:
        closest_power_of_2 = 2 ** math.floor(math.log2(n_heads))
        slopes = get_slopes_power_of_2(closest_power_of_2)
        slopes += get_slopes_power_of_2(2 * closest_power_of_2)[0::2][: n_heads - closest_power_of_2]
    return torch.Tensor(slopes)


def alibi_bias(n_heads, seq_len):
    context = torch.arange(seq_len).view(-1, 1)
    memory = torch.arange(seq_len).view(1, -1)
    distance = (context - memory).tril().float()  # i - j on and below the diagonal, 0 above
    bias = -alibi_slopes(n_heads).view(-1, 1, 1) * distance
    future = torch.ones(seq_len, seq_len, dtype=torch.bool).triu(diagonal=1)
    bias.masked_fill_(future, float("-inf"))
    return bias


def t5_relative_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    if bidirectional:
        num_buckets //= 2
        later = (torch.sign(relative_position) > 0).long() * num_buckets
        n = relative_position.abs()
    else:
        later = torch.zeros_like(relative_position)
        n = torch.relu(-relative_position)
    max_exact = num_buckets // 2
    n64 = n.double()
    log_ratio = torch.log(torch.clamp(n64, min=1.0) / max_exact) / math.log(max_distance / max_exact)
    large = max_exact + torch.floor(log_ratio * (num_buckets - max_exact)).long()
    large = torch.clamp(large, max=num_buckets - 1)
    return later + torch.where(n < max_exact, n, large)


def t5_relative_bias(table, query_len, key_len, bidirectional=True, max_distance=128):
    context_position = torch.arange(query_len, dtype=torch.long, device=table.device)[:, None]
    memory_position = torch.arange(key_len, dtype=torch.long, device=table.device)[None, :]
    rp_bucket = t5_relative_bucket(memory_position - context_position, bidirectional, table.shape[0], max_distance)
    values = table[rp_bucket]  # [q, k, h]
    return values.permute([2, 0, 1]).contiguous()
