"""The buggy half of the corpus: each entry is a correct corpus file with exactly one realistic mistake.

A bug is written as edits to its base file (``correct/<base>.py``), so the one mistake is the whole
difference, and a base that changes under an edit fails loudly (each edit must match exactly once).
``python -m tests.corpus.bugs DIR`` writes them out as files, to grade with ``python -m grader grade``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

CORRECT = Path(__file__).parent / "correct"


@dataclass(frozen=True)
class Bug:
    name: str  # b<NN>_<exercise>_<what>
    base: str  # the correct file it is made from
    mistake: str
    should_fail: str  # the tests that should fail, and why no others
    edits: tuple[tuple[str, str], ...]  # (text in the base, what the mistake puts there)

    @property
    def exercise(self) -> str:
        return self.name.split("_")[1]

    def source(self) -> str:
        text = (CORRECT / f"{self.base}.py").read_text(encoding="utf-8").split("\n", 1)[1]
        for old, new in self.edits:
            if text.count(old) != 1:
                raise ValueError(f"{self.name}: the edit {old[:60]!r} matches {text.count(old)} places in {self.base}")
            text = text.replace(old, new)
        return f"# Bug: {self.mistake}. Base: correct/{self.base}.py. Should fail: {self.should_fail}.\n" + text


BUGS: tuple[Bug, ...] = (
    Bug('b01_attention_scale_by_d', 'c03_meta_llama_complex',
        'logits divided by D instead of sqrt(D)',
        'attention: values match the formula, values for several shapes',
        (('scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)', 'scores = q @ k.transpose(-2, -1) / d_k'),)),
    Bug('b02_attention_softmax_over_queries', 'c01_einsum_throughout',
        'softmax over the queries (dim=-2) instead of the keys',
        'attention: values, several shapes, large logits (rows sum), -inf bias, bias broadcasts',
        (('weights = scores.softmax(dim=-1)', 'weights = scores.softmax(dim=-2)'),)),
    Bug('b03_attention_scales_q_in_place', 'c04_block_rotation_matrix',
        "q scaled in place (mul_), modifying the caller's tensor",
        'attention: inputs untouched and views accepted',
        (('attn = q.mul(scale) @ k.transpose(-2, -1)', 'attn = q.mul_(scale) @ k.transpose(-2, -1)'),)),
    Bug('b04_sinusoidal_sin_cos_swapped', 'c03_meta_llama_complex',
        'sin and cos swapped (cos in the even columns)',
        'sinusoidal: first rows, values at many positions',
        (('pe[:, 0::2] = np.sin(angle)\n    pe[:, 1::2] = np.cos(angle)', 'pe[:, 0::2] = np.cos(angle)\n    pe[:, 1::2] = np.sin(angle)'),)),
    Bug('b05_sinusoidal_exponent_i_over_d', 'c12_fairseq_embedding_subclass',
        'frequency exponent i/d instead of 2i/d',
        'sinusoidal: first rows, values at many positions (base argument may pass: it only checks the base is used)',
        (('emb = math.log(base) * 2.0 / d_model', 'emb = math.log(base) / d_model'),)),
    Bug('b06_sinusoidal_positions_from_one', 'c08_neox_rotary_mpt_alibi',
        'positions start at 1 instead of 0',
        'sinusoidal: first rows, values at many positions',
        (('torch.einsum("i,j->ij", torch.arange(seq_len, dtype=torch.float64), inv_freq)', 'torch.einsum("i,j->ij", torch.arange(1, seq_len + 1, dtype=torch.float64), inv_freq)'),)),
    Bug('b07_sinusoidal_returns_numpy', 'c03_meta_llama_complex',
        'the table is returned as a numpy array, not a torch tensor',
        'sinusoidal: shape and dtype (the type test) only; the value tests could judge the converted values',
        (('return torch.from_numpy(pe).float()', 'return pe.astype(np.float32)'),)),
    Bug('b08_sinusoidal_float16_positions', 'c09_bloom_build_alibi',
        'positions built in float16 (overflow past 65504)',
        'sinusoidal: long sequence finite and distinct',
        (('pos = torch.arange(seq_len, dtype=torch.float32)[:, None]', 'pos = torch.arange(seq_len, dtype=torch.float16)[:, None]'),)),
    Bug('b09_learned_table_is_buffer', 'c01_einsum_throughout',
        'table registered as a buffer, so it never trains',
        'learned: one trainable table (only)',
        (('self.table = nn.Parameter(torch.randn(max_len, d_model) * 0.02)', 'self.register_buffer("table", torch.randn(max_len, d_model) * 0.02)'),)),
    Bug('b10_learned_positions_from_one', 'c09_bloom_build_alibi',
        'rows 1..T added instead of 0..T-1',
        'learned: forward adds the first rows, full length and single position (T = max_len indexes past the table)',
        (('pos = torch.arange(0, T, dtype=torch.long, device=x.device)', 'pos = torch.arange(1, T + 1, dtype=torch.long, device=x.device)'),)),
    Bug('b11_learned_adds_in_place', 'c04_block_rotation_matrix',
        "x += table[:T] modifies the caller's x",
        'learned: input untouched',
        (('return x + self.pos_embedding[:n].unsqueeze(0)', 'x += self.pos_embedding[:n].unsqueeze(0)\n        return x'),)),
    Bug('b12_learned_clamps_positions', 'c07_flatten_leading_dims',
        'too-long input: positions clamped to the last row instead of raising',
        'learned: too long raises, message names both numbers',
        (('        if seq > self.max_len:\n            raise ValueError(f"{seq} positions requested, only {self.max_len} learned (max_len)")\n', ''), ('ids = torch.arange(seq, device=x.device)', 'ids = torch.arange(seq, device=x.device).clamp(max=self.max_len - 1)'))),
    Bug('b13_rope_clockwise', 'c03_meta_llama_complex',
        'rotation clockwise (multiplies by the conjugate)',
        'rope: values small positions, values explicit positions and base',
        (('x_ * freqs_cis.to(cdtype)', 'x_ * freqs_cis.to(cdtype).conj()'),)),
    Bug('b14_rope_positions_ignored', 'c12_fairseq_embedding_subclass',
        'the positions argument is ignored (always 0..T-1)',
        'rope: position zero is identity (explicit zeros), scores depend only on offset, values explicit positions',
        (('    if positions is None:\n        positions = torch.arange(x.shape[-2], device=x.device)\n    inv_freq', '    positions = torch.arange(x.shape[-2], device=x.device)\n    inv_freq'),)),
    Bug('b15_rope_float16_angles', 'c12_fairseq_embedding_subclass',
        "cos/sin computed in x's dtype: float16 angles for a float16 x",
        'rope: half precision thousands',
        (('freqs = positions.double()[:, None] * inv_freq\n    compute = torch.float64 if x.dtype == torch.float64 else torch.float32', 'compute = x.dtype\n    freqs = positions.to(compute)[:, None] * inv_freq.to(compute)'),)),
    Bug('b16_rope_exponent_i_over_d', 'c14_torchtune_cache',
        'theta exponent i/D instead of 2i/D',
        'rope: values small positions, values explicit positions and base',
        (('theta = 1.0 / (base ** (torch.arange(0, dim, 2, device=device)[: dim // 2].double() / dim))', 'theta = 1.0 / (base ** (torch.arange(0, dim // 2, device=device).double() / dim))'),)),
    Bug('b17_alibi_slopes_reversed', 'c01_einsum_throughout',
        'slopes in increasing order (reversed)',
        "alibi: slopes for eight heads, other head counts (the bias tests judge the bias against the file's own slopes)",
        (('return torch.tensor(s, dtype=torch.float32)', 'return torch.tensor(s[::-1], dtype=torch.float32)'),)),
    Bug('b18_alibi_mask_wrong_triangle', 'c03_meta_llama_complex',
        'the -inf mask is on the lower triangle (the past) instead of the future',
        'alibi: causal mask, depends only on distance, bias uses the slopes, bias values other heads',
        (('future = torch.triu(torch.ones(seq_len, seq_len, dtype=torch.bool), diagonal=1)', 'future = torch.tril(torch.ones(seq_len, seq_len, dtype=torch.bool), diagonal=-1)'),)),
    Bug('b19_alibi_first_slope_one', 'c01_einsum_throughout',
        'exponent over h = 0..n-1, so the first slope is 1',
        "alibi: slopes for eight heads, other head counts (the bias tests use the file's own slopes)",
        (('return [2.0 ** (-8.0 * (h + 1) / n) for h in range(n)]', 'return [2.0 ** (-8.0 * h / n) for h in range(n)]'),)),
    Bug('b20_alibi_bias_positive', 'c01_einsum_throughout',
        'sign dropped: bias +m (i - j) rewards distant keys',
        'alibi: depends only on distance (penalise check), bias uses the slopes, bias values other heads',
        (('bias = -torch.einsum("h,ij->hij", alibi_slopes(n_heads), dist)', 'bias = torch.einsum("h,ij->hij", alibi_slopes(n_heads), dist)'),)),
    Bug('b21_alibi_next_power_of_two', 'c04_block_rotation_matrix',
        'non-power-of-two heads take the first n slopes of the next power of two',
        "alibi: slopes for other head counts (the bias tests use the file's own slopes)",
        (('    lower = 1 << (n_heads.bit_length() - 1)\n    out = pow2(lower)\n    if lower != n_heads:\n        out += pow2(2 * lower)[::2][: n_heads - lower]\n', '    upper = 1 << (n_heads - 1).bit_length()\n    out = pow2(upper)[:n_heads]\n'),)),
    Bug('b22_learned_reads_batch_axis', 'c14_torchtune_cache',
        'T read from axis 0 (sequence-first habit) on batch-first x',
        'learned: forward values, too long raises/message, breaks equivariance, meta device (all read T)',
        (('bsz, seq_len, _ = x.shape', 'seq_len, bsz, _ = x.shape'),)),
    Bug('b23_learned_no_length_check', 'c08_neox_rotary_mpt_alibi',
        "no explicit length check: relies on nn.Embedding's IndexError, which on a GPU is a device-side assert (and on meta no error at all)",
        'learned: too long raises value error, message names both numbers (must keep failing after the IndexError relaxation)',
        (('        if seq_length > self.max_len:\n            raise ValueError(f"seq_length {seq_length} > max_position_embeddings {self.max_len}")\n', ''), ('return x + self.position_embeddings(self.position_ids[:seq_length])', 'return x + self.position_embeddings(torch.arange(seq_length, device=x.device))'))),
    Bug('b24_alibi_no_future_mask', 'c14_torchtune_cache',
        'the causal mask is forgotten: -m |i - j| on both sides (bidirectional ALiBi)',
        'alibi: causal mask only (the entries above the diagonal are finite and above -1e4; below it the bias is right, and the value tests judge j <= i only). Must keep failing after the finite-mask relaxation',
        (('    causal = torch.full((seq_len, seq_len), float("-inf")).triu(1)\n    return -alibi_slopes(n_heads)[:, None, None] * distance + causal', '    return -alibi_slopes(n_heads)[:, None, None] * distance'),)),
    Bug('b25_decode_position_is_cache_length', 'c13_hf_llama_float32',
        "a decoded token's position is the number of tokens seen so far (HF's cache_position), not its position id",
        'decode: left padding, positions (given ids); the unpadded tests without given positions pass',
        (('        step_ids = position_ids[:, past:stop]\n',
          '        step_ids = position_ids[:, past:stop] if past == 0 else torch.full_like(position_ids[:, past:stop], past)\n'),)),
    Bug('b26_decode_rotates_twice', 'c14_torchtune_cache',
        'keys read from the cache are rotated again, also when they were cached rotated',
        'decode: prefill, window, positions (values); the raw-cache tests pass',
        (('        if cache == "raw":\n            keys = _tt_rope(', '        if cache in ("raw", "rotated"):\n            keys = _tt_rope('),)),
    Bug('b27_decode_buffer_one_too_big', 'c08_neox_rotary_mpt_alibi',
        'the rolling buffer holds W + 1 keys',
        'decode: shape (cached_keys), small window, window',
        (('    size = T if window is None else window\n', '    size = T if window is None else window + 1\n'),)),
    Bug('b28_decode_padding_attended', 'c02_hf_sdpa_bloom',
        'the attention mask is not applied to the keys: padding tokens get weight',
        'decode: left padding',
        (('        visible = (kv[None, :] <= slots[:, None]) & keep[:, None, None, :hi]\n',
          '        visible = (kv[None, :] <= slots[:, None]).expand(b, 1, hi - lo, hi)\n'),)),
    Bug('b29_decode_prefill_not_causal', 'c03_meta_llama_complex',
        'the prompt is masked for padding only, not causally',
        'decode: prefill, window, positions (the prompt outputs); the step tests judge the decoded tokens and pass',
        (('        hidden = (k_idx > q_idx) | cache_pad[:, None, None, :]\n',
          '        hidden = (k_idx > q_idx) & (end > prompt_len) | cache_pad[:, None, None, :]\n'),)),
    Bug('b30_decode_raw_rotated_by_slot', 'c08_neox_rotary_mpt_alibi',
        "raw keys rotated by their slot in the buffer (StreamingLLM's re-indexing) instead of their positions",
        'decode: raw cache, window, left padding (raw cases)',
        (('        keys = buf_k if cache == "rotated" else _neox_turn(buf_k, buf_pos, base, pairing)\n',
          '        keys = buf_k if cache == "rotated" else _neox_turn(buf_k, torch.arange(size).expand(B, size), base, '
          'pairing)\n'),)),
    Bug('b31_decode_buffer_not_unrolled', 'c08_neox_rotary_mpt_alibi',
        'cached_keys returned in slot order, not oldest first, once the rolling buffer has wrapped',
        'decode: window (cached keys)',
        (('buf_k[:, :, order][:, :, size - kept:]', 'buf_k[:, :, size - kept:]'),)),
    Bug('b32_decode_positions_count_padding', 'c14_torchtune_cache',
        'positions are slot indices: the attention mask is not counted (outputs unchanged, the rotated keys are not)',
        'decode: left padding (cached keys at their positions)',
        (('(is_real.long().cumsum(-1) - 1).clamp(min=0)', 'torch.arange(seq_len).expand(bsz, seq_len)'),)),
    Bug('b33_decode_prefill_ignores_window', 'c03_meta_llama_complex',
        'the window masks the decoded tokens only; the prefill attends to the whole prompt',
        'decode: small window, window',
        (('        if window is not None:\n            hidden = hidden | (k_idx <= q_idx - window)\n',
          '        if window is not None and end > prompt_len:\n            hidden = hidden | (k_idx <= q_idx - window)\n'),)),
    Bug('b34_decode_float32_output', 'c14_torchtune_cache',
        'the output buffer is allocated without a dtype: float32 whatever the inputs',
        'decode: shape and dtype (out dtype for float64 inputs); the float64 values are right to float32 accuracy',
        (('    out = torch.empty(bsz, n_heads, seq_len, head_dim, dtype=q.dtype, device=q.device)\n',
          '    out = torch.empty(bsz, n_heads, seq_len, head_dim, device=q.device)\n'),)),
)


def write_all(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"{bug.name}.py" for bug in BUGS]
    for bug, path in zip(BUGS, paths):
        path.write_text(bug.source(), encoding="utf-8")
    return paths


if __name__ == "__main__":
    print("\n".join(str(path) for path in write_all(Path(sys.argv[1]))))
