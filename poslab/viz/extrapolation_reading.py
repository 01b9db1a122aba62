"""The reading of the accuracy results: a few Markdown sentences computed from the numbers.

Which encodings learned the task at the training length, which held up at the longest length,
which failed, which could not run, and how that compares with the ALiBi paper and with the NoPE
papers' length claim. Nothing in them is written in advance of the data.
"""

from __future__ import annotations

from collections.abc import Sequence

from poslab.experiments.results import ExtrapolationResults
from poslab.experiments.tiny_transformer import ENCODINGS
from poslab.viz.extrapolation_data import TITLES, Cell, percent, summarize, train_len_of

LEARNED_THRESHOLD = 0.5  # "learned the task" = at least half of the scored positions right at the training length
HELD_UP, FAILED = 0.9, 0.5  # share of the margin over chance kept at the longest length
PARTIAL_FACTOR = 2.0  # below LEARNED_THRESHOLD but at least twice chance: judged too, as a partial learner
UNDER_TRAINED_GAP = 0.2  # NoPE this far below the best encoding at the training length, with the same steps


def margin_kept(at_train: Cell, at_longest: Cell, chance: float) -> float:
    """How much of its margin over chance an encoding kept, 1 = all of it, 0 = down to chance."""
    return (at_longest.mean - chance) / max(at_train.mean - chance, 1e-9)


