"""The source lesson's equivariance demo, parameterised: the source a student can copy, and its result.

``demo_source`` writes the program; ``run_demo`` performs exactly the same computation in-process
(no ``exec``: the app never runs code it was given) and returns what the program would print plus
the numbers behind it. ``tests/test_lesson_code.py`` runs the generated source and checks that both
agree.

Shapes: X is (T, D), P is (T, T) with ``P[i, order[i]] = 1``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import altair as alt
import torch

from poslab.permutation import permutation_matrix
from poslab.viz.common import ROUNDING_NOISE, axis_title, difference_domain, heatmap
from poslab.viz.permutation.orders import validate_order

SEED_ORDER = (2, 0, 3, 1)  # the source lesson's P = [[0,0,1,0],[1,0,0,0],[0,0,0,1],[0,1,0,0]]
# name -> (atol, rtol) passed to torch.allclose; the first is the source lesson's call (rtol left at its default)
TOLERANCES: dict[str, tuple[float, float]] = {
    "atol=1e-5 (the source lesson's; rtol keeps its default 1e-5)": (1e-5, 1e-5),
    "tight: atol=1e-7, rtol=0": (1e-7, 0.0),
    "exact: atol=0, rtol=0": (0.0, 0.0),
}
SEED_TOLERANCE = next(iter(TOLERANCES))


def default_order(n_tokens: int) -> tuple[int, ...]:
    """The source lesson's permutation for 4 tokens, otherwise a rotation by one."""
    return SEED_ORDER if n_tokens == 4 else tuple((i + 1) % n_tokens for i in range(n_tokens))


def attn(x: torch.Tensor) -> torch.Tensor:
    """The source lesson's attention: Q = K = V = X, (T, D) -> (T, D)."""
    scores = x @ x.T / x.shape[-1] ** 0.5  # (T, T)
    return torch.softmax(scores, -1) @ x


