"""The hidden suite judged on known submissions, in-process (LocalStudent).

* the reference scores full marks;
* every mutant loses points in the exercise it targets;
* correct submissions written in other styles and in the other accepted conventions
  (concatenated sinusoidal table, half-pairing RoPE, float32 angles, nn.Embedding, einsum...) score
  full marks, so the suite rejects mistakes, not styles.
"""

from __future__ import annotations

from functools import cache

import pytest

from grader.mutants import list_mutants, reference_source
from grader.suite import collect, run_case
from grader.suite.local import LocalStudent
from poslab.exercises import EXERCISE_IDS
from tests.decode_sources import TUTORIAL_DECODE, UNSEEN_DECODE_MISTAKE

POINTS_PER_EXERCISE = 20.0


def scores(student: LocalStudent, exercise: str, families: set[str] | None = None) -> tuple[float, list]:
    outcomes = [
        run_case(case, student)
        for case in collect()
        if case.exercise == exercise and (families is None or case.family in families)
    ]
    return sum(outcome.score for outcome in outcomes), [o for o in outcomes if o.status != "passed"]


@cache
def reference_student() -> LocalStudent:
    return LocalStudent.from_source(reference_source(), "reference")


@pytest.mark.parametrize("exercise", EXERCISE_IDS)
def test_reference_scores_full_marks(exercise):
    score, failed = scores(reference_student(), exercise)
    assert not failed, [(o.name, o.output) for o in failed]
    assert score == POINTS_PER_EXERCISE


MUTANTS = list_mutants()


def first_failure(student: LocalStudent, exercise: str, families: set[str] | None = None):
    """The first failed outcome of the exercise's tests, in suite order (cheap tests come first)."""
    for case in collect():
        if case.exercise == exercise and (families is None or case.family in families):
            outcome = run_case(case, student)
            if outcome.status != "passed":
                return outcome
    return None


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_every_mutant_loses_points_in_its_exercise(mutant):
    student = LocalStudent.from_source(mutant.source, mutant.name)
    # A deliberately slow mutant takes seconds per call; the speed tests are the ones aimed at it.
    failure = first_failure(student, mutant.exercise, {"speed"} if mutant.slow else None)
    assert failure is not None, f"{mutant.name} ({mutant.description}) passes every test of {mutant.exercise}"
    assert failure.score == 0 < failure.max_score
    assert failure.output.strip() and "Passed" not in failure.output


# ---- correct submissions in other styles, written for these tests (not derived from the reference)

