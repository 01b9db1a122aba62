"""RoPE's context-extension arms and effective length: a table and a reading, computed from the data.

Effective length, as RULER defines it (Hsieh et al., 2024): the longest test length up to which a
score stays at or above one threshold, the same for every arm. RULER's threshold is a reference
model's score at its short length; here the reference is plain RoPE at the training length, the
model every RoPE arm starts from, with a tolerance: the bar is chance plus ``KEPT`` of RoPE's
margin over chance there. Three scores: recall accuracy, passkey retrieval and two-hop chains
followed (each probe pooled over its depths, then averaged over seeds).
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import mean

import pandas as pd

from poslab.experiments.results import PASSKEY, TWO_HOP, ExtrapolationResults
from poslab.experiments.rope_arms import ARMS, SCALED_ARMS, scaling_of
from poslab.viz.extrapolation_data import TITLES, percent, summarize, train_len_of
from poslab.viz.extrapolation_reading import names

KEPT = 0.9  # of the reference's margin over chance at the training length: the bar
SCORES = {"accuracy": "recall accuracy", PASSKEY: "passkey retrieval", TWO_HOP: "two-hop chains followed"}
METHODS = {"linear": "position interpolation (PI)", "ntk": "NTK-aware scaling", "yarn": "YaRN"}


@dataclass(frozen=True)
class Effective:
    """One arm's effective length for one score, and the bar it was held to."""

    arm: str
    score: str  # a key of SCORES
    length: int | None  # None: below the bar even at the training length
    bar: float
    at_train: float
    at_longest: float | None


def scores_by_length(results: ExtrapolationResults, score: str) -> dict[tuple[str, int], float]:
    """Mean over seeds of each (arm, length): accuracy, or a probe's share pooled over its depths."""
    if score == "accuracy":
        return {(c.encoding, c.eval_len): c.mean for c in summarize(results.measurements) if c.can_run}
    pooled: dict[tuple[str, int, int], list[int]] = {}
    for p in results.probes:
        if p.probe == score and p.retrieved is not None:
            hits = pooled.setdefault((p.encoding, p.eval_len, p.seed), [0, 0])
            hits[0], hits[1] = hits[0] + p.retrieved, hits[1] + p.trials
    per_seed: dict[tuple[str, int], list[float]] = {}
    for (arm, length, _), (hits, trials) in pooled.items():
        per_seed.setdefault((arm, length), []).append(hits / trials)
    return {key: mean(values) for key, values in per_seed.items()}


def chance_of(results: ExtrapolationResults, score: str) -> float:
    record = results.record
    chance = {"accuracy": record.chance_accuracy, PASSKEY: record.probe_chance, TWO_HOP: record.two_hop_chance}
    return chance[score] or 0.0


def effective_lengths(results: ExtrapolationResults, score: str) -> list[Effective]:
    """Every arm's effective length for ``score``; empty without plain RoPE at the training length."""
    values, train_len = scores_by_length(results, score), train_len_of(results)
    if ("rope", train_len) not in values:
        return []
    chance = chance_of(results, score)
    bar = chance + KEPT * (values[("rope", train_len)] - chance)
    found = []
    for arm in [a for a in ARMS if (a, train_len) in values]:
        lengths = sorted(length for a, length in values if a == arm)
        passed = None
        for length in lengths:
            if values[(arm, length)] < bar:
                break
            passed = length
        found.append(Effective(arm, score, passed, bar, values[(arm, train_len)], values.get((arm, lengths[-1]))))
    return found


def effective_table(results: ExtrapolationResults) -> pd.DataFrame:
    """Arms as rows, the three scores as columns: the effective length in tokens, or "below the bar";
    empty for a run made before the RoPE arms."""
    train_len, rows = train_len_of(results), {}
    if not _has_arms(results):
        return pd.DataFrame()
    for score, title in SCORES.items():
        for e in effective_lengths(results, score):
            shown = f"{e.length} ({e.length // train_len}x)" if e.length else f"under {train_len}"
            rows.setdefault(TITLES[e.arm], {})[f"{title} (bar {percent(e.bar)})"] = shown
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("arm").reset_index()


def _has_arms(results: ExtrapolationResults) -> bool:
    return any(m.encoding in SCALED_ARMS for m in results.measurements)


