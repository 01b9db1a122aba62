"""The reading of perplexity and of the passkey probe: does the encoding that extrapolates in
perplexity also retrieve? Markdown sentences computed from the numbers, none written in advance."""

from __future__ import annotations

import math

from poslab.experiments.results import PASSKEY, ExtrapolationResults
from poslab.experiments.tasks import share_of_gaps_at_least
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
SEES_ABSOLUTE = ("none", "sinusoidal", "learned")  # NoPE by the causal mask: the first token sees only itself
RARE_GAP = 2  # needles at least this many vocabularies back: gaps the training answers rarely need
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
        if r.near and r.near.can_run and e in ENCODINGS
    }
    far = {
        e: r
        for e, r in retrieval_by_reach(results.probes, train_len, longest).items()
        if r.far is not None and r.far.can_run and e in ENCODINGS
    }
    lines = [_training_length(results, at_train, train_len, chance)]
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


def _training_length(results: ExtrapolationResults, at_train: dict[str, Cell], train_len: int, chance: float) -> str:
    """Retrieval at the training length, and how rarely training asked for the farthest needles' gaps."""
    text = (
        f"**At the training length ({train_len} tokens)** the needles retrieved, over every depth, were: "
        + ", ".join(f"{TITLES[e]} {_share(c)}" for e, c in sorted(at_train.items(), key=lambda item: -item[1].mean))
        + f" (a guess gets {percent(chance)})."
    )
    vocab = round(1 / results.record.chance_accuracy)
    distances = sorted(
        {p.distance for p in results.probes if p.eval_len == train_len and p.probe == PASSKEY}, reverse=True
    )
    rare = [d for d in distances if d >= RARE_GAP * vocab]
    if rare:
        shares = ", ".join(f"{d} or more back in {_small(share_of_gaps_at_least(d, train_len, vocab))}" for d in rare)
        text += (
            f" Every needle there is less than {train_len} tokens back, inside the training length, but not "
            f"every one is at a distance the task trained on: the recall rule's match is usually a few tokens "
            f"back, and in training sequences it lies {shares} of the answers. Distance and length are two "
            f"things: the chart of retrieval against distance below draws one line per test length."
        )
    return text


def _small(share: float) -> str:
    """A share that may be tiny: "5%", "0.6%", "0.0023%"."""
    return f"{100 * share:.0f}%" if share >= 0.01 else f"{100 * share:.2g}%"


def _start_of_sequence(results: ExtrapolationResults, longest: int, chance: float) -> list[str]:
    """Needles at the very first positions against those in the middle, encoding by encoding."""
    cells = [c for c in summarize_probes(results.probes) if c.eval_len == longest and c.can_run]
    leads, flat = {}, {}
    for encoding in ENCODINGS:
        start = [c for c in cells if c.encoding == encoding and c.depth == 0.0]
        middle = [c.mean for c in cells if c.encoding == encoding and 0.0 < c.depth < 1.0]
        if not (start and middle):
            continue
        mid = sum(middle) / len(middle)
        lead = start[0].mean - mid
        shown = f"{TITLES[encoding]} {percent(start[0].mean)} against {percent(mid)}"
        if lead >= max(STANDS_OUT, difference_noise(start[0].trials * start[0].n_seeds)):
            leads[encoding] = shown
        else:
            flat[encoding] = shown
    if not leads:
        return [f"At {longest} tokens no encoding found a needle at the very start more often than one in the middle."]
    text = (
        f"**The very start stands out for some encodings** at {longest} tokens: a needle at depth 0 (the key at "
        f"position 0, its value at 1) was found more often than one in the middle by {names(list(leads.values()))}"
        + (f"; no lead beyond the noise for {names(list(flat.values()))}." if flat else ".")
    )
    if set(leads) <= set(SEES_ABSOLUTE) and "rope" in flat:
        text += (
            " Positions 0 and 1 are absolute positions every training sequence had. An encoding that sees "
            "absolute position finds the needle where it trained, however long the sequence: sinusoidal adds "
            "those positions' codes to the tokens, a learned table has rows for them, and NoPE can tell the first "
            "positions by the causal mask alone (the first token attends only to itself). RoPE sees only the "
            "offset between query and key, which is beyond training there, so the start gives it nothing."
        )
    return [text]