TUTORIAL_STYLE = (
    """
import math
import torch
from torch import nn


def attention(q, k, v, bias=None):
    scores = torch.einsum("...qd,...kd->...qk", q, k) * q.shape[-1] ** -0.5
    if bias is not None:
        scores = scores + bias
    scores = scores - scores.amax(dim=-1, keepdim=True).detach()
    weights = scores.exp()
    weights = weights / weights.sum(dim=-1, keepdim=True)
    return torch.einsum("...qk,...kv->...qv", weights, v), weights


def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    # The PyTorch tutorial's float32 recipe, in the concatenated layout [sin | cos].
    position = torch.arange(seq_len, dtype=torch.float32).unsqueeze(1)
    frequency = torch.exp(-math.log(base) * torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
    return torch.cat([torch.sin(position * frequency), torch.cos(position * frequency)], dim=1)


class LearnedPositionalEmbedding(nn.Module):
    def __init__(self, max_len, d_model):
        super().__init__()
        self.max_len = max_len
        self.embedding = nn.Embedding(max_len, d_model)

    def forward(self, x):
        seq_len = x.size(1)
        if seq_len > self.max_len:
            raise ValueError(f"got {seq_len} positions but max_len is {self.max_len}")
        return x + self.embedding(torch.arange(seq_len, device=x.device))


def _rotate_half(x):
    first, second = x.chunk(2, dim=-1)
    return torch.cat([-second, first], dim=-1)


def apply_rope(x, positions=None, base=10000.0):
    # Hugging Face style: the half pairing, cos/sin in float32 then cast to x's dtype.
    seq_len, dim = x.shape[-2], x.shape[-1]
    if positions is None:
        positions = torch.arange(seq_len, device=x.device)
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, device=x.device).float() / dim))
    freqs = positions.to(device=x.device, dtype=torch.float32)[:, None] * inv_freq[None, :]
    emb = torch.cat([freqs, freqs], dim=-1)
    cos, sin = emb.cos().to(x.dtype), emb.sin().to(x.dtype)
    return x * cos + _rotate_half(x) * sin


def alibi_slopes(n_heads):
    # Exponents of 1/2: 8(h+1)/c for the power of two c <= n, then the odd multiples of 8/(2c).
    c = 1 << (n_heads.bit_length() - 1)
    exponents = [8 * (h + 1) / c for h in range(c)] + [8 * (2 * h + 1) / (2 * c) for h in range(n_heads - c)]
    return torch.tensor([0.5 ** e for e in exponents], dtype=torch.float32)


def alibi_bias(n_heads, seq_len):
    i = torch.arange(seq_len).view(-1, 1)
    j = torch.arange(seq_len).view(1, -1)
    distance = (i - j).float()
    bias = -alibi_slopes(n_heads).view(-1, 1, 1) * distance
    return bias.masked_fill(j > i, float("-inf"))


def t5_relative_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    # Log base change with log2, minimum instead of clamp, the sign split by multiplication.
    n_side = num_buckets // 2 if bidirectional else num_buckets
    if bidirectional:
        upper = (relative_position > 0).to(torch.long) * n_side
        n = torch.abs(relative_position)
    else:
        upper = torch.zeros_like(relative_position)
        n = -torch.minimum(relative_position, torch.zeros_like(relative_position))
    exact = n_side // 2
    scaled = torch.log2(n.to(torch.float64).clamp(min=1) / exact) / math.log2(max_distance / exact)
    far = torch.minimum(exact + (scaled * (n_side - exact)).to(torch.long), torch.full_like(n, n_side - 1))
    return upper + torch.where(n < exact, n, far)


def t5_relative_bias(table, query_len, key_len, bidirectional=True, max_distance=128):
    q = torch.arange(query_len).view(-1, 1)
    k = torch.arange(key_len).view(1, -1)
    buckets = t5_relative_bucket(k - q, bidirectional, table.shape[0], max_distance)
    return table[buckets.flatten()].T.reshape(table.shape[1], query_len, key_len)
"""
    + TUTORIAL_DECODE
)

COMPLEX_STYLE = """
import torch


def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    # Interleaved, float32 powers and a division, as many write it.
    pe = torch.zeros(seq_len, d_model)
    position = torch.arange(seq_len, dtype=torch.float32)[:, None]
    denominator = base ** (torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
    pe[:, 0::2] = torch.sin(position / denominator)
    pe[:, 1::2] = torch.cos(position / denominator)
    return pe


def apply_rope(x, positions=None, base=10000.0):
    # Meta's LLaMA style: the interleaved pairing as complex numbers, computed in float32.
    seq_len, dim = x.shape[-2], x.shape[-1]
    if positions is None:
        positions = torch.arange(seq_len, device=x.device)
    theta = base ** (-torch.arange(0, dim, 2, device=x.device, dtype=torch.float32) / dim)
    angles = positions.to(x.device).float()[:, None] * theta
    rotation = torch.complex(angles.cos(), angles.sin())  # e^(i p theta)
    pairs = torch.view_as_complex(x.float().unflatten(-1, (-1, 2)).contiguous())
    return torch.view_as_real(pairs * rotation).flatten(-2).to(x.dtype)
"""

ALTERNATIVES = {
    "tutorial-style": (TUTORIAL_STYLE, tuple(e for e in EXERCISE_IDS if e != "extend")),  # written before extend
    "complex-style": (COMPLEX_STYLE, ("sinusoidal", "rope")),
}
ALTERNATIVE_CASES = [(name, exercise) for name, (_, exercises) in ALTERNATIVES.items() for exercise in exercises]


@pytest.mark.parametrize(("style", "exercise"), ALTERNATIVE_CASES)
def test_correct_alternative_styles_score_full_marks(style, exercise):
    student = LocalStudent.from_source(ALTERNATIVES[style][0], style)
    score, failed = scores(student, exercise)
    assert not failed, [(o.name, o.output) for o in failed]
    assert score == POINTS_PER_EXERCISE


# ---- mistakes outside the mutant catalogue, written independently: the suite catches classes

