"""Three families of positional information, compared side by side with computed numbers.

Family 1 (fixed, at the input): sinusoidal.  Family 2 (learned, at the input): a position table.
Family 3 (inside attention): RoPE rotates Q and K; T5's relative bias (learned) and ALiBi (fixed) add a
function of the distance to the logits. The descriptive text
(what each is, who uses it) lives in ``content/lessons/three-families.toml`` under ``[[methods]]``;
every number and yes/no here is computed, from formulas for the user's model size and from small
probes that run the reference implementations in ``poslab.encodings``.

Shapes: T positions, D model width, H heads, d = D / H per head.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from functools import cache

import altair as alt
import pandas as pd
import torch

from poslab.encodings import LearnedPositionalEmbedding, alibi_bias, apply_rope, sinusoidal_encoding, t5_relative_bias
from poslab.lessons import CONTENT_DIR
from poslab.viz.common import axis_title

METHOD_IDS = ("sinusoidal", "learned", "rope", "relative-bias", "alibi")  # also the ids of their lessons
T5_BUCKETS = 32  # T5's default number of relative-position buckets (Raffel et al., 2020)
PROBE_LEN, PROBE_DIM = 16, 8  # the property probes' size: properties do not depend on it
PRESETS = {  # (D, max_len, H) of well-known models, to start the comparison from
    "GPT-2 small": (768, 1024, 12),
    "BERT-base": (768, 512, 12),
    "LLaMA-2 7B": (4096, 4096, 32),
    "BLOOM 176B": (14336, 2048, 112),
}


@dataclass(frozen=True)
class Method:
    id: str
    name: str
    family: str
    enters: str  # where position enters the network
    idea: str
    extrapolation: str  # what happens past the training length, in practice
    used_by: str


@cache
def methods() -> tuple[Method, ...]:
    raw = tomllib.loads((CONTENT_DIR / "lessons" / "three-families.toml").read_text(encoding="utf-8"))
    by_id = {entry["id"]: Method(**entry) for entry in raw["methods"]}
    return tuple(by_id[method_id] for method_id in METHOD_IDS)


def get_method(method_id: str) -> Method:
    return next(method for method in methods() if method.id == method_id)


# ---------------------------------------------------------------- counts from the model size


@dataclass(frozen=True)
class PositionBudget:
    method_id: str
    trainable: int  # parameters the optimiser updates
    fixed: int  # numbers a typical implementation precomputes and stores
    fixed_what: str


def check_model_size(d_model: int, max_len: int, n_heads: int) -> None:
    """Raise ``ValueError`` with a readable reason for an impossible configuration."""
    if min(d_model, max_len, n_heads) < 1:
        raise ValueError("model width, context length and heads must all be at least 1")
    if d_model % n_heads:
        raise ValueError(
            f"{n_heads} heads do not divide a model width of {d_model}: each head needs D / H features, a whole number"
        )
    if (d_model // n_heads) % 2:
        raise ValueError(f"RoPE rotates feature pairs, so the head size D / H = {d_model // n_heads} must be even")


def position_budget(method_id: str, d_model: int, max_len: int, n_heads: int) -> PositionBudget:
    """Trainable parameters and stored constants one model spends on position."""
    check_model_size(d_model, max_len, n_heads)
    head_dim = d_model // n_heads
    budgets = {
        "sinusoidal": (0, max_len * d_model, "the max_len x D table, if precomputed"),
        "learned": (max_len * d_model, 0, "nothing: the table is all parameters"),
        # cos and sin for each of d/2 frequencies at every position, shared by all heads and layers
        "rope": (0, max_len * head_dim, "cos and sin caches, max_len x d/2 each"),
        # one learned scalar per bucket and head, shared by every layer; nothing grows with max_len
        "relative-bias": (T5_BUCKETS * n_heads, 0, "nothing: the bias is looked up from the table per pass"),
        "alibi": (0, n_heads, "one slope per head; the T x T bias is rebuilt per pass"),
    }
    trainable, fixed, what = budgets[method_id]
    return PositionBudget(method_id, trainable, fixed, what)


def budget_frame(d_model: int, max_len: int, n_heads: int) -> pd.DataFrame:
    """Tidy: method, kind (trainable / stored constant), numbers, what."""
    rows = []
    for method in methods():
        budget = position_budget(method.id, d_model, max_len, n_heads)
        rows.append(
            {
                "method": method.name,
                "kind": "trainable parameters",
                "numbers": budget.trainable,
                "what": "learned by gradient descent" if budget.trainable else "none",
            }
        )
        rows.append(
            {"method": method.name, "kind": "stored constants", "numbers": budget.fixed, "what": budget.fixed_what}
        )
    return pd.DataFrame(rows)


# 1, 10, 100, 1k ... 1M; a label expression, since Streamlit's theme reformats plain axis formats
DECADE_LABEL = (
    "datum.value >= 1e6 ? (datum.value / 1e6) + 'M' : datum.value >= 1e3 ? (datum.value / 1e3) + 'k' : datum.value + ''"
)


def _decades(largest: int) -> list[int]:
    """0, 1, 10, 100, ... up to the first power of ten >= largest: tick marks for a symlog axis."""
    ticks = [0, 1]
    while ticks[-1] < largest:
        ticks.append(ticks[-1] * 10)
    return ticks


def budget_chart(d_model: int, max_len: int, n_heads: int) -> alt.LayerChart:
    frame = budget_frame(d_model, max_len, n_heads)
    frame = frame.assign(
        label=[
            f"{n:,} {'trainable' if kind == 'trainable parameters' else 'stored'}"
            for n, kind in zip(frame["numbers"], frame["kind"])
        ]
    )
    ticks = _decades(int(frame["numbers"].max()))
    y = alt.Y("method:N", title="method", sort=[m.name for m in methods()])
    x = alt.X(
        "numbers:Q",
        title=axis_title("numbers stored", "count, symlog scale"),
        scale=alt.Scale(type="symlog", domain=[0, ticks[-1]]),
        axis=alt.Axis(values=ticks, labelExpr=DECADE_LABEL),
    )
    bars = (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            y=y,
            yOffset=alt.YOffset("kind:N"),
            x=x,
            color=alt.Color("kind:N", title=None, legend=alt.Legend(orient="bottom")),
            tooltip=[
                alt.Tooltip("method:N"),
                alt.Tooltip("kind:N"),
                alt.Tooltip("numbers:Q", format=","),
                alt.Tooltip("what:N"),
            ],
        )
    )
    # Each bar says in words what it counts: the colour is not the only key to "trainable" and "stored".
    labels = (
        alt.Chart(frame)
        .mark_text(align="left", dx=3, fontSize=10)
        .encode(y=y, yOffset=alt.YOffset("kind:N"), x=x, text="label:N")
    )
    described = "; ".join(
        f"{method}: {rows.loc[rows['kind'] == 'trainable parameters', 'numbers'].sum():,} trainable, "
        f"{rows.loc[rows['kind'] == 'stored constants', 'numbers'].sum():,} stored"
        for method, rows in frame.groupby("method", sort=False)
    )
    return alt.layer(
        bars, labels, title=f"Numbers spent on position (D={d_model:,}, max_len={max_len:,}, H={n_heads})"
    ).properties(
        height=alt.Step(16),  # px per bar: a total height would be squeezed by the legend
        description=f"Bar chart of the numbers each method spends on position: {described}.",
    )


# ---------------------------------------------------------------- probes of the reference code


def _constant_token(seed: int = 0) -> torch.Tensor:
    """(T, d): one token vector repeated at every position, so only position can vary."""
    token = torch.randn(PROBE_DIM, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    return token.expand(PROBE_LEN, PROBE_DIM).clone()


def _t5_table() -> torch.Tensor:
    """``[buckets, 1]`` float64: one head's bias table as training starts from (seeded)."""
    return torch.randn(T5_BUCKETS, 1, generator=torch.Generator().manual_seed(0), dtype=torch.float64)


