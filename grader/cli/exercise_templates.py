"""The files ``python -m grader new-exercise`` writes: a small working exercise to edit.

Each template is formatted with ``id`` (the exercise id, also the name the student defines) and
``title``; the results pass ``ruff check`` and ``ruff format --check`` as written. The exercise adds
each token's position to its features: one formula, one property test, one known mistake.
"""

from __future__ import annotations

SPEC = """\
{title}: add each token's position to its features (a starting point: edit it with the tests).

    {id}(x) -> x + p for the token at position p, a tensor of x's shape and dtype

    x  [..., T, D], float32 or float64; positions p = 0 .. T - 1 along the T axis

Rules:
- Positions start at 0.
- Do not modify x.
"""

TOML_ENTRY = """
[{id}]
spec = '''
{spec}'''

[{id}.hints]
concept = '''
Every token of a sequence gets the same number added to each of its features: its position.
'''
formula = '''
positions = 0, 1, ..., T - 1 as a column [T, 1]; out = x + positions (broadcasts over D and the batch)
'''
skeleton = '''
def {id}(x):
    positions = torch.arange(x.shape[-2], dtype=x.dtype)
    return x + positions[..., None]
'''
"""

CATALOGUE_LINE = '    Exercise("{id}", {title_literal}, ("{id}",), "{id}.py"),\n'

STUB = '''"""{spec}"""

from __future__ import annotations

import torch


def {id}(x: torch.Tensor) -> torch.Tensor:
    """x plus each token's position (see the module docstring)."""
    raise NotImplementedError("{id} is not implemented yet")
'''

PUBLIC_TESTS = '''"""Public tests for {id}.py: shape, dtype and a small case by hand."""

import torch


def test_shape_and_dtype_kept(impl):
    out = impl.{id}(torch.zeros(2, 3, 4, dtype=torch.float64))
    assert out.shape == (2, 3, 4)
    assert out.dtype == torch.float64


def test_positions_by_hand(impl):
    out = impl.{id}(torch.zeros(3, 2))
    assert torch.equal(out, torch.tensor([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]]))
'''

REFERENCE = '''"""{title}: the reference of the {id} exercise (its spec: poslab/content/exercises.toml)."""

from __future__ import annotations

import torch


def {id}(x: torch.Tensor) -> torch.Tensor:
    positions = torch.arange(x.shape[-2], dtype=x.dtype, device=x.device)  # (T,)
    return x + positions[:, None]  # (T, 1) broadcasts over D and the leading axes
'''

PACKAGE = '''"""The hidden side of the {id} exercise ({title}).

Tests in ``test_*.py``; for instructors, ``mutants.py`` (known mistakes as patches on the reference)
and ``clauses.md`` (the spec, clause by clause, and the tests that check it).
"""
'''

HIDDEN_TESTS = '''"""Hidden tests of ``{id}(x)``: out = x + p for the token at position p.

A starting point: one property test over drawn shapes and dtypes, compared to a float64 oracle
within the error model, and one known mistake it names when a submission makes it.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from hypothesis import strategies as st

from grader.suite import VISIBLE, graded
from grader.suite.domains import DTYPES, LEADING, SEEDS, seeded, sizes
from grader.suite.draw import answer, for_each
from grader.suite.expect import as_tensor, diagnose, expect, expect_shape, within
from grader.suite.tolerances import SAFETY, underflow, unit_roundoff


@dataclass(frozen=True)
class Case:
    shape: tuple[int, ...]
    dtype: str
    seed: int

    def describe(self) -> str:
        return f"x of shape {{list(self.shape)}}, {{self.dtype}}"


@st.composite
def cases(draw) -> Case:
    shape = (*draw(LEADING), draw(sizes(1, 64)), draw(sizes(1, 32)))
    return Case(shape, draw(st.sampled_from(("float32", "float64"))), draw(SEEDS))


def oracle(x: torch.Tensor, first_position: int = 0) -> torch.Tensor:
    """x + p in float64, positions counted from ``first_position``."""
    tokens = x.shape[-2]
    positions = torch.arange(first_position, first_position + tokens, dtype=torch.float64)
    return x.double() + positions[:, None]


@graded(points=2, family="values", visibility=VISIBLE)
@for_each(cases(), count=8)
def test_adds_each_position(student, case):
    """Every feature of the token at position p is x + p."""
    x = seeded(case.shape, case.seed, DTYPES[case.dtype])
    output = answer(student, ("values", case), "{id}", x.clone()).output
    out = as_tensor(output, "{id}")
    expect_shape(out, case.shape, "{id}(x)")
    expected = oracle(x)
    tolerance = SAFETY * unit_roundoff(x.dtype) * expected.abs() + underflow(x.dtype)
    mistakes = {{"positions counted from 1 instead of 0": lambda: oracle(x, first_position=1)}}
    message = "{id}(x) must add each token's position p = 0 .. T - 1 to its features."
    expect(within(out, expected, tolerance), lambda: message + diagnose(out, mistakes, tolerance))
'''

MUTANTS = '''"""The {id} exercise's known mistakes, as patches on the reference source (``grader.mutants``).

A patch is ``(old, new)``: ``old`` must occur exactly once in ``reference_source()``.
"""

from __future__ import annotations

from grader.mutants.spec import MutantSpec

POSITIONS = "def {id}(x: torch.Tensor) -> torch.Tensor:\\n    positions = torch.arange(x.shape[-2],"

MUTANTS: tuple[MutantSpec, ...] = (
    MutantSpec(
        "{id}_positions_from_one",
        "{id}",
        "positions counted from 1, not 0",
        ((POSITIONS, POSITIONS.replace("torch.arange(x.shape[-2],", "torch.arange(1, x.shape[-2] + 1,")),),
    ),
)
'''

CLAUSES = """# {id}: its spec, clause by clause, and the hidden tests that check it

Each row quotes the spec, says what kind of promise it is (value, shape or dtype, error, behaviour, domain,
or not graded), names the tests that check it and, for every kind but a value, the mutants (in mutants.py)
that break that promise alone (`tests/test_spec_table.py` checks all of it; "none" marks a clause no test
checks yet, and "-" a row with no mutant).

| clause | kind | tests | mutants |
| --- | --- | --- | --- |
| `{id}(x) -> x + p for the token at position p` | value | adds each position | - |
| `x  [..., T, D], float32 or float64` | value | adds each position | - |
| `Positions start at 0.` | value | adds each position | - |
| `Do not modify x.` | not graded | none | - |
"""
