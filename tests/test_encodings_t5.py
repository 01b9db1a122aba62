"""T5's relative buckets and bias: against an independent per-element transcription of Hugging Face's
``_relative_position_bucket``, against values worked out by hand, and the bias's layout."""

import math

import pytest
import torch

from poslab.encodings import t5_relative_bias, t5_relative_bucket

SETTINGS = [(32, 128), (32, 256), (16, 64), (64, 512), (8, 20)]  # (num_buckets, max_distance)
RELATIVE = range(-1000, 1001)


def bucket_by_formula(relative_position: int, bidirectional: bool, num_buckets: int, max_distance: int) -> int:
    """Hugging Face's T5 bucket rule, one integer at a time (relative_position = key - query)."""
    bucket = 0
    if bidirectional:
        num_buckets //= 2
        if relative_position > 0:
            bucket = num_buckets
        distance = abs(relative_position)
    else:
        distance = max(-relative_position, 0)
    max_exact = num_buckets // 2
    if distance < max_exact:
        return bucket + distance
    steps = math.log(distance / max_exact) / math.log(max_distance / max_exact) * (num_buckets - max_exact)
    return bucket + min(max_exact + int(steps), num_buckets - 1)


@pytest.mark.parametrize("bidirectional", [True, False], ids=["bidirectional", "causal"])
@pytest.mark.parametrize("num_buckets, max_distance", SETTINGS)
def test_buckets_agree_with_the_formula_from_minus_to_plus_1000(bidirectional, num_buckets, max_distance):
    relative = torch.tensor(list(RELATIVE))
    got = t5_relative_bucket(relative, bidirectional, num_buckets, max_distance)
    expected = [bucket_by_formula(r, bidirectional, num_buckets, max_distance) for r in RELATIVE]
    assert got.dtype == torch.long and got.shape == relative.shape
    mismatches = [(r, g, e) for r, g, e in zip(RELATIVE, got.tolist(), expected) if g != e]
    assert not mismatches, mismatches[:10]


# Worked by hand. Bidirectional (32, 128): 16 buckets per direction, 8 exact; beyond,
# bucket = 8 + floor(ln(n/8) / ln(16) * 8): n = 16 -> 8 + 2 = 10, n = 32 -> 8 + 4 = 12,
# n = 64 -> 8 + 6 = 14, n = 127 -> ln(15.875)/ln(16) = 0.997 -> 8 + 7 = 15, n = 128 -> 16, clamped to 15.
# A later key (r > 0) adds 16.
BIDIRECTIONAL_32_128 = {
    0: 0,
    -3: 3,
    3: 19,
    -7: 7,
    -8: 8,
    -16: 10,
    -32: 12,
    -64: 14,
    -127: 15,
    -128: 15,
    -1000: 15,
    1: 17,
    128: 31,
    1000: 31,
}
# Causal (32, 128): 32 buckets, 16 exact, all later keys in bucket 0; bucket = 16 + floor(ln(n/16)/ln(8)*16):
# n = 32 -> 16 + 5.33 -> 21, n = 64 -> 16 + 10.67 -> 26, n = 100 -> ln(6.25)/ln(8) = 0.881 -> 16 + 14 = 30,
# n = 128 -> 32, clamped to 31.
CAUSAL_32_128 = {5: 0, 1000: 0, 0: 0, -5: 5, -15: 15, -16: 16, -32: 21, -64: 26, -100: 30, -128: 31, -999: 31}
# Bidirectional (8, 20): 4 per direction, 2 exact; bucket = 2 + floor(ln(n/2)/ln(10)*2):
# n = 3 -> 0.35 -> 2, n = 10 -> 1.40 -> 3, n = 20 -> 2 + 2 = 4, clamped to 3; later keys add 4.
BIDIRECTIONAL_8_20 = {-1: 1, -2: 2, -3: 2, -10: 3, -20: 3, 1: 5, 3: 6, 20: 7}


@pytest.mark.parametrize(
    "bidirectional, num_buckets, max_distance, values",
    [(True, 32, 128, BIDIRECTIONAL_32_128), (False, 32, 128, CAUSAL_32_128), (True, 8, 20, BIDIRECTIONAL_8_20)],
    ids=["bidirectional-32-128", "causal-32-128", "bidirectional-8-20"],
)
def test_buckets_match_values_worked_out_by_hand(bidirectional, num_buckets, max_distance, values):
    got = t5_relative_bucket(torch.tensor(list(values)), bidirectional, num_buckets, max_distance)
    assert dict(zip(values, got.tolist())) == values


def test_buckets_keep_the_input_shape():
    relative = torch.arange(-6, 6).reshape(3, 4)
    got = t5_relative_bucket(relative)
    assert got.shape == (3, 4) and got.dtype == torch.long
    assert got.tolist() == [[bucket_by_formula(r, True, 32, 128) for r in row] for row in relative.tolist()]


def test_too_few_buckets_is_explained():
    with pytest.raises(ValueError, match="no exact bucket"):
        t5_relative_bucket(torch.arange(3), bidirectional=True, num_buckets=2)


@pytest.mark.parametrize("bidirectional", [True, False], ids=["bidirectional", "causal"])
def test_bias_reads_the_table_at_the_bucket_of_key_minus_query(generator, bidirectional):
    num_buckets, n_heads, query_len, key_len, max_distance = 16, 3, 5, 40, 20
    table = torch.randn(num_buckets, n_heads, generator=generator)
    bias = t5_relative_bias(table, query_len, key_len, bidirectional, max_distance)
    assert bias.shape == (n_heads, query_len, key_len) and bias.dtype == table.dtype
    for h in range(n_heads):
        for i in range(query_len):
            for j in range(key_len):
                bucket = bucket_by_formula(j - i, bidirectional, num_buckets, max_distance)
                assert bias[h, i, j] == table[bucket, h], (h, i, j)


def test_bias_of_a_causal_decoder_is_constant_past_the_max_distance(generator):
    table = torch.randn(32, 2, generator=generator)
    bias = t5_relative_bias(table, 300, 300, bidirectional=False, max_distance=128)
    last_row = bias[:, -1]  # query 299 against keys 0..299: distances 299..0
    assert torch.equal(last_row[:, : 299 - 128 + 1], table[31][:, None].expand(2, 172))
