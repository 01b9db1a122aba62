"""The t5 exercise's correct variants: rewrites of its reference the way published code writes them."""

from __future__ import annotations

from grader.variants import transform

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
