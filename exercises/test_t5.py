"""Public tests for t5.py: exact buckets, the sign split, causal folding, the last bucket, the bias."""

import torch


def test_buckets_are_long_and_keep_the_shape(impl):
    relative = torch.tensor([[-3, 0, 3], [-200, 5, 200]])
    buckets = impl.t5_relative_bucket(relative)
    assert buckets.dtype == torch.int64 and buckets.shape == (2, 3)


def test_near_keys_get_a_bucket_each_and_later_keys_the_upper_half(impl):
    # 32 buckets, bidirectional: 16 per direction, the first 8 distances exact; a later key adds 16.
    relative = torch.tensor([0, -1, -7, 1, 7])
    assert impl.t5_relative_bucket(relative).tolist() == [0, 1, 7, 17, 23]


def test_a_decoder_folds_later_keys_into_bucket_0(impl):
    relative = torch.tensor([5, 1, 0, -1, -15])
    assert impl.t5_relative_bucket(relative, bidirectional=False).tolist() == [0, 0, 0, 1, 15]


def test_log_spaced_buckets_and_the_last_one(impl):
    # Bidirectional 32/128, 8 exact: bucket 8 + floor(ln(n / 8) / ln(16) * 8), at most 15.
    relative = torch.tensor([-8, -11, -12, -90, -91, -128, -5000, 5000])
    assert impl.t5_relative_bucket(relative).tolist() == [8, 8, 9, 14, 15, 15, 15, 31]


def test_bias_reads_the_table_by_bucket(impl):
    table = torch.arange(32 * 2, dtype=torch.float32).reshape(32, 2)  # table[b, h] = 2 b + h
    bias = impl.t5_relative_bias(table, 3, 4)
    assert bias.shape == (2, 3, 4) and bias.dtype == torch.float32
    assert bias[1, 2, 0].item() == 2 * 2 + 1  # j - i = -2: bucket 2, head 1
    assert bias[0, 0, 3].item() == 2 * (16 + 3)  # j - i = +3: bucket 19
