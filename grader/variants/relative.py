"""Correct ALiBi and T5 functions as published code writes them (see ``grader.variants``)."""

from __future__ import annotations

from grader.variants import transform

PRESS_SLOPES = """
def alibi_slopes(n_heads):
    def get_slopes_power_of_2(n):
        start = 2 ** (-2 ** -(math.log2(n) - 3))
        ratio = start
        return [start * ratio ** i for i in range(n)]

    if math.log2(n_heads).is_integer():
        slopes = get_slopes_power_of_2(n_heads)
    else:
        closest_power_of_2 = 2 ** math.floor(math.log2(n_heads))
        slopes = get_slopes_power_of_2(closest_power_of_2) + \\
            get_slopes_power_of_2(2 * closest_power_of_2)[0::2][: n_heads - closest_power_of_2]
    return torch.tensor(slopes, dtype=torch.float32)
"""

BLOOM_SLOPES = """
def alibi_slopes(n_heads):
    closest_power_of_2 = 2 ** math.floor(math.log2(n_heads))
    base = torch.tensor(2 ** (-(2 ** -(math.log2(closest_power_of_2) - 3))), dtype=torch.float32)
    powers = torch.arange(1, 1 + closest_power_of_2, dtype=torch.int32)
    slopes = torch.pow(base, powers)
    if closest_power_of_2 != n_heads:
        extra_base = torch.tensor(2 ** (-(2 ** -(math.log2(2 * closest_power_of_2) - 3))), dtype=torch.float32)
        num_remaining_heads = min(closest_power_of_2, n_heads - closest_power_of_2)
        extra_powers = torch.arange(1, 1 + 2 * num_remaining_heads, 2, dtype=torch.int32)
        slopes = torch.cat([slopes, torch.pow(extra_base, extra_powers)], dim=0)
    return slopes
"""

ODD_POWER_SLOPES = """
def alibi_slopes(n_heads):
    n = 2 ** math.floor(math.log2(n_heads))
    m = torch.pow(torch.tensor(2.0 ** (-8.0 / n)), torch.arange(1, 1 + n))
    if n < n_heads:
        m_hat = torch.pow(torch.tensor(2.0 ** (-4.0 / n)), torch.arange(1, 1 + 2 * (n_heads - n), 2))
        m = torch.cat([m, m_hat])
    return m.float()
"""

FINFO_TRIU_BIAS = """
def alibi_bias(n_heads, seq_len):
    positions = torch.arange(seq_len)
    distance = (positions[None, :] - positions[:, None]).float()  # j - i
    bias = alibi_slopes(n_heads)[:, None, None] * distance
    future = torch.triu(torch.ones(seq_len, seq_len, dtype=torch.bool), diagonal=1)
    return bias.masked_fill(future, torch.finfo(torch.float32).min)
"""

PRODUCTS_DIFFERENCE_BIAS = """
def alibi_bias(n_heads, seq_len):
    m = alibi_slopes(n_heads)[:, None]
    scaled = m * torch.arange(seq_len, dtype=torch.float32)  # (H, T): m * position
    bias = scaled[:, None, :] - scaled[:, :, None]  # m j - m i
    return torch.where(torch.ones(seq_len, seq_len, dtype=torch.bool).tril(), bias, float("-inf"))
"""

SYMMETRIC_THEN_MASK = """
def alibi_bias(n_heads, seq_len):
    i = torch.arange(seq_len)
    bias = -(i[None, :] - i[:, None]).abs().float() * alibi_slopes(n_heads).view(-1, 1, 1)
    return bias.masked_fill(i[None, :] > i[:, None], float("-inf"))
"""

FLOAT64_BIAS = """
def alibi_bias(n_heads, seq_len):
    below = 2 ** math.floor(math.log2(n_heads))
    exponents = [8.0 * (h + 1) / below for h in range(below)]
    exponents += [8.0 * (2 * h + 1) / (2 * below) for h in range(n_heads - below)]
    slopes = torch.tensor([2.0 ** -e for e in exponents], dtype=torch.float64)
    i = torch.arange(seq_len, dtype=torch.float64)
    bias = -slopes[:, None, None] * (i[:, None] - i[None, :])
    return bias.masked_fill(i[None, :] > i[:, None], -10000.0).float()
"""

HF_BUCKET = """
def t5_relative_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    relative_buckets = 0
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    relative_position_if_large = max_exact + (
        torch.log(relative_position.float() / max_exact) / math.log(max_distance / max_exact) * (num_buckets - max_exact)
    ).to(torch.long)
    relative_position_if_large = torch.min(
        relative_position_if_large, torch.full_like(relative_position_if_large, num_buckets - 1))
    relative_buckets += torch.where(is_small, relative_position, relative_position_if_large)
    return relative_buckets
"""