def _learned_table() -> torch.Tensor:
    """(T, d) float64: a freshly initialised table, as training starts from (seeded, global RNG untouched)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)  # the module draws its table from the global generator
        return LearnedPositionalEmbedding(PROBE_LEN, PROBE_DIM).table.detach().double()


def probe_scores(method_id: str) -> torch.Tensor:
    """(T, T) attention logits between copies of one token at every position (entries j > i of
    ALiBi are -inf: its bias is causal)."""
    x = _constant_token()
    scale = math.sqrt(PROBE_DIM)
    if method_id in ("sinusoidal", "learned"):
        if method_id == "sinusoidal":
            table = sinusoidal_encoding(PROBE_LEN, PROBE_DIM).double()
        else:
            table = _learned_table()
        h = x + table  # (T, d): position added at the input
        return h @ h.T / scale
    if method_id == "rope":
        rotated = apply_rope(x)  # (T, d): position rotates the query/key
        return rotated @ rotated.T / scale
    if method_id == "relative-bias":  # T5: a learned scalar per distance bucket, added to the logits
        return x @ x.T / scale + t5_relative_bias(_t5_table(), PROBE_LEN, PROBE_LEN)[0]
    if method_id == "alibi":
        return x @ x.T / scale + alibi_bias(1, PROBE_LEN)[0].double()
    raise KeyError(f"unknown method {method_id!r}; known: {', '.join(METHOD_IDS)}")


def depends_only_on_distance(method_id: str, rtol: float = 1e-6) -> bool:
    """Are the probe's logits constant along every diagonal i - j = const (where defined)?"""
    scores = probe_scores(method_id)
    spread = max(float(scores[torch.isfinite(scores)].abs().max()), 1e-12)
    for offset in range(-PROBE_LEN + 1, PROBE_LEN):
        diagonal = scores.diagonal(offset)
        diagonal = diagonal[torch.isfinite(diagonal)]
        if diagonal.numel() > 1 and float(diagonal.max() - diagonal.min()) > rtol * spread:
            return False
    return True


