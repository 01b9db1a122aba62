"""Known mistakes in decoding with a cache, as readings of the spec the oracle can compute.

``diagnosis`` names the first one a wrong output reproduces (for the real tokens); the variants are
built lazily, only for a submission that failed. ``tests/test_decode_exercise.py`` checks that each of
them is shown thousands of tolerances away from the truth by some case of the suite.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from grader.suite.decode.cases import DecodeInputs, expected_out, real_only, tolerance
from grader.suite.decode.oracle import decode_visibility
from grader.suite.expect import diagnose


def diagnosis(out: torch.Tensor, inputs: DecodeInputs) -> str:
    """' Your values match a known mistake: ...' for the real tokens, or ''."""
    wrong = {name: (lambda thunk=thunk: real_only(thunk(), inputs.real)) for name, thunk in mistakes(inputs).items()}
    return diagnose(real_only(out, inputs.real), wrong, tolerance(inputs))


def mistakes(inputs: DecodeInputs) -> dict[str, Callable[[], torch.Tensor]]:
    """Known wrong readings of the spec, as oracle outputs built only if needed."""
    case, real, positions = inputs.case, inputs.real, inputs.positions
    slots = torch.arange(case.length).expand(case.batch, case.length)
    padded, window, decoded = case.pads is not None and any(case.pads), case.window, slots >= case.prompt_len
    variants = {
        "the prompt is not masked causally: a prompt token sees the prompt tokens after it": lambda: expected_out(
            inputs,
            visible=decode_visibility(real, window)
            | ((slots[:, :, None] < case.prompt_len) & (slots[:, None, :] < case.prompt_len) & real[:, None, :]),
        ),
        "keys are rotated twice (before caching and again when read)": lambda: expected_out(
            inputs, key_positions=2 * positions
        ),
        "the decoded tokens' queries are not rotated": lambda: expected_out(
            inputs, query_positions=torch.where(decoded, 0, positions)
        ),
        "the rotation goes clockwise": lambda: expected_out(
            inputs, query_positions=-positions, key_positions=-positions
        ),
        "the other pairing is used": lambda: expected_out(
            inputs, pairing="half" if case.pairing == "interleaved" else "interleaved"
        ),
    }
    if case.cache == "raw":
        variants["the cached raw keys are never rotated"] = lambda: expected_out(
            inputs, key_positions=torch.zeros_like(positions)
        )
        first_slot = torch.where(slots >= case.prompt_len, (slots - (window or case.length) + 1).clamp(min=0), 0)
        variants["the cached raw keys are rotated by their slot in the cache, not by their positions"] = lambda: (
            expected_out(inputs, key_positions=(slots[:, None, :] - first_slot[:, :, None]).clamp(min=0))
        )
    if padded or window:
        held = slots.clamp(max=window) if window else slots
        variants[
            "a decoded token's position is the number of keys in the cache (that counts padding, and "
            "stops growing in a rolling buffer)"
        ] = lambda: expected_out(
            inputs,
            query_positions=torch.where(decoded, held, positions),
            key_positions=torch.where(decoded, held, positions),
        )
    if padded:
        variants["padding keys get weight: the attention mask is not applied"] = lambda: expected_out(
            inputs, visible=decode_visibility(torch.ones_like(real), window)
        )
        # Positions that count the padding shift a whole row alike: out cannot show it, the rotated keys do.
    if "position_ids" in inputs.kwargs:
        counted = (real.long().cumsum(-1) - 1).clamp(min=0)  # what the mask (or 0, 1, ...) gives without them
        variants["the position_ids argument is ignored"] = lambda: expected_out(
            inputs, query_positions=counted, key_positions=counted
        )
    if window:
        variants["the window keeps W + 1 tokens"] = lambda: expected_out(inputs, window=window + 1)
        variants["the prefill's window lets one more token through (t - s <= W)"] = lambda: expected_out(
            inputs,
            visible=torch.where(
                slots[:, :, None] < case.prompt_len,
                decode_visibility(real, window + 1),
                decode_visibility(real, window),
            ),
        )
        if window > 1:
            variants["the window keeps W - 1 tokens"] = lambda: expected_out(inputs, window=window - 1)
        if "position_ids" in inputs.kwargs:
            apart = positions[:, :, None] - positions[:, None, :]  # p_t - p_s
            variants["the window is measured in positions (p_t - p_s < W), not in tokens"] = lambda: expected_out(
                inputs, visible=decode_visibility(real) & (apart < window)
            )
        variants["the prefill ignores the window"] = lambda: expected_out(
            inputs,
            visible=torch.where(
                slots[:, :, None] < case.prompt_len, decode_visibility(real), decode_visibility(real, window)
            ),
        )
    return variants