MESH_TF_BUCKET = """
def t5_relative_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    ret = 0
    n = -relative_position
    if bidirectional:
        num_buckets //= 2
        ret += (n < 0).to(torch.long) * num_buckets
        n = torch.abs(n)
    else:
        n = torch.max(n, torch.zeros_like(n))
    max_exact = num_buckets // 2
    is_small = n < max_exact
    val_if_large = max_exact + (
        torch.log(n.double() / max_exact) / math.log(max_distance / max_exact) * (num_buckets - max_exact)).long()
    val_if_large = torch.minimum(val_if_large, torch.full_like(val_if_large, num_buckets - 1))
    return ret + torch.where(is_small, n, val_if_large)
"""

LOG_DIFFERENCE_BUCKET = """
def t5_relative_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    side = num_buckets // 2 if bidirectional else num_buckets
    if bidirectional:
        upper, n = torch.where(relative_position > 0, side, 0), relative_position.abs()
    else:
        upper, n = torch.zeros_like(relative_position), (-relative_position).clamp(min=0)
    exact = side // 2
    logs = torch.log2(n.clamp(min=1).float()) - math.log2(exact)
    far = exact + torch.floor(logs / math.log2(max_distance / exact) * (side - exact)).long()
    return (upper + torch.where(n < exact, n, far.clamp(max=side - 1))).long()
"""

EMBEDDING_BIAS = """
def t5_relative_bias(table, query_len, key_len, bidirectional=True, max_distance=128):
    context_position = torch.arange(query_len, dtype=torch.long)[:, None]
    memory_position = torch.arange(key_len, dtype=torch.long)[None, :]
    buckets = t5_relative_bucket(memory_position - context_position, bidirectional=bidirectional,
                                 num_buckets=table.shape[0], max_distance=max_distance)
    return torch.nn.functional.embedding(buckets, table).permute([2, 0, 1])
"""

TRANSPOSED_GATHER_BIAS = """
def t5_relative_bias(table, query_len, key_len, bidirectional=True, max_distance=128):
    relative = torch.arange(key_len).view(1, -1) - torch.arange(query_len).view(-1, 1)
    buckets = t5_relative_bucket(relative, bidirectional, table.size(0), max_distance)
    return table.t()[:, buckets.flatten()].reshape(table.size(1), query_len, key_len)
"""

TRANSFORMS = [
    transform(
        "Press slopes", "alibi", "Press et al.'s reference get_slopes (start * ratio ** i)", alibi_slopes=PRESS_SLOPES
    ),
    transform(
        "BLOOM slopes",
        "alibi",
        "Hugging Face BLOOM's build_alibi_tensor: float32 torch.pow of int32 powers",
        alibi_slopes=BLOOM_SLOPES,
    ),
    transform(
        "odd-power slopes",
        "alibi",
        "2^(-8/n) to the powers 1..n, then 2^(-4/n) to the odd powers",
        alibi_slopes=ODD_POWER_SLOPES,
    ),
    transform(
        "finfo triu bias",
        "alibi",
        "(j - i) m with a triu mask of torch.finfo(float32).min (Hugging Face)",
        alibi_bias=FINFO_TRIU_BIAS,
    ),
    transform(
        "difference of products bias",
        "alibi",
        "m j - m i, each product rounded, torch.where mask",
        alibi_bias=PRODUCTS_DIFFERENCE_BIAS,
    ),
    transform(
        "symmetric then masked bias",
        "alibi",
        "x-transformers: -m |i - j|, then the causal mask",
        alibi_bias=SYMMETRIC_THEN_MASK,
    ),
    transform(
        "float64 bias",
        "alibi",
        "its own float64 slopes, BERT's -10000.0 mask, cast to float32",
        alibi_bias=FLOAT64_BIAS,
    ),
    transform(
        "HF buckets", "t5", "Hugging Face T5 _relative_position_bucket (float32 log)", t5_relative_bucket=HF_BUCKET
    ),
    transform(
        "Mesh TF buckets",
        "t5",
        "Mesh TensorFlow: n = -r, float64 log, torch.minimum",
        t5_relative_bucket=MESH_TF_BUCKET,
    ),
    transform(
        "log2 difference buckets", "t5", "log2(n) - log2(E), floor, clamp", t5_relative_bucket=LOG_DIFFERENCE_BUCKET
    ),
    transform(
        "embedding bias",
        "t5",
        "Hugging Face T5 compute_bias: an embedding lookup, permute",
        t5_relative_bias=EMBEDDING_BIAS,
    ),
    transform(
        "transposed gather bias",
        "t5",
        "table.t()[:, buckets.flatten()] reshaped",
        t5_relative_bias=TRANSPOSED_GATHER_BIAS,
    ),
]
