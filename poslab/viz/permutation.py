"""The permutation lab: does attention care about token order, and what makes it care?

For a permutation with ``order[i]`` = the original token that lands in slot i, the permutation
matrix P has ``P[i, order[i]] = 1`` so ``(P X)[i] = X[order[i]]``. Plain self-attention is
permutation-EQUIVARIANT: ``attn(P X) = P attn(X)``; mean-pooling its output over tokens makes it
permutation-INVARIANT: ``mean(attn(P X)) = mean(attn(X))``. Adding a positional encoding, or a
causal mask, breaks both. A recurrent network gets order from its recurrence instead.

Shapes: T tokens, D features. Embeddings are deterministic per (seed, word); nothing is downloaded.
"""

from __future__ import annotations

import random
import re
import zlib
from dataclasses import dataclass

import altair as alt
import pandas as pd
import torch

from poslab.encodings import attention, sinusoidal_encoding
from poslab.permutation import permutation_matrix
from poslab.viz.common import axis_title, heatmap

TOLERANCE = 1e-5  # float32 rounding is ~1e-7 here; anything above 1e-5 is a real difference
RNN_HIDDEN = 8
# Preset sentences and the permutation that turns each into its "other meaning".
PRESETS: dict[str, tuple[int, ...]] = {
    "the dog bit the man": (0, 4, 2, 3, 1),  # -> the man bit the dog
    "she said he lied": (2, 1, 0, 3),  # -> he said she lied
    "only i love you": (1, 0, 2, 3),  # -> i only love you
}
RANDOM_TOKENS = "random tokens"


class PermutationError(ValueError):
    """A typed or picked order that is not a permutation of 0..T-1; the message says why."""


# ---------------------------------------------------------------- tokens and permutations

def sentence_tokens(sentence: str, n_random: int = 5) -> tuple[str, ...]:
    """Lower-cased words of ``sentence``, or ``tok0 .. tok{n-1}`` for ``RANDOM_TOKENS``."""
    if sentence == RANDOM_TOKENS:
        return tuple(f"tok{i}" for i in range(n_random))
    tokens = tuple(sentence.lower().split())
    if len(tokens) < 2:
        raise PermutationError("Type at least two words: one word has nothing to swap with.")
    return tokens


def suggested_order(sentence: str, n_tokens: int) -> tuple[int, ...]:
    """The preset's meaning-changing order, else the reversed sentence."""
    preset = PRESETS.get(sentence)
    return preset if preset is not None and len(preset) == n_tokens else tuple(reversed(range(n_tokens)))


def format_order(order: tuple[int, ...]) -> str:
    return " ".join(str(i) for i in order)


def validate_order(order: tuple[int, ...], n_tokens: int) -> tuple[int, ...]:
    """``order`` if it uses each of 0..n-1 exactly once; else a ``PermutationError`` saying why."""
    last = n_tokens - 1
    if len(order) != n_tokens:
        raise PermutationError(
            f"You gave {len(order)} position{'s' * (len(order) != 1)}, but there are {n_tokens} tokens: "
            f"the order needs each of 0 to {last} exactly once.")
    outside = [i for i in order if not 0 <= i <= last]
    if outside:
        raise PermutationError(f"{outside[0]} is out of range: positions run from 0 to {last}.")
    repeated = sorted({i for i in order if order.count(i) > 1})
    if repeated:
        missing = sorted(set(range(n_tokens)) - set(order))
        raise PermutationError(
            f"{repeated[0]} appears more than once, so {', '.join(map(str, missing))} "
            f"{'is' if len(missing) == 1 else 'are'} missing: a permutation uses each position once.")
    return tuple(order)


def parse_order(text: str, n_tokens: int) -> tuple[int, ...]:
    """``"0 4 2 3 1"`` (spaces or commas) -> ``(0, 4, 2, 3, 1)``, validated."""
    pieces = [piece for piece in re.split(r"[\s,]+", text.strip()) if piece]
    if not pieces:
        raise PermutationError(
            f"Type an order: the numbers 0 to {n_tokens - 1}, each once, e.g. "
            f"'{format_order(tuple(reversed(range(n_tokens))))}'.")
    for piece in pieces:
        if not re.fullmatch(r"-?\d+", piece):
            raise PermutationError(f"'{piece}' is not a whole number: type positions like '2 0 1'.")
    return validate_order(tuple(int(piece) for piece in pieces), n_tokens)


