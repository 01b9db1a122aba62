"""The catalogue of mutants: one realistic mistake each, as patches on the reference source.

A patch is ``(old, new)``: ``old`` must occur exactly once in ``reference_source()``. Names are
Python identifiers (``<exercise>_<mistake>``), so a mutant can be saved and graded as
``<name>.py``. Keep each mutant to the smallest change that reproduces the mistake, and say in the
description where the mistake comes from or what it breaks.
"""

from __future__ import annotations

from dataclasses import dataclass

Patch = tuple[str, str]

# Snippets of the reference that several mutants patch.
SCALED_LOGITS = "logits = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])"
ADD_BIAS = "logits = logits + bias.to(dtype=logits.dtype, device=logits.device)"
SOFTMAX = "weights = torch.softmax(logits, dim=-1)"
SIN_FREQUENCIES = "return base ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)"
SIN_ANGLES = "angles = torch.outer(torch.arange(seq_len, dtype=torch.float64), inverse_frequencies(d_model, base))"
SIN_STACK = "table = torch.stack([angles.sin(), angles.cos()], dim=-1)"
SIN_SIGNATURE = "def sinusoidal_encoding(seq_len: int, d_model: int, base: float = 10000.0)"
LEARNED_TABLE = "self.table = nn.Parameter(torch.randn(max_len, d_model) * 0.02)"
LEARNED_ADD = "return x + self.table[:seq_len]"
LEARNED_LENGTH_CHECK = """        require(
            seq_len <= self.max_len,
            f"sequence length {seq_len} is longer than max_len {self.max_len}: "
            f"a learned table has no rows past position {self.max_len - 1}",
        )
"""
ROPE_FREQUENCIES = "return (base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)).to(dtype)"
ROPE_DEFAULT_POSITIONS = "return torch.arange(seq_len, device=x.device)"
ROPE_ROTATION = "rotated_a, rotated_b = a * cos - b * sin, a * sin + b * cos"
ROPE_SIGNATURE = "def apply_rope(x: torch.Tensor, positions: torch.Tensor | None = None, base: float = 10000.0)"
ROPE_WORK_DTYPE = "work = torch.float64 if x.dtype == torch.float64 else torch.float32"
ROPE_POSITIONS = "pos = _positions_for(x, positions).to(torch.float64)"
ROPE_ANGLES = "angles = torch.outer(pos, inv_freq.to(device=x.device, dtype=torch.float64))"
ROPE_RETURN = "return out.to(x.dtype)"
ALIBI_GEOMETRIC = "return [2.0 ** (-8.0 * (h + 1) / n_heads) for h in range(n_heads)]"
ALIBI_EXTRA = "slopes += _power_of_two_slopes(2 * below)[0::2][: n_heads - below]"
ALIBI_SLOPES_RETURN = "return torch.tensor(slopes, dtype=torch.float32)"
ALIBI_BIAS = "bias = slopes[:, None, None] * offset"
ALIBI_MASK = 'return bias.masked_fill(offset > 0, float("-inf"))'
T5_PER_DIRECTION = "per_direction = num_buckets // 2 if bidirectional else num_buckets"
T5_MAX_EXACT = "max_exact = per_direction // 2"
T5_IF_BIDIRECTIONAL = "if bidirectional:"
T5_LATER_OFFSET = "offset = (relative_position > 0).long() * per_direction"
T5_CAUSAL_DISTANCE = "distance = (-relative_position).clamp(min=0)"
T5_LOG_SPACED = (
    "log_spaced = (max_exact + (log_ratio * (per_direction - max_exact)).long()).clamp(max=per_direction - 1)"
)
T5_BIAS_RELATIVE = "relative_position = keys[None, :] - queries[:, None]"
T5_BIAS_GATHER = "return table[buckets].permute(2, 0, 1)"
DECODE_STEP_POSITIONS = "step_positions = positions[:, step]"
DECODE_READ = 'return self.keys if self.mode == "rotated" else self.rotate(self.keys, self.positions)'
DECODE_STORE = 'stored = self.rotate(keys, positions) if self.mode == "rotated" else keys'
DECODE_KEEP_LAST = "start = max(self.keys.shape[-2] - window, 0)"
DECODE_CAUSAL = "allowed = offset >= 0"
DECODE_PREFILL_WINDOW = "allowed = allowed & (offset < window)"
DECODE_PREFILL_PADDING = "return (allowed[None] & real[:, None, :])[:, None]"
DECODE_STEP_PADDING = "store.values, store.real[:, None, None, :]))"
DECODE_QUERY = "query = rotate(q[..., step, :], step_positions)"


