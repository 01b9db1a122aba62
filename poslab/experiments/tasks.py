"""The synthetic task of the extrapolation lab: recall what followed the last occurrence.

A sequence is T tokens drawn uniformly from a vocabulary of V. At position t the model must
predict the token that came right after the most recent earlier occurrence of token x[t]:

    tokens   7 3 9 3 5 9 ...
    answer   - - - 9 - 3 ...     (at t=3, the last 3 was at t=1 and was followed by 9)

The answer depends on relative position twice: "right after" is an offset of +1 from the match, and
"most recent" means the nearest match wins. It is also local: the gap back to the last occurrence
is about V tokens whatever the sequence length, so a longer test sequence asks for the same skill
at unseen absolute positions. This is the task that "induction heads" solve. Positions whose token
has not appeared before have no answer and are left out of the loss and the accuracy.
"""

from __future__ import annotations

import torch

IGNORE = -100  # target of a position with no answer (cross_entropy's default ignore_index)

TASK_DESCRIPTION = (
    "recall: at each position, predict the token that followed the most recent earlier occurrence of the current token"
)


def recall_targets(tokens: torch.Tensor) -> torch.Tensor:
    """tokens ``[B, T]`` -> targets ``[B, T]``: the token after the last earlier match, or ``IGNORE``."""
    T = tokens.shape[1]
    position = torch.arange(T, device=tokens.device)
    earlier = position[None, :] < position[:, None]  # (T, T): key j before query t
    matches = (tokens[:, :, None] == tokens[:, None, :]) & earlier  # (B, T, T)
    # Score a match at j by j + 1 so that the max picks the latest one and 0 means "no match".
    after_last_match = torch.where(matches, position + 1, 0).amax(dim=-1)  # (B, T)
    answers = tokens.gather(1, after_last_match.clamp(max=T - 1))  # (B, T)
    return answers.masked_fill(after_last_match == 0, IGNORE)


def recall_batch(
    batch_size: int, seq_len: int, vocab_size: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """A batch of random token sequences ``[B, T]`` and their recall targets ``[B, T]``."""
    tokens = torch.randint(vocab_size, (batch_size, seq_len), generator=generator)
    return tokens, recall_targets(tokens)


def share_of_gaps_at_least(gap: int, seq_len: int, vocab_size: int) -> float:
    """The share of a training sequence's answers whose last earlier match is ``gap`` or more tokens
    back. At position t the match is g back with probability p q^(g-1) (p = 1/V, q = 1 - p) for
    g <= t, so answers at t number 1 - q^t and those with g >= gap q^(gap-1) - q^t."""
    q = 1.0 - 1.0 / vocab_size
    answered = sum(1.0 - q**t for t in range(seq_len))
    far = sum(q ** (gap - 1) - q**t for t in range(gap, seq_len))
    return far / answered
