"""Positions in an inference engine: a tiny RoPE attention layer, decoded with a KV cache under each rule.

One head, float64, projections given as tensors: q, k, v ``[T, D]`` (raw, unrotated). The reference is
the full causal forward over the whole sequence; a cached decode processes one token per step and keeps
keys and values in a cache. Every scenario returns, per decode step, the largest difference between the
step's output and the reference row, for the rule an engine must follow and for the rule broken:

* ``cache_modes``    keys rotated before caching, or cached raw and rotated at read (both right), against
                     cached rotated keys rotated once more at read (twice in all);
* ``left_padding``   a left-padded batch: one frame for prefill and decode (from the attention
                     mask, cumsum - 1, or counting the padding throughout), against mask positions
                     in the prefill and position = cache length after it;
* ``rolling_buffer`` a sliding window kept in a ring buffer of W slots (Mistral): keys rotated at their
                     own position, against position = number of cached keys (capped at W);
* ``dynamic_ntk``    frequencies recomputed from the current length (Hugging Face's dynamic NTK): raw
                     keys rotated at read with today's frequencies (recommended by YaRN, Peng et al.
                     2023, section 3.3), against keys rotated once with the frequencies of their own
                     step (what Hugging Face's cache holds).

StreamingLLM (Xiao et al. 2023) is not a reproduction of the full forward, so ``streaming`` reports what
its rule protects instead: the largest query-key distance the layer sees, with positions re-indexed
inside the cache against positions kept from the original text.
"""

from __future__ import annotations

import torch

from poslab.encodings.rope import apply_rotary, rope_inverse_frequencies
from poslab.encodings.rope_scaling import rope_schedule

NEG_INF = float("-inf")


def projections(seq_len: int, head_dim: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(seq_len, head_dim, generator=generator, dtype=torch.float64) for _ in range(3))


