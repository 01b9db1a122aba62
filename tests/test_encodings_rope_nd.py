"""RoPE beyond one dimension: axial 2D RoPE and M-RoPE, by hand, by their properties, and against transformers."""

import math

import pytest
import torch

from poslab.encodings import rope_nd
from poslab.encodings.rope import apply_rotary, rope_inverse_frequencies


def randn(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def test_axial_2d_by_hand_d4():
    # D = 4: one pair per half, theta = 1 in each; pair 0 turns by the row, pair 1 by the column.
    x = torch.tensor([[1.0, 0.0, 0.0, 1.0]], dtype=torch.float64)
    out = rope_nd.axial_rope_2d(x, torch.tensor([2]), torch.tensor([3]))
    expected = [math.cos(2), math.sin(2), -math.sin(3), math.cos(3)]
    assert torch.allclose(out[0], torch.tensor(expected, dtype=torch.float64), atol=1e-15)


def test_mrope_by_hand_d4_sections_0_1_1():
    # D = 4, sections (0, 1, 1): pair 0 (features 0, 2) follows the height, pair 1 (features 1, 3) the width.
    x = torch.tensor([[1.0, 1.0, 0.0, 0.0]], dtype=torch.float64)
    positions = torch.tensor([[7], [2], [5]])
    out = rope_nd.apply_mrope(x, positions, sections=(0, 1, 1))
    theta_1 = 10000.0 ** (-2 / 4)
    expected = [math.cos(2), math.cos(5 * theta_1), math.sin(2), math.sin(5 * theta_1)]
    assert torch.allclose(out[0], torch.tensor(expected, dtype=torch.float64), atol=1e-15)


def scores_2d(q, k, rows, cols):
    return rope_nd.axial_rope_2d(q, rows, cols) @ rope_nd.axial_rope_2d(k, rows, cols).T


def test_axial_2d_scores_depend_only_on_the_2d_offset():
    q, k = randn(12, 16), randn(12, 16, seed=1)
    rows, cols = rope_nd.grid_positions(3, 4)
    shifted = scores_2d(q, k, rows + 5, cols - 2)
    assert torch.allclose(scores_2d(q, k, rows, cols), shifted, atol=1e-12)
    # swapping rows and columns is a different offset: the scores change
    assert (scores_2d(q, k, rows, cols) - scores_2d(q, k, cols, rows)).abs().max() > 1e-3


def test_mrope_scores_depend_only_on_the_3d_offset_and_a_permutation_moves_them_along():
    x, y = randn(10, 32), randn(10, 32, seed=2)
    positions, _ = rope_nd.mrope_positions(
        (rope_nd.Segment("text", width=2), rope_nd.Segment("image", height=2, width=4))
    )
    sections = (4, 6, 6)

    def scores(pos):
        return rope_nd.apply_mrope(x, pos, sections) @ rope_nd.apply_mrope(y, pos, sections).T

    reference = scores(positions)
    assert torch.allclose(scores(positions + torch.tensor([[3], [-1], [4]])), reference, atol=1e-12)
    order = torch.randperm(10, generator=torch.Generator().manual_seed(3))
    permuted = (
        rope_nd.apply_mrope(x[order], positions[:, order], sections)
        @ rope_nd.apply_mrope(y[order], positions[:, order], sections).T
    )
    assert torch.allclose(permuted, reference[order][:, order], atol=1e-12)


def test_text_tokens_reduce_mrope_to_1d_rope_with_the_half_pairing():
    x = randn(6, 128)
    positions, labels = rope_nd.mrope_positions((rope_nd.Segment("text", width=6),))
    assert labels == ["1. text"] * 6 and positions.tolist() == [list(range(6))] * 3
    one_d = apply_rotary(x, rope_inverse_frequencies(128, 10000.0, torch.float64), torch.arange(6), "half")
    assert torch.allclose(rope_nd.apply_mrope(x, positions), one_d, atol=1e-13)


def test_positions_of_text_image_text_and_video_as_qwen2_vl_lays_them_out():
    segments = (
        rope_nd.Segment("text", width=3),
        rope_nd.Segment("image", height=2, width=3),
        rope_nd.Segment("text", width=2),
        rope_nd.Segment("video", frames=2, height=1, width=2),
    )
    positions, labels = rope_nd.mrope_positions(segments)
    assert positions.tolist() == [
        [0, 1, 2, 3, 3, 3, 3, 3, 3, 6, 7, 8, 8, 9, 9],
        [0, 1, 2, 3, 3, 3, 4, 4, 4, 6, 7, 8, 8, 8, 8],
        [0, 1, 2, 3, 4, 5, 3, 4, 5, 6, 7, 8, 9, 8, 9],
    ]
    assert labels[3] == "2. image" and labels[-1] == "4. video" and sum(s.tokens for s in segments) == 15


def test_bad_shapes_are_refused():
    with pytest.raises(ValueError, match="divisible by 4"):
        rope_nd.axial_rope_2d(randn(2, 6), torch.arange(2), torch.arange(2))
    with pytest.raises(ValueError, match="add up to D/2"):
        rope_nd.apply_mrope(randn(2, 8), torch.zeros(3, 2, dtype=torch.long), (1, 1, 1))


def test_mrope_matches_transformers_qwen2_vl():
    transformers = pytest.importorskip("transformers")
    from transformers.models.qwen2_vl import modeling_qwen2_vl as qwen

    config = transformers.Qwen2VLTextConfig(
        hidden_size=256,
        num_attention_heads=2,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [16, 24, 24]},
    )
    positions, _ = rope_nd.mrope_positions(
        (
            rope_nd.Segment("text", width=4),
            rope_nd.Segment("image", height=3, width=4),
            rope_nd.Segment("text", width=3),
        )
    )
    rotary = qwen.Qwen2VLRotaryEmbedding(config)
    x = randn(1, 2, positions.shape[1], 128).float()
    cos, sin = rotary(x, positions[:, None, :])
    theirs, _ = qwen.apply_rotary_pos_emb(x, x, cos, sin)
    ours = rope_nd.apply_mrope(x, positions)
    assert torch.allclose(ours, theirs, atol=2e-5)
