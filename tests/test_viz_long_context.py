"""The long-context lesson: KV cache decoding, packed sequences and partial rotary, computed."""

import pytest
import torch

from poslab.encodings import apply_rope
from poslab.viz import long_context as lesson
from poslab.viz.common import convention_problems


def test_correct_cache_reproduces_the_full_pass():
    view = lesson.cache_view(16, 8, "correct")
    assert view.max_difference < 1e-12 and view.first_wrong_step is None
    assert convention_problems(view.difference) == [] and view.difference.to_dict()["description"]
    lowest, highest = view.difference.to_dict()["encoding"]["color"]["scale"]["domain"]
    # float rounding (below 1e-12 here) sits in the middle of a colour range at least a million times wider
    assert lowest == -highest and highest >= 1e6 * max(view.max_difference, 1e-18)


def test_rotating_cached_keys_again_breaks_the_scores_from_the_first_nonzero_position():
    view = lesson.cache_view(16, 8, "re-rotated every step")
    # Step 1 re-rotates key 0 by position 0 (the identity); step 2 re-rotates key 1 by one position.
    assert view.first_wrong_step == 2 and view.max_difference > 1e-3
    assert view.difference.to_dict()["encoding"]["color"]["scale"]["domain"][1] == pytest.approx(view.max_difference)


def test_full_pass_scores_are_rope_dot_products():
    q, k = torch.randn(5, 4, dtype=torch.float64), torch.randn(5, 4, dtype=torch.float64)
    from poslab.encodings import rope_inverse_frequencies

    scores = lesson.full_pass_scores(q, k, rope_inverse_frequencies(4, dtype=torch.float64))
    assert scores[3, 1] == pytest.approx(float(apply_rope(q)[3] @ apply_rope(k)[1]))
    assert torch.isnan(scores[1, 3])


def test_unknown_cache_mode_is_explained():
    with pytest.raises(ValueError, match="unknown cache mode"):
        lesson.cache_view(4, 4, "sideways")


def test_mask_from_positions_starts_a_document_at_each_zero():
    mask = lesson.mask_from_positions(torch.tensor([0, 1, 2, 0, 1]))
    visible = (mask == 0).int().tolist()
    assert visible == [[1, 0, 0, 0, 0], [1, 1, 0, 0, 0], [1, 1, 1, 0, 0], [0, 0, 0, 1, 0], [0, 0, 0, 1, 1]]


def test_reset_positions_keep_documents_apart_and_unreset_ones_leak():
    reset = lesson.packed_view((5, 7, 4), reset=True)
    assert reset.positions[:6] == (0, 1, 2, 3, 4, 0)
    assert reset.leaked_weight == 0.0 and reset.output_difference < 1e-12
    mixed = lesson.packed_view((5, 7, 4), reset=False)
    assert mixed.positions == tuple(range(16)) and mixed.leaked_weight > 0.1 and mixed.output_difference > 1e-3
    assert convention_problems(mixed.weights) == []


def test_partial_rotary_leaves_the_tail_alone_and_rotates_the_head():
    x = torch.randn(1, 6, 16, dtype=torch.float64)
    out = lesson.partial_rotary(x, 4, torch.arange(6))
    assert torch.equal(out[..., 4:], x[..., 4:])
    assert torch.allclose(out[..., :4], apply_rope(x[..., :4]))
    with pytest.raises(ValueError):
        lesson.partial_rotary(x, 3)


def test_unrotated_part_of_the_score_is_constant_in_distance():
    frame = lesson.partial_rotary_frame(96, 24, 50)
    content = frame[frame["part"].str.startswith("unrotated")]["score"]
    rotated = frame[frame["part"] == "rotated features"]["score"]
    assert content.max() - content.min() < 1e-12 and rotated.max() - rotated.min() > 1e-2
    assert convention_problems(lesson.partial_rotary_chart(96, 24, 50)) == []
    assert lesson.PARTIAL_ROTARY_MODELS["GPT-NeoX-20B"][1] / lesson.PARTIAL_ROTARY_MODELS["GPT-NeoX-20B"][0] == 0.25