def names(items: Sequence[str]) -> str:
    """ "a", "a and b", "a, b and c"."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def reading(results: ExtrapolationResults) -> str:
    cells = {(c.encoding, c.eval_len): c for c in summarize(results.measurements)}
    train_len, chance = train_len_of(results), results.record.chance_accuracy
    longest = max(length for _, length in cells)
    encodings = [e for e in ENCODINGS if (e, train_len) in cells]
    at_train = {e: cells[(e, train_len)] for e in encodings}
    learned = [e for e in encodings if at_train[e].can_run and at_train[e].mean >= LEARNED_THRESHOLD]
    missed = [e for e in encodings if e not in learned]
    lines = [_training_length_sentence(at_train, learned, missed, train_len, chance)]
    runnable = [e for e in learned if cells[(e, longest)].can_run]
    # A partial learner (clearly above chance, below the bar) still has something to keep or lose.
    judged = [
        e
        for e in encodings
        if cells[(e, longest)].can_run and at_train[e].can_run and at_train[e].mean >= PARTIAL_FACTOR * chance
    ]
    if runnable:
        lines.append(_longest_sentence(cells, runnable, train_len, longest))
    kept = {e: margin_kept(cells[(e, train_len)], cells[(e, longest)], chance) for e in judged}
    lines += _verdicts(cells, kept, train_len, longest)
    for e in [e for e in encodings if not cells[(e, longest)].can_run]:
        first = min(length for (enc, length), c in cells.items() if enc == e and not c.can_run)
        lines.append(
            f"**{TITLES[e]} cannot run** at {first} tokens or more: its table has rows for the "
            f"{train_len} positions it trained on and none after, so there is no number to plot."
        )
    lines.append(_paper_sentence(cells, learned, runnable, train_len, longest))
    if ("none", train_len) in cells:
        lines.append(_nope_sentence(cells, at_train, kept, train_len, longest))
    if all(c.n_seeds == 1 for c in cells.values()):
        lines.append("One seed per encoding: no spread to show, so small differences may be luck.")
    return "\n\n".join(lines)


def _training_length_sentence(
    at_train: dict[str, Cell], learned: list[str], missed: list[str], train_len: int, chance: float
) -> str:
    def scores(encodings: list[str]) -> str:
        return names(
            [f"{TITLES[e]} ({percent(at_train[e].mean)})" for e in sorted(encodings, key=lambda e: -at_train[e].mean)]
        )

    bar = f"at least {percent(LEARNED_THRESHOLD)} right; chance is {percent(chance)}"
    if not learned:
        return (
            f"**At the training length ({train_len} tokens) no encoding learned the task** ({bar}): {scores(missed)}."
        )
    text = f"**At the training length ({train_len} tokens)** the task was learned ({bar}) by {scores(learned)}"
    return text + (f"; not by {scores(missed)}." if missed else ".")


def _longest_sentence(cells: dict, runnable: list[str], train_len: int, longest: int) -> str:
    ranked = sorted(runnable, key=lambda e: -cells[(e, longest)].mean)
    best = cells[(ranked[0], longest)]
    text = (
        f"**At {longest} tokens ({longest // train_len}x the training length) {TITLES[ranked[0]]} held up "
        f"best** with {percent(best.mean)}"
    )
    if best.n_seeds > 1:
        text += f" (seeds {percent(best.low)}-{percent(best.high)})"
    text += f", against {percent(cells[(ranked[0], train_len)].mean)} at {train_len} tokens"
    if len(ranked) > 1:
        second = cells[(ranked[1], longest)]
        overlap = best.n_seeds > 1 and second.high >= best.low
        text += f"; {TITLES[ranked[1]]} came next with {percent(second.mean)}" + (
            ", within the seed spread." if overlap else "."
        )
    return text + ("" if len(ranked) > 1 else ".")


def _verdicts(cells: dict, kept: dict[str, float], train_len: int, longest: int) -> list[str]:
    def change(e: str) -> str:
        return f"{TITLES[e]} ({percent(cells[(e, train_len)].mean)} to {percent(cells[(e, longest)].mean)})"

    failed = [e for e in kept if kept[e] < FAILED]
    faded = [e for e in kept if FAILED <= kept[e] < HELD_UP]
    held = [e for e in kept if kept[e] >= HELD_UP]
    lines = []
    if held:
        lines.append(
            f"**Held up:** {', '.join(change(e) for e in held)} kept at least {percent(HELD_UP)} of "
            f"{'their' if len(held) > 1 else 'its'} margin over chance."
        )
    if failed:
        lines.append(
            f"**Failed past the training length:** {', '.join(change(e) for e in failed)}: "
            f"{'each' if len(failed) > 1 else 'it'} lost more than half of its margin over chance."
        )
    if faded:
        lines.append(
            f"**Faded:** {', '.join(change(e) for e in faded)} kept between half and "
            f"{percent(HELD_UP)} of {'their' if len(faded) > 1 else 'its'} margin over chance."
        )
    return lines


def _paper_sentence(cells: dict, learned: list[str], runnable: list[str], train_len: int, longest: int) -> str:
    if ("alibi", train_len) not in cells:
        return "This run has no ALiBi model, so it cannot be compared with the ALiBi paper."
    if "alibi" not in learned:
        return (
            f"ALiBi did not learn the task at {train_len} tokens here, so this run cannot test the "
            f"ALiBi paper's claim that it extrapolates best."
        )
    best = max(runnable, key=lambda e: cells[(e, longest)].mean)
    if best == "alibi":
        return (
            "**As in the ALiBi paper's figure**, ALiBi extrapolated best of the encodings compared. That "
            "figure measures perplexity; whether ALiBi also *uses* the far context is what the passkey "
            "probe below asks."
        )
    return (
        f"**Unlike the ALiBi paper's figure**, where ALiBi extrapolated best, here {TITLES[best]} did "
        f"({percent(cells[(best, longest)].mean)} against ALiBi's {percent(cells[('alibi', longest)].mean)})."
    )


NOPE_CLAIM = (
    "Kazemnejad et al. (2023) found NoPE generalising to longer inputs better than designed encodings, "
    "in decoder-only models of about 100M parameters on synthetic reasoning and arithmetic tasks, tested "
    "at up to twice their training length; Wang et al. (2024, ACL Findings) found NoPE language models "
    "reaching further than RoPE ones, but only to a limit, past which their attention spreads too thin."
)


def _nope_sentence(cells: dict, at_train: dict[str, Cell], kept: dict[str, float], train_len: int, longest: int) -> str:
    """The NoPE papers' claim is about length: hold the lab's NoPE to that claim, and say when it is
    too weak at the training length for the comparison to mean much."""
    nope = at_train["none"]
    best = max((e for e in at_train if at_train[e].can_run), key=lambda e: at_train[e].mean)
    lines = [f"**NoPE and the length claim.** {NOPE_CLAIM}"]
    if "none" in kept:
        others = sorted((e for e in kept if e != "none"), key=lambda e: -kept[e])
        better = [e for e in others if kept[e] > kept["none"]]
        compared = ", ".join(f"{TITLES[e]} {percent(max(kept[e], 0.0))}" for e in others)
        verdict = (
            "more than any other encoding, as the papers found"
            if others and not better
            else f"less than {names([TITLES[e] for e in better])}, unlike the papers' finding"
            if better
            else "with no other encoding to compare against"
        )
        lines.append(
            f"From {train_len} to {longest} tokens this NoPE kept {percent(max(kept['none'], 0.0))} of its "
            f"margin over chance, {verdict}" + (f" ({compared})." if others else ".")
        )
    else:
        lines.append(
            f"This NoPE reached only {percent(nope.mean)} at {train_len} tokens, too close to chance "
            f"to say how it holds up at {longest}."
        )
    if best != "none" and nope.mean <= at_train[best].mean - UNDER_TRAINED_GAP:
        lines.append(
            f"This toy NoPE is under-trained: with the same training steps it reached "
            f"{percent(nope.mean)} at the training length against {TITLES[best]}'s "
            f"{percent(at_train[best].mean)}, so its curve says more about its training than about NoPE."
        )
    return " ".join(lines)