def order_from_picks(picks: tuple[int, ...], n_tokens: int) -> tuple[int, ...]:
    """Tokens picked one after another in a multiselect -> the order they were picked in."""
    if len(picks) < n_tokens:
        raise PermutationError(f"Pick all {n_tokens} tokens in their new order: {len(picks)} picked so far.")
    return validate_order(tuple(picks), n_tokens)


def shuffled_order(n_tokens: int, draw: int) -> tuple[int, ...]:
    """A random permutation, reproducible from ``draw``; never the identity when n > 1."""
    order = list(range(n_tokens))
    random.Random(draw).shuffle(order)
    if n_tokens > 1 and order == sorted(order):
        order = order[1:] + order[:1]
    return tuple(order)


# ---------------------------------------------------------------- the model

def word_embedding(word: str, d_model: int, seed: int) -> torch.Tensor:
    """(D,) standard normal, a pure function of (seed, word): the same word always gets the same row."""
    generator = torch.Generator().manual_seed(zlib.crc32(f"{seed}:{word}".encode()))
    return torch.randn(d_model, generator=generator)


def embed(tokens: tuple[str, ...], d_model: int, seed: int) -> torch.Tensor:
    """(T, D): one row per token."""
    return torch.stack([word_embedding(token, d_model, seed) for token in tokens])