def extension_reading(results: ExtrapolationResults) -> str:
    """What the schedules did for RoPE, score by score, and where the harder probe parts from the rest."""
    found = {score: {e.arm: e for e in effective_lengths(results, score)} for score in SCORES}
    if not _has_arms(results) or "rope" not in found["accuracy"]:
        return "This run has no RoPE arms with a context-extension schedule: it was made before they existed."
    train_len = train_len_of(results)
    rope = {score: found[score].get("rope") for score in SCORES}
    lines = [
        f"**The bar.** An arm's effective length is the longest test length up to which its score stays at or "
        f"above one bar for every arm: chance plus {percent(KEPT)} of plain RoPE's margin over chance at the "
        f"training length ({train_len} tokens), the score every RoPE arm starts from. The bars: "
        + ", ".join(f"{SCORES[s]} {percent(rope[s].bar)}" for s in SCORES if rope[s])
        + "."
    ]
    gained: dict[str, list[str]] = {}
    for arm in [a for a in SCALED_ARMS if a in found["accuracy"]]:
        parts = []
        for score in SCORES:
            mine, plain = found[score].get(arm), rope[score]
            if mine is None or plain is None:
                continue
            if (mine.length or 0) > (plain.length or 0):
                gained.setdefault(score, []).append(arm)
            parts.append(f"{SCORES[score]} {_length(mine, train_len)} (RoPE: {_length(plain, train_len)})")
        lines.append(
            f"**{METHODS[scaling_of(arm)]}** ({TITLES[arm]}): effective length on "
            + "; ".join(parts)
            + "."
            + _at_longest(results, arm)
        )
    lines.append(_verdict(gained))
    return "\n\n".join(lines)


def _at_longest(results: ExtrapolationResults, arm: str) -> str:
    """The arm against plain RoPE at the longest length both ran, perplexity included."""
    longest = max(m.eval_len for m in results.measurements)
    perplexity = {c.encoding: c.mean for c in summarize(results.measurements, "perplexity") if c.eval_len == longest}
    changes = []
    if perplexity.get(arm) is not None and perplexity.get("rope") is not None:
        changes.append(f"perplexity {perplexity['rope']:.1f} to {perplexity[arm]:.1f}")
    for score in SCORES:
        values = scores_by_length(results, score)
        if (arm, longest) in values and ("rope", longest) in values:
            changes.append(f"{SCORES[score]} {percent(values[('rope', longest)])} to {percent(values[(arm, longest)])}")
    return f" At {longest} tokens, from plain RoPE to this arm: {', '.join(changes)}." if changes else ""


def _length(effective: Effective, train_len: int) -> str:
    return f"{effective.length}" if effective.length else f"under {train_len}"


def _verdict(gained: dict[str, list[str]]) -> str:
    easy = sorted({arm for score in ("accuracy", PASSKEY) for arm in gained.get(score, [])}, key=ARMS.index)
    hard = gained.get(TWO_HOP, [])
    if not easy and not hard:
        return "**No schedule lengthened RoPE's effective length** on any of the three scores in this run."
    lagging = [arm for arm in easy if arm not in hard]
    if lagging:
        return (
            f"**Cheap at test time, and not enough:** {names([TITLES[a] for a in lagging])} lengthened RoPE's "
            f"effective length on the recall task or the passkey, with no training, but not on the two-hop chain: "
            f"the score that needs two far facts in a row kept the shorter length."
        )
    if not easy:
        return (
            f"**Only the two-hop chain gained:** {names([TITLES[a] for a in hard])} lengthened RoPE's effective "
            f"length on it, and no schedule did on the recall task or the passkey."
        )
    return (
        f"**Here the two-hop chain gained as well:** {names([TITLES[a] for a in hard])} lengthened RoPE's "
        f"effective length on it, as on the easier scores."
    )


def scores_table(results: ExtrapolationResults) -> pd.DataFrame:
    """One row per (arm, score), test lengths as columns: the numbers the effective lengths come from."""
    train_len, rows = train_len_of(results), {}
    if not _has_arms(results):
        return pd.DataFrame()
    for score, title in SCORES.items():
        for (arm, length), value in sorted(scores_by_length(results, score).items(), key=lambda i: ARMS.index(i[0][0])):
            rows.setdefault((TITLES[arm], title), {})[f"{length} tokens ({length // train_len}x)"] = percent(value)
    frame = pd.DataFrame.from_dict(rows, orient="index")
    frame.index = pd.MultiIndex.from_tuples(frame.index, names=["arm", "score"])
    return frame.reset_index()
