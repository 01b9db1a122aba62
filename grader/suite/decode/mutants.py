"""The decode exercise's known mistakes, as patches on the reference source (``grader.mutants``).

A patch is ``(old, new)``: ``old`` must occur exactly once in ``reference_source()``. Names are
``decode_<mistake>``; keep each to the smallest change that reproduces the mistake, and say in the
description where it comes from or what it breaks.
"""

from __future__ import annotations

from grader.mutants.spec import MutantSpec

# Snippets of the reference that several mutants patch.
DECODE_STEP_POSITIONS = "step_positions = positions[:, step]"
DECODE_READ = 'return self.keys if self.mode == "rotated" else self.rotate(self.keys, self.positions)'
DECODE_STORE = 'stored = self.rotate(keys, positions) if self.mode == "rotated" else keys'
DECODE_KEEP_LAST = "start = max(self.keys.shape[-2] - window, 0)"
DECODE_CAUSAL = "allowed = offset >= 0"
DECODE_PREFILL_WINDOW = "allowed = allowed & (offset < window)"
DECODE_PREFILL_PADDING = "return (allowed[None] & real[:, None, :])[:, None]"
DECODE_STEP_PADDING = "store.values, store.real[:, None, None, :]))"
DECODE_QUERY = "query = rotate(q[..., step, :], step_positions)"

