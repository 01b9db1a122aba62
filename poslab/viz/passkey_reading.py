"""The reading of perplexity and of the passkey probe: does the encoding that extrapolates in
perplexity also retrieve? Markdown sentences computed from the numbers, none written in advance."""

from __future__ import annotations

import math

from poslab.experiments.results import ExtrapolationResults
from poslab.experiments.tiny_transformer import ENCODINGS
from poslab.viz.extrapolation_data import (
    TITLES,
    Cell,
    Reach,
    percent,
    retrieval_by_reach,
    summarize,
    summarize_probes,
    train_len_of,
)
from poslab.viz.extrapolation_reading import names

RETRIEVES = 0.5  # far needles found with at least half of the margin over chance that near ones get
CAN_RETRIEVE = 0.2  # near needles found this far above chance: the model retrieves at all
STANDS_OUT = 0.15  # a needle at the very start found this much more often than one in the middle
WORSE_THAN_GUESS = 1.1  # a perplexity this many times the vocabulary size: clearly worse than a guess


def noise(needles: int) -> float:
    """Two standard errors of a share over ``needles`` at its widest (a share of one half)."""
    return 1 / math.sqrt(needles)


def difference_noise(needles: int) -> float:
    """Two standard errors of the difference of two such shares, each over ``needles``."""
    return math.sqrt(2) * noise(needles)


def perplexity_reading(results: ExtrapolationResults) -> str:
    """Which encoding kept the lowest perplexity at the longest length, and which fell below a guess."""
    cells = {(c.encoding, c.eval_len): c for c in summarize(results.measurements, "perplexity")}
    train_len, vocab = train_len_of(results), round(1 / results.record.chance_accuracy)
    longest = max(length for _, length in cells)
    ran = [
        e for e in ENCODINGS if (e, longest) in cells and cells[(e, longest)].can_run and cells[(e, train_len)].can_run
    ]
    if not ran:
        return "This run has no perplexity at the longest length (files made before it was measured have none)."
    ranked = sorted(ran, key=lambda e: cells[(e, longest)].mean)

    def change(e: str) -> str:
        return f"{TITLES[e]} {cells[(e, train_len)].mean:.1f} to {cells[(e, longest)].mean:.1f}"

    text = (
        f"**Perplexity from {train_len} to {longest} tokens:** {', '.join(change(e) for e in ranked)} "
        f"(1 is certain and right; a uniform guess over the {vocab} tokens scores {vocab}). "
        f"**{TITLES[ranked[0]]} kept the lowest perplexity.**"
    )
    worse = [e for e in ranked if cells[(e, longest)].mean > WORSE_THAN_GUESS * vocab]
    if worse:
        text += (
            f" {names([TITLES[e] for e in worse])} ended clearly worse than a uniform guess: past the "
            f"training length {'they put their' if len(worse) > 1 else 'it puts its'} probability on "
            f"wrong answers."
        )
    return text


def _share(cell: Cell) -> str:
    low, high = percent(cell.low), percent(cell.high)
    return percent(cell.mean) + (f" (seeds {low}-{high})" if cell.n_seeds > 1 and low != high else "")


def _retrieves(reach: Reach, chance: float) -> bool:
    return (
        reach.far is not None
        and reach.near is not None
        and reach.near.mean > chance
        and reach.far.mean - chance >= RETRIEVES * (reach.near.mean - chance)
    )


def probe_reading(results: ExtrapolationResults) -> str:
    """What the passkey probe shows, ending on the question: does the perplexity winner retrieve?"""
    if not results.probes:
        return "This run has no passkey probe: it was made before the probe existed."
    train_len, chance = train_len_of(results), results.record.probe_chance
    longest = max(p.eval_len for p in results.probes)
    at_train = {
        e: r.near
        for e, r in retrieval_by_reach(results.probes, train_len, train_len).items()
        if r.near and r.near.can_run
    }
    far = {
        e: r
        for e, r in retrieval_by_reach(results.probes, train_len, longest).items()
        if r.far is not None and r.far.can_run
    }
    lines = [
        f"**At {train_len} tokens**, where every needle is within the gaps seen in training, the needles "
        f"retrieved were: "
        + ", ".join(f"{TITLES[e]} {_share(c)}" for e, c in sorted(at_train.items(), key=lambda item: -item[1].mean))
        + f" (a guess gets {percent(chance)})."
    ]
    if far:
        ranked = sorted(far, key=lambda e: -far[e].far.mean)
        lines.append(
            f"**At {longest} tokens, needles {train_len} or more tokens back** (beyond any gap in "
            f"training): "
            + ", ".join(f"{TITLES[e]} {_share(far[e].far)}" for e in ranked)
            + "; of the needles within reach of training, "
            + ", ".join(f"{TITLES[e]} {_share(far[e].near)}" for e in ranked if far[e].near)
            + "."
        )
        lines.append(_answer(results, far, train_len, longest, chance))
        lines += _start_of_sequence(results, longest, chance)
    blocked = [e for e in ENCODINGS if e not in far and any(p.encoding == e for p in results.probes)]
    if blocked:
        lines.append(
            f"{names([TITLES[e] for e in blocked])} cannot run at {longest} tokens, so "
            f"{'they have' if len(blocked) > 1 else 'it has'} no far needles to find."
        )
    trials = results.probes[0].trials * len({p.seed for p in results.probes})
    lines.append(
        f"Each share is over {trials} needles per test length and depth ({results.probes[0].trials} per "
        f"seed), so it is uncertain by up to ±{100 * noise(trials):.0f} points (two standard errors)."
    )
    return "\n\n".join(lines)