def _projections(d_model: int, seed: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """W_q, W_k, W_v, each (D, D), scaled so logits stay O(1)."""
    generator = torch.Generator().manual_seed(seed)
    weights = torch.randn(3, d_model, d_model, generator=generator) / d_model ** 0.5
    return weights[0], weights[1], weights[2]


def self_attention(x: torch.Tensor, seed: int, causal: bool = False) -> torch.Tensor:
    """(T, D) -> (T, D): one head of attention with fixed random projections."""
    w_q, w_k, w_v = _projections(x.shape[-1], seed)
    size = x.shape[0]
    # (T, T): -inf above the diagonal, so query i only sees keys j <= i
    mask = torch.full((size, size), float("-inf")).triu(1) if causal else None
    out, _ = attention(x @ w_q, x @ w_k, x @ w_v, bias=mask)
    return out


def rnn_final_state(x: torch.Tensor, seed: int) -> torch.Tensor:
    """(T, D) -> (RNN_HIDDEN,): h_t = tanh(W_x x_t + W_h h_{t-1}), fixed random weights."""
    generator = torch.Generator().manual_seed(seed + 1)
    w_x = torch.randn(RNN_HIDDEN, x.shape[-1], generator=generator) / x.shape[-1] ** 0.5
    w_h = torch.randn(RNN_HIDDEN, RNN_HIDDEN, generator=generator) * 0.9 / RNN_HIDDEN ** 0.5
    hidden = torch.zeros(RNN_HIDDEN)
    for x_t in x:  # the recurrence: step t sees only the summary of steps < t
        hidden = torch.tanh(w_x @ x_t + w_h @ hidden)
    return hidden


def _rows(matrix: torch.Tensor) -> tuple[tuple[float, ...], ...]:
    return tuple(tuple(float(v) for v in row) for row in matrix)


# ---------------------------------------------------------------- the experiment

@dataclass(frozen=True)
class EquivarianceResult:
    tokens: tuple[str, ...]
    order: tuple[int, ...]
    positional: bool
    causal: bool
    pooled: bool
    permuted_output: tuple[tuple[float, ...], ...]  # attn(PX), or its mean over tokens (1 row)
    expected_output: tuple[tuple[float, ...], ...]  # P attn(X), or mean of attn(X) (1 row)
    max_difference: float
    output_scale: float  # max |entry| of expected_output, to read max_difference against
    tolerance: float = TOLERANCE

    @property
    def permuted_tokens(self) -> tuple[str, ...]:
        return tuple(self.tokens[i] for i in self.order)

    @property
    def holds(self) -> bool:
        return self.max_difference <= self.tolerance

    @property
    def is_identity(self) -> bool:
        return self.order == tuple(range(len(self.order)))

    @property
    def claim(self) -> str:
        return "mean(attn(PX)) = mean(attn(X))" if self.pooled else "attn(PX) = P·attn(X)"

    @property
    def property_name(self) -> str:
        return "invariant" if self.pooled else "equivariant"

    @property
    def relative_difference(self) -> float:
        return self.max_difference / self.output_scale if self.output_scale else 0.0

    @property
    def verdict(self) -> str:
        numbers = f"largest difference {self.max_difference:.2g}, tolerance {self.tolerance:g}"
        if self.holds:
            return f"{self.claim} holds: permutation-{self.property_name} ({numbers})."
        return (f"{self.claim} breaks: not permutation-{self.property_name} ({numbers}, "
                f"{self.relative_difference:.0%} of the largest output entry).")

    @property
    def explanation_key(self) -> str:
        """Which text block of the lesson explains this outcome."""
        if self.is_identity:
            return "why-identity"
        if self.holds:
            return "why-invariant" if self.pooled else "why-equivariant"
        if self.positional and self.causal:
            return "why-positional-and-causal"
        return "why-positional" if self.positional else "why-causal"


def equivariance_experiment(
    tokens: tuple[str, ...], order: tuple[int, ...], *, d_model: int = 16, seed: int = 0,
    positional: bool = False, causal: bool = False, pooled: bool = False,
) -> EquivarianceResult:
    """Run attention on X and on PX (adding positions/mask/pooling as asked) and compare."""
    validate_order(order, len(tokens))
    x = embed(tokens, d_model, seed)  # (T, D)
    p = permutation_matrix(order)  # (T, T); 0/1 entries, so P @ M moves rows exactly
    permuted_x = p @ x
    if positional:  # positions belong to slots, not to words: slot i gets PE[i] either way
        table = sinusoidal_encoding(len(tokens), d_model)
        x, permuted_x = x + table, permuted_x + table
    permuted_output = self_attention(permuted_x, seed, causal)  # attn(PX)
    expected = p @ self_attention(x, seed, causal)  # P attn(X)
    if pooled:
        permuted_output, expected = permuted_output.mean(0, keepdim=True), expected.mean(0, keepdim=True)
    return EquivarianceResult(
        tokens=tuple(tokens), order=tuple(order), positional=positional, causal=causal, pooled=pooled,
        permuted_output=_rows(permuted_output), expected_output=_rows(expected),
        max_difference=float((permuted_output - expected).abs().max()),
        output_scale=float(expected.abs().max()),
    )


def comparison_charts(result: EquivarianceResult) -> tuple[alt.Chart, alt.Chart, alt.Chart]:
    """attn(PX), P·attn(X) (one shared colour range) and their difference, as heatmaps."""
    permuted = torch.tensor(result.permuted_output)
    expected = torch.tensor(result.expected_output)
    rows = ["mean over tokens"] if result.pooled else list(result.permuted_tokens)
    limit = float(max(permuted.abs().max(), expected.abs().max()))
    common = dict(x_title=axis_title("feature", "index"), y_title="slot: token", row_labels=rows,
                  value_format=".4f")
    left_title, right_title = (("mean(attn(PX))", "mean(attn(X))") if result.pooled
                               else ("attn(PX)", "P·attn(X)"))
    verdict = "equal up to rounding" if result.holds else "different"
    return (
        heatmap(permuted, title=left_title, value_title="output value", domain=(-limit, limit), **common),
        heatmap(expected, title=right_title, value_title="output value", domain=(-limit, limit), **common),
        heatmap(permuted - expected, title="difference (left − middle)", value_title="difference",
                **{**common, "value_format": ".1e"},
                description=(f"Heatmap of {left_title} minus {right_title}, one row per slot and one column per "
                             f"feature: the largest difference is {result.max_difference:.1e} in size, so the two "
                             f"are {verdict}.")),
    )


# ---------------------------------------------------------------- the RNN contrast

@dataclass(frozen=True)
class RecurrenceContrast:
    tokens: tuple[str, ...]
    order: tuple[int, ...]
    states: pd.DataFrame  # tidy: model, sentence, unit, value
    rnn_difference: float  # max |h_T(PX) - h_T(X)|
    pooled_attention_difference: float  # max |mean attn(PX) - mean attn(X)|
    tolerance: float = TOLERANCE

    @property
    def rnn_tells_apart(self) -> bool:
        return self.rnn_difference > self.tolerance

    @property
    def attention_tells_apart(self) -> bool:
        return self.pooled_attention_difference > self.tolerance

    def summary(self) -> pd.DataFrame:
        """One row per model: the largest difference and whether it sees the reordering."""
        return pd.DataFrame({
            "model": ["RNN, final hidden state", "attention, mean-pooled, no positions"],
            "max |difference| between the two orders": [self.rnn_difference, self.pooled_attention_difference],
            "tells the two orders apart": [self.rnn_tells_apart, self.attention_tells_apart],
        })


def recurrence_contrast(tokens: tuple[str, ...], order: tuple[int, ...], *, d_model: int = 16,
                        seed: int = 0) -> RecurrenceContrast:
    """Summarise a sentence and its permutation with an RNN and with pooled attention."""
    validate_order(order, len(tokens))
    x = embed(tokens, d_model, seed)
    permuted_x = permutation_matrix(order) @ x
    summaries = {
        "RNN final state": (rnn_final_state(x, seed), rnn_final_state(permuted_x, seed)),
        "attention, mean-pooled": (self_attention(x, seed).mean(0), self_attention(permuted_x, seed).mean(0)),
    }
    sentences = (" ".join(tokens), " ".join(tokens[i] for i in order))
    records = [
        {"model": model, "sentence": sentences[k], "unit": unit, "value": float(state[unit])}
        for model, pair in summaries.items() for k, state in enumerate(pair) for unit in range(len(state))
    ]
    rnn, pooled = summaries["RNN final state"], summaries["attention, mean-pooled"]
    return RecurrenceContrast(
        tokens=tuple(tokens), order=tuple(order), states=pd.DataFrame(records),
        rnn_difference=float((rnn[0] - rnn[1]).abs().max()),
        pooled_attention_difference=float((pooled[0] - pooled[1]).abs().max()),
    )


def contrast_charts(contrast: RecurrenceContrast) -> tuple[alt.Chart, alt.Chart]:
    """Grouped bars, one chart per model: its summary vector for the original and the permuted order."""
    charts = []
    for model, title in (("RNN final state", "RNN: final hidden state"),
                         ("attention, mean-pooled", "Attention: mean-pooled output")):
        frame = contrast.states[contrast.states["model"] == model]
        sentences = list(dict.fromkeys(frame["sentence"]))  # the original order first
        gap = (contrast.rnn_difference if model == "RNN final state" else contrast.pooled_attention_difference)
        # Not by colour alone: the original order's bars are solid and on the left, the permuted one's pale.
        legend = alt.Legend(orient="bottom", direction="vertical", labelLimit=600)
        charts.append(alt.Chart(frame, title=title).mark_bar(stroke="black", strokeWidth=0.5).encode(
            x=alt.X("unit:O", title=axis_title("unit of the summary vector", "index"), axis=alt.Axis(labelAngle=0)),
            xOffset=alt.XOffset("sentence:N", sort=sentences),
            y=alt.Y("value:Q", title=axis_title("value", "unitless")),
            color=alt.Color("sentence:N", title="sentence (left bar, right bar)", sort=sentences, legend=legend),
            fillOpacity=alt.FillOpacity("sentence:N", sort=sentences, scale=alt.Scale(range=[1.0, 0.45]),
                                        legend=legend, title="sentence (left bar, right bar)"),
            tooltip=[alt.Tooltip("sentence:N"), alt.Tooltip("unit:O"), alt.Tooltip("value:Q", format=".4f")],
        ).properties(height=320, description=(  # total height: title, axes and the legend below take ~150 px
            f"Grouped bars: {title}, each unit of the summary vector for the original order "
            f"({sentences[0]}, left bar) and for the permuted order ({sentences[-1]}, right bar); the largest "
            f"difference between the two is {gap:.2e}.")))
    return charts[0], charts[1]