@dataclass(frozen=True)
class MutantSpec:
    name: str
    exercise: str
    description: str
    patches: tuple[Patch, ...]
    slow: bool = False  # takes seconds by design (a Python loop); the suite's speed tests target it


MUTANT_SPECS: tuple[MutantSpec, ...] = (
    # ---- attention
    MutantSpec(
        "attention_no_scale",
        "attention",
        "logits not divided by sqrt(D)",
        ((SCALED_LOGITS, "logits = q @ k.transpose(-2, -1)"),),
    ),
    MutantSpec(
        "attention_scale_by_d",
        "attention",
        "logits divided by D instead of sqrt(D)",
        ((SCALED_LOGITS, "logits = q @ k.transpose(-2, -1) / q.shape[-1]"),),
    ),
    MutantSpec(
        "attention_scale_by_value_dim",
        "attention",
        "scaled by sqrt of v's feature size Dv",
        ((SCALED_LOGITS, "logits = q @ k.transpose(-2, -1) / math.sqrt(v.shape[-1])"),),
    ),
    MutantSpec(
        "attention_softmax_over_queries",
        "attention",
        "softmax over the query axis (dim=-2)",
        ((SOFTMAX, "weights = torch.softmax(logits, dim=-2)"),),
    ),
    MutantSpec(
        "attention_bias_after_softmax",
        "attention",
        "bias added to the weights after the softmax",
        (
            (ADD_BIAS, "pass"),
            (SOFTMAX, SOFTMAX + "\n    if bias is not None:\n        weights = weights + bias.to(dtype=logits.dtype)"),
        ),
    ),
    MutantSpec(
        "attention_mask_with_zero",
        "attention",
        "-inf entries of the bias replaced by a 0 logit",
        (
            (
                ADD_BIAS,
                "logits = torch.where(bias == float('-inf'), torch.zeros_like(logits), "
                "logits + bias.to(dtype=logits.dtype))",
            ),
        ),
    ),
    MutantSpec(
        "attention_scales_q_in_place",
        "attention",
        "q divided by sqrt(D) in place (mutates the input)",
        ((SCALED_LOGITS, "q /= math.sqrt(q.shape[-1])\n    logits = q @ k.transpose(-2, -1)"),),
    ),
    MutantSpec(
        "attention_float64_scaled_in_place",
        "attention",
        "q scaled in a float64 work copy, which "
        "q.to(torch.float64) does not make of a float64 q: the caller's q changes (a float32 q is safe)",
        (
            (
                SCALED_LOGITS,
                "logits = q.to(torch.float64).div_(math.sqrt(q.shape[-1])).to(q.dtype) @ k.transpose(-2, -1)",
            ),
        ),
    ),
    MutantSpec(
        "attention_casts_to_float32",
        "attention",
        ".float() on the inputs: float64 comes back float32",
        ((SCALED_LOGITS, "q, k, v = q.float(), k.float(), v.float()\n    " + SCALED_LOGITS),),
    ),
    MutantSpec(
        "attention_always_causal",
        "attention",
        "a causal mask built in, even when no bias is given",
        (
            (
                SOFTMAX,
                "logits = logits.masked_fill(torch.ones(logits.shape[-2:], dtype=torch.bool,"
                " device=logits.device).triu(1), float('-inf'))\n    " + SOFTMAX,
            ),
        ),
    ),
    MutantSpec(
        "attention_naive_softmax",
        "attention",
        "exp / sum without subtracting the max: overflows",
        ((SOFTMAX, "weights = logits.exp() / logits.exp().sum(-1, keepdim=True)"),),
    ),
    # ---- sinusoidal
    MutantSpec(
        "sinusoidal_positions_from_one",
        "sinusoidal",
        "positions 1..T instead of 0..T-1",
        ((SIN_ANGLES, SIN_ANGLES.replace("torch.arange(seq_len,", "torch.arange(1, seq_len + 1,")),),
    ),
    MutantSpec(
        "sinusoidal_exponent_i_over_d",
        "sinusoidal",
        "frequency base^(-i/d) instead of base^(-2i/d)",
        ((SIN_FREQUENCIES, "return base ** (-torch.arange(0, d_model // 2, dtype=torch.float64) / d_model)"),),
    ),
    MutantSpec(
        "sinusoidal_tensor2tensor_schedule",
        "sinusoidal",
        "tensor2tensor's timescales: log-spaced with increment log(base) / (d/2 - 1)",
        (
            (
                SIN_FREQUENCIES,
                "return base ** (-torch.arange(0, d_model // 2, dtype=torch.float64) / max(d_model // 2 - 1, 1))",
            ),
        ),
    ),
    MutantSpec(
        "sinusoidal_sin_cos_swapped",
        "sinusoidal",
        "cos in the even columns, sin in the odd ones",
        ((SIN_STACK, "table = torch.stack([angles.cos(), angles.sin()], dim=-1)"),),
    ),
    MutantSpec(
        "sinusoidal_column_exponent",
        "sinusoidal",
        "exponent from the column index j: cos columns use (2i+1)/d",
        ((SIN_STACK, "table = torch.stack([angles.sin(), (angles * base ** (-1.0 / d_model)).cos()], dim=-1)"),),
    ),
    MutantSpec(
        "sinusoidal_default_base_1000",
        "sinusoidal",
        "default base 1000 instead of 10000",
        ((SIN_SIGNATURE, SIN_SIGNATURE.replace("10000.0", "1000.0")),),
    ),
    MutantSpec(
        "sinusoidal_ignores_base",
        "sinusoidal",
        "base hard-coded to 10000, the argument ignored",
        ((SIN_ANGLES, SIN_ANGLES.replace("inverse_frequencies(d_model, base)", "inverse_frequencies(d_model)")),),
    ),
    MutantSpec(
        "sinusoidal_float64_output",
        "sinusoidal",
        "returns the float64 table (no .float())",
        (("return table.flatten(-2).float()", "return table.flatten(-2)"),),
    ),
    MutantSpec(
        "sinusoidal_float16_angles",
        "sinusoidal",
        "angles computed in float16 (inf past 65504)",
        (
            (
                SIN_ANGLES,
                "angles = torch.outer(torch.arange(seq_len, dtype=torch.float64).half(), "
                "inverse_frequencies(d_model, base).half()).double()",
            ),
        ),
    ),
    MutantSpec(
        "sinusoidal_concatenated_cos_first",
        "sinusoidal",
        "concatenated layout with cos first: [cos | sin]",
        (
            (
                SIN_STACK + "  # (T, d/2, 2)\n    return table.flatten(-2).float()",
                "return torch.cat([angles.cos(), angles.sin()], dim=-1).float()",
            ),
        ),
    ),
    MutantSpec(
        "sinusoidal_returns_numpy",
        "sinusoidal",
        "the table returned as a numpy array (.numpy())",
        (("return table.flatten(-2).float()", "return table.flatten(-2).float().numpy()"),),
    ),
    MutantSpec(
        "sinusoidal_python_loop",
        "sinusoidal",
        "a Python loop over positions (far too slow)",
        (
            (
                SIN_ANGLES,
                "frequencies = inverse_frequencies(d_model, base)\n"
                "    angles = torch.zeros(seq_len, d_model // 2, dtype=torch.float64)\n"
                "    for position in range(seq_len):\n"
                "        angles[position] = position * frequencies",
            ),
        ),
        slow=True,
    ),
    # ---- learned
    MutantSpec(
        "learned_table_is_a_buffer",
        "learned",
        "table registered as a buffer: not trainable",
        ((LEARNED_TABLE, 'self.register_buffer("table", torch.randn(max_len, d_model) * 0.02)'),),
    ),
    MutantSpec(
        "learned_last_rows",
        "learned",
        "adds table[-T:] (the last rows) instead of table[:T]",
        ((LEARNED_ADD, "return x + self.table[-seq_len:]"),),
    ),
    MutantSpec(
        "learned_truncates_long_input",
        "learned",
        "silently cuts sequences longer than max_len",
        ((LEARNED_LENGTH_CHECK, "        x = x[:, : self.max_len]\n        seq_len = x.shape[1]\n"),),
    ),
    MutantSpec(
        "learned_no_length_check",
        "learned",
        "no check: an IndexError from the lookup, not ValueError",
        ((LEARNED_LENGTH_CHECK, ""), (LEARNED_ADD, "return x + self.table[torch.arange(seq_len, device=x.device)]")),
    ),
    MutantSpec(
        "learned_unchecked_embedding_lookup",
        "learned",
        "no check: F.embedding's IndexError on the CPU only (a device-side assert on a GPU, nothing on meta)",
        (
            (LEARNED_LENGTH_CHECK, ""),
            (LEARNED_ADD, "return x + nn.functional.embedding(torch.arange(seq_len, device=x.device), self.table)"),
        ),
    ),
    MutantSpec(
        "learned_index_error_without_numbers",
        "learned",
        "an explicit IndexError whose message names neither T nor max_len",
        (
            (
                LEARNED_LENGTH_CHECK,
                '        if seq_len > self.max_len:\n            raise IndexError("the sequence is too long")\n',
            ),
        ),
    ),
    MutantSpec(
        "learned_assert_length",
        "learned",
        "nanoGPT's assert: AssertionError, and gone under python -O",
        ((LEARNED_LENGTH_CHECK, '        assert seq_len <= self.max_len, f"{seq_len} > {self.max_len}"\n'),),
    ),
    MutantSpec(
        "learned_two_parameters",
        "learned",
        "an extra trainable scale next to the table",
        (
            (LEARNED_TABLE, LEARNED_TABLE + "\n        self.scale = nn.Parameter(torch.ones(()))"),
            (LEARNED_ADD, "return x + self.scale * self.table[:seq_len]"),
        ),
    ),
    MutantSpec(
        "learned_in_place_add",
        "learned",
        "x += table[:T] modifies the caller's tensor",
        ((LEARNED_ADD, "x += self.table[:seq_len]\n        return x"),),
    ),
    MutantSpec(
        "learned_sequence_first",
        "learned",
        "reads T from dim 0 ([T, B, D] habit): adds table[:B]",
        (("seq_len = x.shape[1]", "seq_len = x.shape[0]"),),
    ),
    MutantSpec(
        "learned_table_not_registered",
        "learned",
        "table kept as a plain tensor in a list: .to() misses it",
        (
            (LEARNED_TABLE, "self.rows = [torch.randn(max_len, d_model) * 0.02]"),
            (LEARNED_ADD, "return x + self.rows[0][:seq_len]"),
        ),
    ),
    # ---- rope
    MutantSpec(
        "rope_clockwise",
        "rope",
        "rotation by -angle (sign of sin flipped)",
        ((ROPE_ROTATION, "rotated_a, rotated_b = a * cos + b * sin, -a * sin + b * cos"),),
    ),
    MutantSpec(
        "rope_exponent_i_over_d",
        "rope",
        "theta_i = base^(-i/D) instead of base^(-2i/D)",
        (
            (
                ROPE_FREQUENCIES,
                "return (base ** (-torch.arange(0, head_dim // 2, dtype=torch.float64) / head_dim)).to(dtype)",
            ),
        ),
    ),
    MutantSpec(
        "rope_positions_from_one",
        "rope",
        "default positions 1..T instead of 0..T-1",
        ((ROPE_DEFAULT_POSITIONS, "return torch.arange(1, seq_len + 1, device=x.device)"),),
    ),
    MutantSpec(
        "rope_default_base_500000",
        "rope",
        "default base 500000 (Llama 3's) instead of 10000",
        ((ROPE_SIGNATURE, ROPE_SIGNATURE.replace("10000.0", "500000.0")),),
    ),
    MutantSpec(
        "rope_float16_angles",
        "rope",
        "positions and angles in the input's dtype (float16)",
        (
            (ROPE_POSITIONS, "pos = _positions_for(x, positions).to(x.dtype)"),
            (ROPE_ANGLES, "angles = torch.outer(pos, inv_freq.to(device=x.device, dtype=x.dtype))"),
        ),
    ),
    MutantSpec(
        "rope_float32_output",
        "rope",
        "everything in float32, returned without casting back",
        ((ROPE_WORK_DTYPE, "work = torch.float32"), (ROPE_RETURN, "return out")),
    ),
    MutantSpec(
        "rope_ignores_positions",
        "rope",
        "the positions argument is ignored (always 0..T-1)",
        ((ROPE_POSITIONS, "pos = _positions_for(x, None).to(torch.float64)"),),
    ),
    MutantSpec(
        "rope_same_angle_everywhere",
        "rope",
        "every pair rotated by the same angle (theta_0 = 1)",
        ((ROPE_ANGLES, "angles = torch.outer(pos, torch.ones(inv_freq.shape, dtype=torch.float64, device=x.device))"),),
    ),
    MutantSpec(
        "rope_flattens_with_view",
        "rope",
        ".view to flatten leading dims: fails on a transposed input",
        (
            ("xw = x.to(work)", "xw = x.to(work).view(-1, x.shape[-2], head_dim)  # (N, T, D)"),
            (ROPE_RETURN, "return out.view(x.shape).to(x.dtype)"),
        ),
    ),
    MutantSpec(
        "rope_4d_only",
        "rope",
        "assumes x is [B, H, T, D]: fails on other leading shapes",
        ((ROPE_POSITIONS, "batch, heads, seq_len, _ = x.shape\n    " + ROPE_POSITIONS),),
    ),
    # ---- alibi
    MutantSpec(
        "alibi_slopes_off_by_one",
        "alibi",
        "m_h = 2^(-8h/n) for h = 0..n-1: the first slope is 1",
        ((ALIBI_GEOMETRIC, "return [2.0 ** (-8.0 * h / n_heads) for h in range(n_heads)]"),),
    ),
    MutantSpec(
        "alibi_slopes_first_n_of_next_power",
        "alibi",
        "n not a power of two: first n slopes of 2c",
        ((ALIBI_EXTRA, "slopes = _power_of_two_slopes(2 * below)[:n_heads]"),),
    ),
    MutantSpec(
        "alibi_slopes_reversed",
        "alibi",
        "slopes in increasing order",
        ((ALIBI_SLOPES_RETURN, "return torch.tensor(slopes[::-1], dtype=torch.float32)"),),
    ),
    MutantSpec(
        "alibi_slopes_not_power_of_two_formula",
        "alibi",
        "2^(-8(h+1)/n) for every n, even 12",
        (("below = 2 ** math.floor(math.log2(n_heads))", "below = n_heads"),),
    ),
    MutantSpec(
        "alibi_positive_bias",
        "alibi",
        "bias +m(i - j): rewards distance instead of penalising it",
        ((ALIBI_BIAS, "bias = -slopes[:, None, None] * offset"),),
    ),
    MutantSpec(
        "alibi_no_causal_mask",
        "alibi",
        "symmetric -m|i - j| with no mask (bidirectional ALiBi)",
        ((ALIBI_BIAS, "bias = -slopes[:, None, None] * offset.abs()"), (ALIBI_MASK, "return bias")),
    ),
    MutantSpec(
        "alibi_mask_wrong_triangle",
        "alibi",
        "-inf below the diagonal instead of above",
        ((ALIBI_MASK, 'return bias.masked_fill(offset < 0, float("-inf"))'),),
    ),
    MutantSpec(
        "alibi_mask_not_low_enough",
        "alibi",
        "a finite future mask of -1e3: not -inf, and above the -1e4 that the spec accepts",
        ((ALIBI_MASK, "return bias.masked_fill(offset > 0, -1e3)"),),
    ),
    MutantSpec(
        "alibi_future_zero",
        "alibi",
        "the future gets bias 0 (masked_fill with 0): open, not masked",
        ((ALIBI_MASK, "return bias.masked_fill(offset > 0, 0.0)"),),
    ),
    MutantSpec(
        "alibi_no_mask",
        "alibi",
        "no mask: -m (i - j) continued past the diagonal (a reward for the future)",
        ((ALIBI_MASK, "return bias"),),
    ),
    MutantSpec(
        "alibi_python_loop",
        "alibi",
        "a double Python loop over query and key positions",
        (
            (
                ALIBI_BIAS,
                "bias = torch.full((slopes.shape[0], seq_len, seq_len), float('-inf'))\n"
                "    for i in range(seq_len):\n"
                "        for j in range(i + 1):\n"
                "            bias[:, i, j] = -slopes * (i - j)",
            ),
            (ALIBI_MASK, "return bias"),
        ),
        slow=True,
    ),
    # ---- t5
    MutantSpec(
        "t5_exact_off_by_one",
        "t5",
        "N/2 + 1 exact buckets (0 .. N/2 counted as the half): log range starts late",
        ((T5_MAX_EXACT, "max_exact = per_direction // 2 + 1"),),
    ),
    MutantSpec(
        "t5_sign_reversed",
        "t5",
        "r read as query - key: earlier keys take the upper half, a decoder the future",
        (
            (T5_LATER_OFFSET, "offset = (relative_position < 0).long() * per_direction"),
            (T5_CAUSAL_DISTANCE, "distance = relative_position.clamp(min=0)"),
        ),
    ),
    MutantSpec(
        "t5_no_clamp",
        "t5",
        "log-spaced bucket not clamped: distances past max_distance overflow the last bucket",
        ((T5_LOG_SPACED, "log_spaced = max_exact + (log_ratio * (per_direction - max_exact)).long()"),),
    ),
    MutantSpec(
        "t5_float_buckets",
        "t5",
        "torch.floor keeps float32: buckets come back float, unusable as indices",
        (
            (
                T5_LOG_SPACED,
                "log_spaced = (max_exact + torch.floor(log_ratio * (per_direction - max_exact)))"
                ".clamp(max=per_direction - 1)",
            ),
        ),
    ),
    MutantSpec(
        "t5_direction_flag_ignored",
        "t5",
        "bidirectional ignored: a decoder gets an encoder's sign split",
        ((T5_PER_DIRECTION, "per_direction = num_buckets // 2"), (T5_IF_BIDIRECTIONAL, "if True:")),
    ),
    MutantSpec(
        "t5_bias_query_minus_key",
        "t5",
        "the bias indexes buckets by i - j (query - key) instead of j - i",
        ((T5_BIAS_RELATIVE, "relative_position = queries[:, None] - keys[None, :]"),),
    ),
    MutantSpec(
        "t5_bias_python_loop",
        "t5",
        "the bias filled by a double Python loop, one bucket call per (i, j)",
        (
            (
                T5_BIAS_GATHER,
                "bias = table.new_empty(table.shape[1], query_len, key_len)\n"
                "    for i in range(query_len):\n"
                "        for j in range(key_len):\n"
                "            bucket = t5_relative_bucket(torch.tensor(j - i), bidirectional, "
                "table.shape[0], max_distance)\n"
                "            bias[:, i, j] = table[bucket]\n"
                "    return bias",
            ),
        ),
        slow=True,
    ),
    # ---- decode
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
)