UNSEEN_MISTAKES = {
    "sinusoidal": """
def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    # The tutorial's buffer shape [1, T, d] returned as is.
    position = torch.arange(seq_len, dtype=torch.float64)[:, None]
    angle = position * base ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    return torch.stack([angle.sin(), angle.cos()], -1).flatten(-2).float().unsqueeze(0)
""",
    "rope": """
def apply_rope(x, positions=None, base=10000.0):
    # Rotates only the first half of the features (partial rotary by accident).
    d = x.shape[-1]
    positions = torch.arange(x.shape[-2]) if positions is None else positions
    angle = positions.double()[:, None] * base ** (-torch.arange(0, d // 2, 2, dtype=torch.float64) / (d // 2))
    a, b = x[..., 0:d // 2:2].double(), x[..., 1:d // 2:2].double()
    out = x.clone()
    out[..., 0:d // 2:2] = (a * angle.cos() - b * angle.sin()).to(x.dtype)
    out[..., 1:d // 2:2] = (a * angle.sin() + b * angle.cos()).to(x.dtype)
    return out
""",
    "attention": """
def attention(q, k, v, bias=None):
    # k.T is only right for 2-D inputs.
    logits = q @ k.T / math.sqrt(q.shape[-1])
    if bias is not None:
        logits = logits + bias
    weights = torch.softmax(logits, -1)
    return weights @ v, weights
""",
    "learned": """
class LearnedPositionalEmbedding(nn.Module):
    # Wraps around past max_len instead of refusing.
    def __init__(self, max_len, d_model):
        super().__init__()
        self.table = nn.Parameter(torch.randn(max_len, d_model) * 0.02)

    def forward(self, x):
        index = torch.arange(x.shape[1], device=x.device) % self.table.shape[0]
        return x + self.table[index]
""",
    "alibi": """
def alibi_bias(n_heads, seq_len):
    # The mask is a 0/1 matrix times -100: a penalty, not a mask (exp(-100) is not 0 in float32;
    # the spec accepts -inf or a finite mask of at most -1e4).
    i = torch.arange(seq_len)
    distance = (i[:, None] - i[None, :]).float()
    future = (distance < 0).float()
    return -alibi_slopes(n_heads)[:, None, None] * distance.clamp(min=0) - 100.0 * future
""",
    "t5": """
def t5_relative_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    # The log scale divides by ln(max_distance), not ln(max_distance / exact): far buckets come too soon.
    n_side = num_buckets // 2 if bidirectional else num_buckets
    upper = (relative_position > 0).long() * n_side if bidirectional else torch.zeros_like(relative_position)
    n = relative_position.abs() if bidirectional else (-relative_position).clamp(min=0)
    exact = n_side // 2
    far = exact + (torch.log(n.float().clamp(min=1) / exact) / math.log(max_distance) * (n_side - exact)).long()
    return upper + torch.where(n < exact, n, far.clamp(max=n_side - 1))
""",
    "decode": UNSEEN_DECODE_MISTAKE,
}


@pytest.mark.filterwarnings("ignore:The use of `x.T`:UserWarning")
@pytest.mark.parametrize("exercise", list(UNSEEN_MISTAKES))
def test_mistakes_outside_the_catalogue_lose_points(exercise):
    namespace = dict(reference_student().namespace)
    exec(UNSEEN_MISTAKES[exercise], namespace)  # trusted test code, replacing one reference name
    failure = first_failure(LocalStudent(namespace), exercise)
    assert failure is not None and failure.score == 0


ONE_TEST_MISTAKES = {  # mutant -> (the one test it must fail, words its message must hold)
    "decode_float64_query_rotated_in_place": ("decode: inputs untouched and views accepted", "its float64 q in place"),
    "decode_position_ids_filled_in_place": ("decode: inputs untouched and views accepted", "position_ids in place"),
    "decode_prefill_keeps_w_minus_1": ("decode: window masks the full forward", "cached_keys"),
    "decode_window_in_positions": ("decode: window masks the full forward", "With a window W"),
    "attention_float64_scaled_in_place": ("attention: inputs untouched and views accepted", "its float64 q in place"),
}


@pytest.mark.parametrize("name", sorted(ONE_TEST_MISTAKES))
def test_a_mistake_that_one_boundary_dtype_or_kind_of_positions_shows_costs_its_own_test_alone(name):
    from grader.mutants import get_mutant

    mutant = get_mutant(name)
    _, failed = scores(LocalStudent.from_source(mutant.source, name), mutant.exercise)
    test, words = ONE_TEST_MISTAKES[name]
    assert {outcome.name for outcome in failed} == {test} and words in failed[0].output, failed