def _answer(results: ExtrapolationResults, far: dict[str, Reach], train_len: int, longest: int, chance: float) -> str:
    perplexity = {
        c.encoding: c
        for c in summarize(results.measurements, "perplexity")
        if c.eval_len == longest and c.can_run and c.encoding in far
    }
    if not perplexity:
        return "This run has no perplexity to hold the retrieval against."
    best = min(perplexity, key=lambda e: perplexity[e].mean)
    reach, title = far[best], TITLES[best]
    at = f"{perplexity[best].mean:.1f} at {longest} tokens"
    question = "**Does the encoding that extrapolates in perplexity also retrieve?"
    if reach.near is None or reach.near.mean - chance < CAN_RETRIEVE:
        found = f"{percent(reach.near.mean)} of even the nearest needles" if reach.near else "no near needle"
        return (
            f"{question} This run cannot say.** {title} has the lowest perplexity ({at}), but it found "
            f"{found} (a guess gets {percent(chance)}): it does not retrieve at all yet, near or far."
        )
    if _retrieves(reach, chance):
        return (
            f"{question} Here, yes.** {title} has the lowest perplexity ({at}) and found "
            f"{percent(reach.far.mean)} of the far needles, against {percent(reach.near.mean)} of the near ones."
        )
    text = (
        f"{question} Not here.** {title} has the lowest perplexity ({at}), yet it found only "
        f"{percent(reach.far.mean)} of the needles {train_len} or more tokens back (a guess gets "
        f"{percent(chance)}), against {percent(reach.near.mean)} of those within reach. Its perplexity "
        f"comes from the nearby tokens, which is all this task's answers need; the far context goes unused."
    )
    if best == "alibi":
        text += (
            " Press et al. (2022) and Chi et al. (2023) describe ALiBi at scale the same way: it extrapolates "
            "gracefully in perplexity, not in the use of far context."
        )
    finder = max(far, key=lambda e: far[e].far.mean)
    if finder != best and far[finder].far.mean - reach.far.mean >= difference_noise(far[finder].needles_far):
        text += (
            f" The best at far needles was {TITLES[finder]} ({percent(far[finder].far.mean)}): the ranking by "
            f"perplexity is not the ranking by retrieval."
        )
    return text


def _start_of_sequence(results: ExtrapolationResults, longest: int, chance: float) -> list[str]:
    """Needles at the very first position against those in the middle, where one stands out."""
    cells = [c for c in summarize_probes(results.probes) if c.eval_len == longest and c.can_run]
    standing_out = []
    for encoding in ENCODINGS:
        start = [c for c in cells if c.encoding == encoding and c.depth == 0.0]
        middle = [c.mean for c in cells if c.encoding == encoding and 0.0 < c.depth < 1.0]
        if not (start and middle):
            continue
        lead = start[0].mean - sum(middle) / len(middle)
        if lead >= max(STANDS_OUT, difference_noise(start[0].trials * start[0].n_seeds)):
            standing_out.append(
                f"{TITLES[encoding]} {percent(start[0].mean)} against {percent(sum(middle) / len(middle))}"
            )
    if not standing_out:
        return []
    return [
        f"**The very start stands out** at {longest} tokens: a needle at depth 0 was found more often than "
        f"one in the middle by {', '.join(standing_out)}. Likely because the first positions attend over only a "
        f"token or two, so the step that copies each token's predecessor forward is cleanest there, with or "
        f"without a positional encoding: a cousin of the 'lost in the middle' curves of long-context models "
        f"(Liu et al., 2024), where the start of the context is used best."
    ]