def attend(query: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
    """Softmax attention of queries ``[Q, D]`` over keys ``[K, D]``; ``allowed`` ``[Q, K]`` bool."""
    scores = (query @ keys.T / query.shape[-1] ** 0.5).masked_fill(~allowed, NEG_INF)
    return torch.softmax(scores, -1) @ values


def full_forward(q, k, v, positions: torch.Tensor, freqs: torch.Tensor, window: int | None = None) -> torch.Tensor:
    """``[T, D]``: the causal forward of the whole sequence, optionally masked to the last ``window`` keys."""
    seq = torch.arange(len(q))
    allowed = seq[None, :] <= seq[:, None]
    if window is not None:
        allowed &= seq[None, :] > seq[:, None] - window
    return attend(apply_rotary(q, freqs, positions), apply_rotary(k, freqs, positions), v, allowed)


def _step_error(output: torch.Tensor, reference: torch.Tensor) -> float:
    return float((output - reference).abs().max())


def cache_modes(seq_len: int, head_dim: int = 8, base: float = 10_000.0, seed: int = 0) -> dict[str, list[float]]:
    """Per-step error of three caches against the full forward: rotated keys, raw keys, rotated twice."""
    q, k, v = projections(seq_len, head_dim, seed)
    freqs = rope_inverse_frequencies(head_dim, base, torch.float64)
    reference = full_forward(q, k, v, torch.arange(seq_len), freqs)
    errors: dict[str, list[float]] = {
        "rotate, then cache": [],
        "cache raw, rotate at read": [],
        "broken: rotated twice (once more at read)": [],
    }
    rotated, raw = k[:0], k[:0]
    for step in range(seq_len):
        position = torch.tensor([step])  # one unpadded sequence: here position = cache length
        rotated = torch.cat([rotated, apply_rotary(k[step : step + 1], freqs, position)])
        raw = torch.cat([raw, k[step : step + 1]])
        query = apply_rotary(q[step : step + 1], freqs, position)
        every = torch.ones(1, step + 1, dtype=torch.bool)
        at_read = apply_rotary(raw, freqs, torch.arange(step + 1))
        twice = apply_rotary(rotated, freqs, torch.arange(step + 1))
        for name, keys in zip(errors, (rotated, at_read, twice)):
            errors[name].append(_step_error(attend(query, keys, v[: step + 1], every)[0], reference[step]))
    return errors


def mask_positions(attention_mask: torch.Tensor) -> torch.Tensor:
    """Position ids from a ``[B, T]`` 0/1 mask: cumsum - 1 over real tokens; 0 on padding (never attended)."""
    return (attention_mask.cumsum(-1) - 1).clamp(min=0)


PADDING_RULES = (
    "next position from the attention mask",
    "broken: next position = cache length",
    "one frame counting the padding, prefill and decode",
)


def left_padding(
    prompt_lengths: tuple[int, ...], new_tokens: int, head_dim: int = 8, base: float = 10_000.0, seed: int = 0
) -> dict[str, list[float]]:
    """A left-padded batch: a prefill (step 0) of prompts padded to one width, then ``new_tokens`` decode steps.

    Each row is compared with its own sequence decoded alone. Two rules keep one frame: positions from
    the attention mask throughout, or slots counted from the first pad throughout (RoPE sees only
    offsets, so both are exact). The broken one mixes them: mask positions in the prefill, then the
    cache length, which counts the padding, for each new token.
    """
    width = max(prompt_lengths)
    freqs = rope_inverse_frequencies(head_dim, base, torch.float64)
    names = PADDING_RULES
    errors = {name: [0.0] * (new_tokens + 1) for name in names}
    for row, length in enumerate(prompt_lengths):
        total, pad = length + new_tokens, width - length
        q, k, v = projections(total, head_dim, seed + row)
        alone = full_forward(q, k, v, torch.arange(total), freqs)
        mask = torch.cat([torch.zeros(pad, dtype=torch.bool), torch.ones(total, dtype=torch.bool)])
        from_mask = mask_positions(mask[None, :width].long())[0]
        frames = {  # name -> (the prefill's positions, the first new token's position)
            names[0]: (from_mask, length),
            names[1]: (from_mask, width),
            names[2]: (torch.arange(width), width),
        }
        for name in names:
            prefill, first_new = frames[name]
            positions = torch.cat([prefill, torch.arange(new_tokens) + first_new])  # padding slots included
            padded = [torch.cat([torch.zeros(pad, head_dim, dtype=torch.float64), x]) for x in (q, k, v)]
            keys = apply_rotary(padded[1], freqs, positions)  # each key rotated once, as it enters the cache
            queries = apply_rotary(padded[0], freqs, positions)
            seen = torch.arange(len(positions))
            allowed = (seen[None, :] <= seen[:, None]) & mask[None, :]
            out = attend(queries[pad:], keys, padded[2], allowed[pad:])  # one row per real token
            prefill_error = _step_error(out[:length], alone[:length])
            errors[name][0] = max(errors[name][0], prefill_error)
            for step in range(new_tokens):
                errors[name][step + 1] = max(
                    errors[name][step + 1], _step_error(out[length + step], alone[length + step])
                )
    return errors


def rolling_buffer(
    seq_len: int, window: int, head_dim: int = 8, base: float = 10_000.0, seed: int = 0
) -> dict[str, list[float]]:
    """A ring buffer of ``window`` slots against the full forward masked to the last ``window`` keys."""
    q, k, v = projections(seq_len, head_dim, seed)
    freqs = rope_inverse_frequencies(head_dim, base, torch.float64)
    reference = full_forward(q, k, v, torch.arange(seq_len), freqs, window)
    names = ("position tracked apart from the buffer", "broken: position = number of cached keys")
    errors: dict[str, list[float]] = {name: [] for name in names}
    for name in names:
        keys = torch.zeros(window, head_dim, dtype=torch.float64)
        values = torch.zeros(window, head_dim, dtype=torch.float64)
        filled = torch.zeros(window, dtype=torch.bool)
        for step in range(seq_len):
            position = step if name == names[0] else min(step, window - 1)
            slot = step % window  # the oldest key is overwritten once the buffer is full
            keys[slot] = apply_rotary(k[step : step + 1], freqs, torch.tensor([position]))[0]
            values[slot], filled[slot] = v[step], True
            query = apply_rotary(q[step : step + 1], freqs, torch.tensor([position]))
            errors[name].append(_step_error(attend(query, keys, values, filled[None, :])[0], reference[step]))
    return errors


def dynamic_ntk(
    seq_len: int, original_len: int, factor: float = 2.0, head_dim: int = 8, base: float = 10_000.0, seed: int = 0
) -> dict[str, list[float]]:
    """Dynamic NTK with a cache: the reference re-runs the prefix with the frequencies of its length."""
    q, k, v = projections(seq_len, head_dim, seed)

    def freqs_at(length: int) -> torch.Tensor:
        return rope_schedule("dynamic", head_dim, base, factor, original_len, current_len=length).inv_freq.double()

    names = ("cache raw keys, rotate at read", "broken: keys rotated once, with their step's frequencies")
    errors: dict[str, list[float]] = {name: [] for name in names}
    rotated = k[:0]
    for step in range(seq_len):
        freqs = freqs_at(step + 1)  # the length the engine has reached
        positions = torch.arange(step + 1)
        reference = full_forward(q[: step + 1], k[: step + 1], v[: step + 1], positions, freqs)[step]
        query = apply_rotary(q[step : step + 1], freqs, torch.tensor([step]))
        every = torch.ones(1, step + 1, dtype=torch.bool)
        at_read = apply_rotary(k[: step + 1], freqs, positions)
        rotated = torch.cat([rotated, apply_rotary(k[step : step + 1], freqs, torch.tensor([step]))])
        for name, keys in zip(names, (at_read, rotated)):
            errors[name].append(_step_error(attend(query, keys, v[: step + 1], every)[0], reference))
    return errors


def streaming(seq_len: int, sinks: int, recent: int) -> dict[str, list[int]]:
    """Largest query-key distance per step, when the cache keeps ``sinks`` first and ``recent`` last tokens."""
    distances: dict[str, list[int]] = {
        "re-indexed inside the cache (StreamingLLM)": [],
        "broken: positions of the original text": [],
    }
    for step in range(seq_len):
        kept = sorted(set(range(min(sinks, step + 1))) | set(range(max(0, step + 1 - recent), step + 1)))
        distances["re-indexed inside the cache (StreamingLLM)"].append(len(kept) - 1)  # query at slot len - 1
        distances["broken: positions of the original text"].append(step - kept[0])
    return distances