def runs_past_max_len(method_id: str) -> bool:
    """Does the reference implementation accept position max_len (one past the table)?"""
    try:
        if method_id == "sinusoidal":
            sinusoidal_encoding(PROBE_LEN + 1, PROBE_DIM)
        elif method_id == "learned":
            LearnedPositionalEmbedding(PROBE_LEN, PROBE_DIM)(torch.zeros(1, PROBE_LEN + 1, PROBE_DIM))
        elif method_id == "rope":
            apply_rope(torch.ones(1, PROBE_DIM), positions=torch.tensor([PROBE_LEN]))
        elif method_id == "relative-bias":
            t5_relative_bias(_t5_table(), PROBE_LEN + 1, PROBE_LEN + 1)
        elif method_id == "alibi":
            alibi_bias(1, PROBE_LEN + 1)
        else:
            raise KeyError(method_id)
    except ValueError:
        return False
    return True


def values_carry_position(method_id: str) -> bool:
    """Does the same token get a different value vector V at position 0 and position 5?"""
    x = _constant_token()
    if method_id in ("sinusoidal", "learned"):
        table = sinusoidal_encoding(PROBE_LEN, PROBE_DIM).double() if method_id == "sinusoidal" else _learned_table()
        values = x + table  # V = (x + PE) W_v, and W_v = I here
    else:  # RoPE rotates only Q and K; T5's bias and ALiBi only touch the logits
        values = x
    return not torch.allclose(values[0], values[5])


# ---------------------------------------------------------------- the side-by-side table


def _yes_no(flag: bool) -> str:
    return "yes" if flag else "no"


def comparison_table(d_model: int, max_len: int, n_heads: int) -> pd.DataFrame:
    """Rows: properties; columns: the five methods. Every cell a string, ready to display."""
    one_layer = 4 * d_model * d_model  # W_q, W_k, W_v, W_o of one attention layer
    columns = {}
    for method in methods():
        budget = position_budget(method.id, d_model, max_len, n_heads)
        columns[method.name] = {
            "family": method.family,
            "where position enters": method.enters,
            "the idea": method.idea,
            "trainable parameters": f"{budget.trainable:,}",
            "… as a share of one attention layer (4·D²)": f"{budget.trainable / one_layer:.1%}",
            "stored constants": f"{budget.fixed:,} ({budget.fixed_what})",
            "logits depend only on distance i − j": _yes_no(depends_only_on_distance(method.id)),
            "value vectors carry position": _yes_no(values_carry_position(method.id)),
            "reference code runs past max_len": _yes_no(runs_past_max_len(method.id)),
            "past the training length, in practice": method.extrapolation,
            "used by": method.used_by,
        }
    return pd.DataFrame(columns)