def sinusoidal_table(n_tokens: int, d_model: int) -> torch.Tensor:
    """(T, D) sin/cos table written the way the demo source writes it (D may be odd here)."""
    positions = torch.arange(n_tokens)[:, None]  # (T, 1)
    angles = positions / 10000 ** (torch.arange(0, d_model, 2) / d_model)  # (T, ceil(D/2))
    table = torch.zeros(n_tokens, d_model)
    table[:, 0::2] = angles.sin()
    table[:, 1::2] = angles.cos()[:, : d_model // 2]
    return table


def _format_matrix(order: tuple[int, ...]) -> str:
    rows = ["[" + ",".join("1" if column == target else "0" for column in range(len(order))) + "]" for target in order]
    return "[" + ",".join(rows) + "]"


def _number(value: float) -> str:
    return f"{value:g}".replace("e-0", "e-")  # 1e-05 -> 1e-5, as the source lesson writes it


def _allclose_call(tolerance: str) -> str:
    atol, rtol = (_number(value) for value in TOLERANCES[tolerance])
    if tolerance == SEED_TOLERANCE:
        return f"torch.allclose(P @ out_orig, out_perm, atol={atol})"
    return f"torch.allclose(P @ out_orig, out_perm, atol={atol}, rtol={rtol})"


def demo_source(
    n_tokens: int,
    d_model: int,
    order: tuple[int, ...],
    seed: int,
    tolerance: str = SEED_TOLERANCE,
    positional: bool = False,
) -> str:
    """The runnable program, the source lesson's demo with the student's choices filled in."""
    validate_order(order, n_tokens)
    lines = [
        "import torch",
        "",
        "def attn(X):",
        "    Q, K, V = X, X, X        # use embeddings directly for the demo",
        "    s = Q @ K.T / X.shape[-1] ** 0.5",
        "    return torch.softmax(s, -1) @ V",
        "",
        f"torch.manual_seed({seed})",
        f"X = torch.randn({n_tokens}, {d_model})         # {n_tokens} tokens, d={d_model}",
        f"P = torch.tensor({_format_matrix(order)}).float()",
        f"# Apply permutation: row i of PX is row order[i] of X, order = {list(order)}.",
    ]
    if positional:
        lines += [
            "# Break it: add a sinusoidal positional encoding. PE belongs to slots, not to tokens.",
            f"pos = torch.arange({n_tokens})[:, None]",
            f"angles = pos / 10000 ** (torch.arange(0, {d_model}, 2) / {d_model})",
            f"PE = torch.zeros({n_tokens}, {d_model})",
            "PE[:, 0::2] = angles.sin()",
            f"PE[:, 1::2] = angles.cos()[:, :{d_model // 2}]",
            "out_orig = attn(X + PE)",
            "out_perm = attn(P @ X + PE)",
        ]
    else:
        lines += ["out_orig = attn(X)", "out_perm = attn(P @ X)"]
    lines += [
        "# out_perm should equal P @ out_orig (permutation-equivariant).",
        f"print({_allclose_call(tolerance)})",
    ]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class DemoResult:
    order: tuple[int, ...]
    permutation: tuple[tuple[int, ...], ...]  # P, (T, T)
    difference: tuple[tuple[float, ...], ...]  # P attn(X) - attn(PX), (T, D)
    printed: bool  # what the program prints
    max_difference: float
    atol: float
    rtol: float
    allowance_used: float  # max over entries of |a - b| / (atol + rtol |b|): <= 1 means allclose

    @property
    def output_line(self) -> str:
        return str(self.printed)


def run_demo(
    n_tokens: int,
    d_model: int,
    order: tuple[int, ...],
    seed: int,
    tolerance: str = SEED_TOLERANCE,
    positional: bool = False,
) -> DemoResult:
    """Compute what ``demo_source(...)`` prints, and the numbers behind it."""
    validate_order(order, n_tokens)
    atol, rtol = TOLERANCES[tolerance]
    x = torch.randn(n_tokens, d_model, generator=torch.Generator().manual_seed(seed))  # = manual_seed + randn
    p = permutation_matrix(order)
    pe = sinusoidal_table(n_tokens, d_model) if positional else torch.zeros(n_tokens, d_model)
    expected = p @ attn(x + pe)  # P @ out_orig
    actual = attn(p @ x + pe)  # out_perm
    gap = (expected - actual).abs()
    bound = atol + rtol * actual.abs()
    used = float((gap / bound).max()) if bool((bound > 0).all()) else (0.0 if float(gap.max()) == 0 else math.inf)
    return DemoResult(
        order=tuple(order),
        permutation=tuple(tuple(int(v) for v in row) for row in p),
        difference=tuple(tuple(float(v) for v in row) for row in expected - actual),
        printed=bool(torch.allclose(expected, actual, atol=atol, rtol=rtol)),
        max_difference=float(gap.max()),
        atol=atol,
        rtol=rtol,
        allowance_used=used,
    )


def permutation_chart(result: DemoResult) -> alt.LayerChart:
    """P as a 0/1 grid: two colours with a two-entry legend, and each 1 written in its cell."""
    cells = heatmap(
        result.permutation,
        title="P: row i has its 1 in column order[i]",
        x_title=axis_title("column: original token", "index"),
        y_title=axis_title("row: new slot", "index"),
        value_title="entry",
        diverging=False,
        value_format=".0f",
    )
    cells = cells.encode(
        color=alt.Color(
            "value:O",
            title="entry",
            scale=alt.Scale(domain=[0, 1], range=["#f2f2f2", "#1f3b73"]),
            legend=alt.Legend(orient="bottom"),
        )
    )
    ones = (
        alt.Chart(cells.data)
        .transform_filter("datum.value == 1")
        .mark_text(color="white", fontWeight="bold")
        .encode(
            x=alt.X("col:O", title=axis_title("column: original token", "index")),
            y=alt.Y("row:O", title=axis_title("row: new slot", "index")),
            text=alt.Text("value:Q", format=".0f"),
        )
    )
    slots = ", ".join(f"row {row} has its 1 in column {column}" for row, column in enumerate(result.order))
    return alt.layer(cells, ones).properties(
        description=(
            f"Grid of the {len(result.order)}x{len(result.order)} permutation matrix P, 1 in one cell per row and column, "
            f"0 elsewhere: {slots}."
        )
    )


def difference_chart(result: DemoResult) -> alt.Chart:
    biggest = max((abs(v) for row in result.difference for v in row), default=0.0)
    return heatmap(
        result.difference,
        title="P·attn(X) − attn(PX), entry by entry",
        x_title=axis_title("feature", "index"),
        y_title=axis_title("slot", "index"),
        value_title="difference",
        value_format=".2e",
        domain=difference_domain(result.difference),
        description=(
            f"Heatmap of P·attn(X) − attn(PX) for every slot (rows) and feature (columns): the "
            f"largest entry is {biggest:.2e} in size; allclose prints {result.printed}. Differences under "
            f"{ROUNDING_NOISE:g} (float rounding) draw as zero."
        ),
    )
