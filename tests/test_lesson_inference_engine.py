"""Positions in an inference engine: the tiny RoPE layer against a plain re-implementation, each rule kept and
broken, and the page."""

import numpy as np
import pytest
import torch

from poslab.viz import engine_rules as rules
from poslab.viz import inference_engine as lesson
from poslab.viz.common import convention_problems
from tests.app_harness import numbers

LESSON = "inference-engine"
ROUNDING = 1e-12
BROKEN = 1e-3


def rope_by_hand(x: np.ndarray, positions: np.ndarray, base: float = 10_000.0) -> np.ndarray:
    """Interleaved RoPE through complex numbers: pair i of the token at p times e^(i p theta_i)."""
    theta = base ** (-np.arange(0, x.shape[1], 2) / x.shape[1])
    pairs = (x[:, 0::2] + 1j * x[:, 1::2]) * np.exp(1j * np.outer(positions, theta))
    return np.stack([pairs.real, pairs.imag], axis=-1).reshape(x.shape)


def causal_attention_by_hand(q, k, v, positions, window=None):
    rq, rk = rope_by_hand(q, positions), rope_by_hand(k, positions)
    out = np.zeros_like(v)
    for i in range(len(q)):
        first = 0 if window is None else max(0, i - window + 1)
        scores = rk[first : i + 1] @ rq[i] / np.sqrt(q.shape[1])
        weights = np.exp(scores - scores.max())
        out[i] = weights @ v[first : i + 1] / weights.sum()
    return out


@pytest.mark.parametrize("window", [None, 3])
def test_full_forward_is_causal_rope_attention(window):
    q, k, v = rules.projections(10, 8, seed=3)
    freqs = rules.rope_inverse_frequencies(8, 10_000.0, torch.float64)
    ours = rules.full_forward(q, k, v, torch.arange(10), freqs, window).numpy()
    assert np.allclose(
        ours, causal_attention_by_hand(q.numpy(), k.numpy(), v.numpy(), np.arange(10), window), atol=1e-12
    )


def test_mask_positions_skip_the_padding():
    mask = torch.tensor([[0, 0, 1, 1, 1], [1, 1, 1, 1, 1]])
    assert rules.mask_positions(mask).tolist() == [[0, 0, 0, 1, 2], [0, 1, 2, 3, 4]]


def test_rotating_before_or_after_the_cache_is_exact_and_twice_breaks_from_step_1():
    errors = rules.cache_modes(12)
    assert max(errors["rotate, then cache"]) < ROUNDING and max(errors["cache raw, rotate at read"]) < ROUNDING
    twice = errors["broken: rotated twice (once more at read)"]
    assert twice[0] < ROUNDING and min(twice[1:]) > BROKEN  # key 0 sits at position 0


def test_left_padding_needs_positions_from_the_mask():
    errors = rules.left_padding((9, 5), 4)
    assert max(errors["next position from the attention mask"]) < ROUNDING
    broken = errors["broken: next position = cache length"]
    assert broken[0] < ROUNDING and min(broken[1:]) > BROKEN  # the prefill agrees; every new token is off
    assert max(errors["one frame counting the padding, prefill and decode"]) < ROUNDING  # RoPE sees offsets only
    same = rules.left_padding((6, 6), 3)  # no padding: the two rules coincide
    assert max(same["broken: next position = cache length"]) < ROUNDING


@pytest.mark.parametrize("window", [3, 6])
def test_rolling_buffer_is_exact_until_a_broken_engine_caps_the_position(window):
    errors = rules.rolling_buffer(20, window)
    assert max(errors["position tracked apart from the buffer"]) < ROUNDING
    broken = errors["broken: position = number of cached keys"]
    assert max(broken[:window]) < ROUNDING and broken[window] > BROKEN


def test_dynamic_ntk_needs_keys_rotated_at_read_once_past_the_training_length():
    errors = rules.dynamic_ntk(20, original_len=12)
    assert max(errors["cache raw keys, rotate at read"]) < ROUNDING
    broken = errors["broken: keys rotated once, with their step's frequencies"]
    assert max(broken[:12]) < ROUNDING and min(broken[13:]) > 1e-4  # step 12 is the first past L = 12


def test_streaming_distances_stay_within_the_cache_only_when_re_indexed():
    distances = rules.streaming(30, sinks=2, recent=5)
    assert max(distances["re-indexed inside the cache (StreamingLLM)"]) == 2 + 5 - 1
    assert distances["broken: positions of the original text"][-1] == 29  # the query at 29, sink 0 kept


def test_views_follow_the_chart_conventions():
    for view in (
        lesson.cache_mode_view(8),
        lesson.padding_view((9, 4), 3),
        lesson.rolling_view(12, 4),
        lesson.dynamic_view(12, 8),
        lesson.streaming_view(20, 2, 4),
    ):
        assert convention_problems(view.chart) == [] and len(view.chart.to_dict()["description"]) > 40


SECTIONS = ("cache modes", "padding", "rolling", "streaming", "dynamic")


def shown_rules(at) -> dict[str, tuple[str, str, str, str]]:
    """Per section: (kept value, broken value, kept caption, broken caption), in page order."""
    values = [metric.value for metric in at.metric]
    captions = [c.value for c in at.caption if "First step that goes wrong" in c.value]
    assert len(values) == len(captions) == 2 * len(SECTIONS)
    return {
        name: (values[2 * i], values[2 * i + 1], captions[2 * i], captions[2 * i + 1])
        for i, name in enumerate(SECTIONS)
    }


def test_page_shows_each_rule_kept_and_broken(lesson_page):
    at = lesson_page(LESSON)
    assert not at.exception
    shown = shown_rules(at)
    for name in ("cache modes", "padding", "rolling", "dynamic"):
        kept, broken, _, _ = shown[name]
        assert float(kept) < ROUNDING and float(broken) > BROKEN, name
    assert shown["streaming"][:2] == (f"{4 + 8 - 1}", "47")
    assert shown["cache modes"][3] == "broken: rotated twice (once more at read). First step that goes wrong: 1."
    assert shown["cache modes"][2].endswith("First step that goes wrong: none.")
    assert shown["rolling"][3].endswith("goes wrong: 6.")  # the default window W = 6
    assert shown["dynamic"][3].endswith("goes wrong: 12.")  # L = 12
    assert shown["streaming"][3].endswith("goes wrong: 12.")  # past the cache of 4 + 8


def test_page_widgets_move_the_first_broken_step(lesson_page):
    at = lesson_page(LESSON)
    at.slider(key="ie-window").set_value(9).run()
    assert not at.exception and shown_rules(at)["rolling"][3].endswith("goes wrong: 9.")
    at.slider(key="ie-trained").set_value(16).run()
    assert shown_rules(at)["dynamic"][3].endswith("goes wrong: 16.")
    at.slider(key="ie-prompt").set_value(9).run()  # no padding left: the rules agree
    assert float(shown_rules(at)["padding"][1]) < ROUNDING
    at.slider(key="ie-steps").set_value(5).run()
    assert len(numbers(at, 0)) == 3 * 5  # three rules, five steps
