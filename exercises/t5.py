"""T5's relative position buckets and bias (Raffel et al., JMLR 2020, section 2.1; the bucket rule is
Mesh TensorFlow's _relative_position_bucket, which Hugging Face's T5 copies).

    t5_relative_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128) -> bucket
        relative_position: a LongTensor of any shape, key position - query position
                           (negative for keys before the query, positive for keys after it)
        bucket: a LongTensor (torch.int64) of the same shape, each entry in 0 .. num_buckets - 1

        bidirectional (an encoder):  N = num_buckets // 2 buckets per direction, n = |relative_position|;
                                     keys after the query (relative_position > 0) add N to their bucket
        causal (bidirectional=False, a decoder):  N = num_buckets, n = max(-relative_position, 0)
                                     (every key after the query falls in bucket 0)
        E = N // 2 exact buckets:    bucket = n                                                 for n < E
        log-spaced beyond:           bucket = min(E + floor(ln(n / E) / ln(max_distance / E) * (N - E)), N - 1)

    t5_relative_bias(table, query_len, key_len, bidirectional=True, max_distance=128) -> bias
        table: [num_buckets, n_heads], one learned scalar per bucket and head (num_buckets = table.shape[0])
        bias:  [n_heads, Tq, Tk] (Tq = query_len, Tk = key_len), the dtype of table
        bias[h, i, j] = table[t5_relative_bucket(j - i, bidirectional, num_buckets, max_distance), h]

Rules:
- Every distance from max_distance on shares the last bucket of its direction (N - 1; 2N - 1 for later keys).
- The arguments keep E >= 1 and max_distance > E (what the formula needs); num_buckets may be odd.
- The bucket never decreases as a key moves further from the query in the same direction.
- Where the logarithm lands exactly on a bucket edge, float32 (as Mesh TensorFlow computes it) or
  float64 are both accepted.
- Vectorised: no Python loop over positions. Do not modify the inputs; non-contiguous inputs (e.g. a
  transposed table) work.
"""

from __future__ import annotations

import math  # noqa: F401 -- the log-spaced buckets need math.log

import torch


def t5_relative_bucket(
    relative_position: torch.Tensor, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128
) -> torch.Tensor:
    """Bucket index (torch.int64, same shape) of each key position - query position (see the module docstring)."""
    raise NotImplementedError("t5_relative_bucket is not implemented yet")


def t5_relative_bias(
    table: torch.Tensor, query_len: int, key_len: int, bidirectional: bool = True, max_distance: int = 128
) -> torch.Tensor:
    """[n_heads, Tq, Tk]: bias[h, i, j] = table[bucket(j - i), h]; table is [num_buckets, n_heads]."""
    raise NotImplementedError("t5_relative_bias is not implemented yet")
