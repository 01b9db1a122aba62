# Style: torch.func (functorch): every function written for ONE item (one query, one token, one head, one relative position) and lifted with torch.vmap over the other axes; leading axes flattened into one vmapped axis; the learned table through torch.func.functional_call-friendly plain indexing; RoPE as a per-token 2x2 rotation of (x[2i], x[2i+1]); ALiBi as a vmap over heads of one [T, T] row builder; T5 buckets of one scalar vmapped over the flattened positions, bias as a vmap over heads.
import math

import torch
from torch import nn
from torch.func import vmap


def _attend_one_query(q_row, k, v, bias_row):
    """q_row [D], k [Tk, D], v [Tk, Dv], bias_row [Tk] -> ([Dv], [Tk])."""
    logits = (k @ q_row) / math.sqrt(q_row.shape[-1]) + bias_row
    weights = torch.softmax(logits, dim=-1)
    return weights @ v, weights


# one query -> all queries of one (batch, head) -> all (batch, head) pairs
_attend = vmap(vmap(_attend_one_query, in_dims=(0, None, None, 0)), in_dims=(0, 0, 0, 0))


def attention(q, k, v, bias=None):
    t_q, t_k = q.shape[-2], k.shape[-2]
    lead = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    if bias is None:
        bias = torch.zeros((), dtype=q.dtype, device=q.device)
    lead = torch.broadcast_shapes(lead, bias.shape[:-2])
    batch = math.prod(lead)

    def flat(t, tail):
        return t.expand(*lead, *tail).reshape(batch, *tail)

    qf = flat(q, (t_q, q.shape[-1]))
    kf = flat(k, (t_k, k.shape[-1]))
    vf = flat(v.to(q.dtype), (t_k, v.shape[-1]))
    bf = flat(bias.to(q.dtype), (t_q, t_k))
    if batch == 0 or t_q == 0:
        weights = qf.new_zeros(batch, t_q, t_k)
        return qf.new_zeros(*lead, t_q, v.shape[-1]), weights.reshape(*lead, t_q, t_k)
    out, weights = _attend(qf, kf, vf, bf)
    return out.reshape(*lead, t_q, v.shape[-1]), weights.reshape(*lead, t_q, t_k)


def _encode_position(p, inv_freq):
    """One position -> one row: (sin, cos) of each frequency, interleaved."""
    angles = p * inv_freq
    return torch.stack((torch.sin(angles), torch.cos(angles)), dim=-1).flatten()


def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    inv_freq = base ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    positions = torch.arange(seq_len, dtype=torch.float64)
    if seq_len == 0:
        return torch.zeros(0, d_model, dtype=torch.float32)
    return vmap(_encode_position, in_dims=(0, None))(positions, inv_freq).to(torch.float32)


class LearnedPositionalEmbedding(nn.Module):
    def __init__(self, max_len, d_model):
        super().__init__()
        self.max_len = max_len
        self.table = nn.Parameter(torch.randn(max_len, d_model) / 50)  # std 0.02

    def forward(self, x):
        seq_len = x.size(-2)
        if seq_len > self.max_len:
            raise ValueError(f"got {seq_len} positions, the table has max_len={self.max_len} rows")
        return x + self.table[:seq_len]


def _rotate_token(x_tok, p, inv_freq):
    """x_tok [D], p a scalar position -> x_tok with pair i turned by p * inv_freq[i]."""
    angle = p * inv_freq
    c, s = torch.cos(angle), torch.sin(angle)
    rotation = torch.stack((torch.stack((c, -s), -1), torch.stack((s, c), -1)), -2)  # [D/2, 2, 2]
    pairs = x_tok.reshape(-1, 2, 1)
    return (rotation @ pairs).reshape(-1)


_rotate_tokens = vmap(vmap(_rotate_token, in_dims=(0, 0, None)), in_dims=(0, None, None))


def apply_rope(x, positions=None, base=10000.0):
    *lead, t, d = x.shape
    compute = torch.float64 if x.dtype == torch.float64 else torch.float32
    if positions is None:
        positions = torch.arange(t, device=x.device)
    inv_freq = base ** (-torch.arange(0, d, 2, dtype=compute, device=x.device) / d)
    flat = x.to(compute).reshape(math.prod(lead), t, d)
    if flat.numel() == 0:
        return x.clone()
    out = _rotate_tokens(flat, positions.to(compute), inv_freq)
    return out.reshape(x.shape).to(x.dtype)


def alibi_slopes(n_heads):
    def power_of_2_slopes(n):
        return [2.0 ** (-8.0 * (h + 1) / n) for h in range(n)]

    c = 2 ** math.floor(math.log2(n_heads))
    slopes = power_of_2_slopes(c) + power_of_2_slopes(2 * c)[::2][: n_heads - c]
    return torch.tensor(slopes, dtype=torch.float32)


def _head_bias(slope, i, j):
    """One head: -slope * (i - j) on and below the diagonal, -inf above."""
    return torch.where(j <= i, -slope * (i - j), torch.full_like(i, float("-inf")))


def alibi_bias(n_heads, seq_len):
    i = torch.arange(seq_len, dtype=torch.float32)[:, None].expand(seq_len, seq_len)
    j = torch.arange(seq_len, dtype=torch.float32)[None, :].expand(seq_len, seq_len)
    return vmap(_head_bias, in_dims=(0, None, None))(alibi_slopes(n_heads), i, j)


def _bucket_one(r, bidirectional, num_buckets, max_distance):
    if bidirectional:
        num_buckets //= 2
        offset = torch.where(r > 0, num_buckets, 0)
        n = torch.abs(r)
    else:
        offset = torch.zeros_like(r)
        n = torch.clamp(-r, min=0)
    max_exact = num_buckets // 2
    log_part = torch.log(torch.clamp(n, min=1).double() / max_exact) / math.log(max_distance / max_exact)
    large = torch.clamp(max_exact + (log_part * (num_buckets - max_exact)).long(), max=num_buckets - 1)
    return offset + torch.where(n < max_exact, n, large)


def t5_relative_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    flat = relative_position.reshape(-1).long()
    if flat.numel() == 0:
        return torch.zeros_like(relative_position, dtype=torch.int64)
    one = lambda r: _bucket_one(r, bidirectional, num_buckets, max_distance)  # noqa: E731
    return vmap(one)(flat).reshape(relative_position.shape)


def t5_relative_bias(table, query_len, key_len, bidirectional=True, max_distance=128):
    rel = torch.arange(key_len, device=table.device)[None, :] - torch.arange(query_len, device=table.device)[:, None]
    buckets = t5_relative_bucket(rel, bidirectional, table.shape[0], max_distance)
    return vmap(lambda column: column[buckets], in_dims=1)(table)  # one head at a time -> [H, Tq, Tk]