MUTANTS: tuple[MutantSpec, ...] = (
    MutantSpec(
        "decode_position_is_cache_length",
        "decode",
        "a decoded token at position = the number of cached keys (HF's get_seq_length): counts padding, "
        "stops growing in a rolling buffer",
        ((DECODE_STEP_POSITIONS, "step_positions = torch.full_like(positions[:, step], store.keys.shape[-2])"),),
    ),
    MutantSpec(
        "decode_positions_count_padding",
        "decode",
        "positions from the slot index, ignoring the attention mask",
        (
            (
                "return (real.long().cumsum(dim=-1) - 1).clamp(min=0)",
                "return torch.arange(real.shape[-1], device=real.device).expand(real.shape)",
            ),
        ),
    ),
    MutantSpec(
        "decode_position_ids_ignored",
        "decode",
        "the position_ids argument is ignored",
        (
            (
                "    if position_ids is not None:\n        return position_ids",
                "    if False:\n        return position_ids",
            ),
        ),
    ),
    MutantSpec(
        "decode_rotates_twice",
        "decode",
        "rotated keys are rotated again when read",
        ((DECODE_READ, "return self.rotate(self.keys, self.positions)"),),
    ),
    MutantSpec(
        "decode_raw_never_rotated",
        "decode",
        "cache='raw' caches raw keys and reads them raw",
        ((DECODE_READ, "return self.keys"),),
    ),
    MutantSpec(
        "decode_raw_rotated_by_slot",
        "decode",
        "raw keys rotated by their slot in the cache (StreamingLLM's re-indexing), not by their positions",
        (
            (
                DECODE_READ,
                'return self.keys if self.mode == "rotated" else self.rotate(self.keys, '
                "torch.arange(self.keys.shape[-2], device=self.keys.device)"
                ".expand(self.positions.shape))",
            ),
        ),
    ),
    MutantSpec(
        "decode_cache_mode_ignored",
        "decode",
        "keys always cached rotated, whatever the cache argument says",
        ((DECODE_STORE, "stored = self.rotate(keys, positions)"), (DECODE_READ, "return self.keys")),
    ),
    MutantSpec(
        "decode_window_off_by_one",
        "decode",
        "the rolling buffer keeps W + 1 keys",
        ((DECODE_KEEP_LAST, "start = max(self.keys.shape[-2] - window - 1, 0)"),),
    ),
    MutantSpec(
        "decode_prefill_window_off_by_one",
        "decode",
        "the prefill's window mask lets t - s = W through",
        ((DECODE_PREFILL_WINDOW, "allowed = allowed & (offset <= window)"),),
    ),
    MutantSpec(
        "decode_prefill_ignores_window",
        "decode",
        "the prefill attends causally to the whole prompt",
        ((DECODE_PREFILL_WINDOW, "allowed = allowed"),),
    ),
    MutantSpec(
        "decode_prefill_not_causal",
        "decode",
        "the prefill has no causal mask (is_causal forgotten)",
        ((DECODE_CAUSAL, "allowed = offset > -offset.shape[0]"),),
    ),
    MutantSpec(
        "decode_padding_keys_attended",
        "decode",
        "the attention mask is not applied to the keys",
        (
            (DECODE_PREFILL_PADDING, "return allowed[None, None].expand(real.shape[0], 1, -1, -1)"),
            (DECODE_STEP_PADDING, "store.values, torch.ones_like(store.real)[:, None, None, :]))"),
        ),
    ),
    MutantSpec(
        "decode_query_not_rotated",
        "decode",
        "the decoded token's query is not rotated, only the keys",
        ((DECODE_QUERY, "query = q[..., step, :]"),),
    ),
    MutantSpec(
        "decode_prefill_keeps_w_minus_1",
        "decode",
        "the prefill keeps a long prompt's last W - 1 keys, "
        "making room for the next token (gpt-fast's roll): one key short when none is decoded",
        (("store.keep_last(window)\n\n    for t", "store.keep_last(window and window - 1)\n\n    for t"),),
    ),
    MutantSpec(
        "decode_window_in_positions",
        "decode",
        "a decoded token's window measured in positions, not tokens "
        "(llama.cpp's SWA test on p1 - p0): ids stepping by 2 or more let it see fewer than W keys",
        (
            (
                DECODE_STEP_PADDING,
                "store.values, (store.real & (step_positions - store.positions < "
                "(window or 1 << 62)))[:, None, None, :]))",
            ),
        ),
    ),
    MutantSpec(
        "decode_float64_query_rotated_in_place",
        "decode",
        "the prompt's rotated queries written into a "
        "float64 work copy, which q.to(torch.float64) does not make of a float64 q: the caller's q changes",
        (
            (
                "queries = rotate(q[..., prompt, :], positions[:, prompt])",
                "queries = q.to(torch.float64)[..., "
                "prompt, :].copy_(rotate(q[..., prompt, :], positions[:, prompt])).to(q.dtype)",
            ),
        ),
    ),
    MutantSpec(
        "decode_position_ids_filled_in_place",
        "decode",
        "the padding's position ids set to 1 in the caller's tensor (masked_fill_, as generate does on its own copy)",
        (
            (
                "return position_ids.to(device=real.device, dtype=torch.long)",
                "return position_ids.masked_fill_(~real, 1).to(device=real.device, dtype=torch.long)",
            ),
        ),
    ),
    MutantSpec(
        "decode_rotates_in_place",
        "decode",
        "the interleaved rotation written back into its input: the caller's q and k change",
        (
            (
                "        return torch.stack(turned, dim=-1).flatten(-2)",
                "        x[..., 0::2], x[..., 1::2] = turned\n        return x",
            ),
        ),
    ),
    MutantSpec(
        "decode_pairing_ignored",
        "decode",
        "every token rotated with the half pairing, whatever pairing says",
        (("return _turned(x, at, inv_freq, pairing)", 'return _turned(x, at, inv_freq, "half")'),),
    ),
    MutantSpec(
        "decode_outputs_in_float64",
        "decode",
        "out and cached_keys computed and returned in float64 for float32 inputs (the spec: q's dtype)",
        (
            (
                "return torch.cat(outputs, dim=-2), store.keys",
                "return torch.cat(outputs, dim=-2).double(), store.keys.double()",
            ),
        ),
    ),
    MutantSpec(
        "decode_head_dim_four_at_least",
        "decode",
        "refuses D = 2 (one feature pair): the spec allows any even D",
        (
            (
                "batch, _, length, head_dim = q.shape",
                'batch, _, length, head_dim = q.shape\n    require(head_dim >= 4, "head_dim must be at least 4")',
            ),
        ),
    ),
)
