"""The permutation lab's inputs: a sentence's tokens and the new order a student types, picks or shuffles.

An order is a tuple with ``order[i]`` = the original token that lands in slot i. Every function
here either returns a valid permutation of 0..T-1 or raises ``PermutationError`` with a sentence
that says what is wrong and how to fix it.
"""

from __future__ import annotations

import random
import re

# Preset sentences and the permutation that turns each into its "other meaning".
PRESETS: dict[str, tuple[int, ...]] = {
    "the dog bit the man": (0, 4, 2, 3, 1),  # -> the man bit the dog
    "she said he lied": (2, 1, 0, 3),  # -> he said she lied
    "only i love you": (1, 0, 2, 3),  # -> i only love you
}
RANDOM_TOKENS = "random tokens"


class PermutationError(ValueError):
    """A typed or picked order that is not a permutation of 0..T-1; the message says why."""


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
            f"the order needs each of 0 to {last} exactly once."
        )
    outside = [i for i in order if not 0 <= i <= last]
    if outside:
        raise PermutationError(f"{outside[0]} is out of range: positions run from 0 to {last}.")
    repeated = sorted({i for i in order if order.count(i) > 1})
    if repeated:
        missing = sorted(set(range(n_tokens)) - set(order))
        raise PermutationError(
            f"{repeated[0]} appears more than once, so {', '.join(map(str, missing))} "
            f"{'is' if len(missing) == 1 else 'are'} missing: a permutation uses each position once."
        )
    return tuple(order)


def parse_order(text: str, n_tokens: int) -> tuple[int, ...]:
    """``"0 4 2 3 1"`` (spaces or commas) -> ``(0, 4, 2, 3, 1)``, validated."""
    pieces = [piece for piece in re.split(r"[\s,]+", text.strip()) if piece]
    if not pieces:
        raise PermutationError(
            f"Type an order: the numbers 0 to {n_tokens - 1}, each once, e.g. "
            f"'{format_order(tuple(reversed(range(n_tokens))))}'."
        )
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
