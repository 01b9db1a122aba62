# vLLM style: every row of the batch is a sequence of its real tokens only, in a shared pool of fixed-size KV blocks; block tables, a slot mapping for the writes (reshape_and_cache), a per-sequence reference paged attention that gathers the context through the block table, blocks that fall wholly outside the sliding window freed; RoPE as _apply_rotary_emb with is_neox_style
from __future__ import annotations

import torch

BLOCK_SIZE = 4


def _apply_rotary_emb(x, cos, sin, is_neox_style):
    """x [T, H, D]; cos, sin [T, D/2]."""
    cos, sin = cos[:, None, :], sin[:, None, :]
    if is_neox_style:
        x1, x2 = torch.chunk(x, 2, dim=-1)
    else:
        x1, x2 = x[..., ::2], x[..., 1::2]
    o1 = x1 * cos - x2 * sin
    o2 = x2 * cos + x1 * sin
    if is_neox_style:
        return torch.cat((o1, o2), dim=-1)
    return torch.stack((o1, o2), dim=-1).flatten(-2)


class _RotaryEmbedding:
    def __init__(self, head_size, base, is_neox_style, dtype):
        self.is_neox_style = is_neox_style
        self.dtype = dtype
        self.inv_freq = 1.0 / (base ** (torch.arange(0, head_size, 2, dtype=torch.float64) / head_size))

    def cos_sin(self, positions):
        freqs = positions.to(torch.float64)[:, None] * self.inv_freq.to(positions.device)
        return freqs.cos().to(self.dtype), freqs.sin().to(self.dtype)

    def __call__(self, positions, x):
        return _apply_rotary_emb(x, *self.cos_sin(positions), self.is_neox_style)


class _BlockPool:
    """key/value cache [num_blocks, BLOCK_SIZE, H, D] with a free list; one position per slot for raw keys."""

    def __init__(self, num_blocks, heads, head_size, dtype, device):
        shape = (num_blocks * BLOCK_SIZE, heads, head_size)
        self.key_cache = torch.zeros(shape, dtype=dtype, device=device)
        self.value_cache = torch.zeros(shape, dtype=dtype, device=device)
        self.position_cache = torch.zeros(num_blocks * BLOCK_SIZE, dtype=torch.long, device=device)
        self.free_blocks = list(range(num_blocks))

    def allocate(self):
        return self.free_blocks.pop(0)

    def free(self, block):
        self.free_blocks.append(block)

    def reshape_and_cache(self, key, value, positions, slot_mapping):
        self.key_cache[slot_mapping] = key
        self.value_cache[slot_mapping] = value
        self.position_cache[slot_mapping] = positions


class _Sequence:
    def __init__(self, token_ids, positions):
        self.token_ids = token_ids  # indices into the batch's T axis: this row's real tokens
        self.positions = positions
        self.block_table: list[int | None] = []
        self.num_computed = 0

    def slot_mapping(self, pool, start, end):
        while len(self.block_table) * BLOCK_SIZE < end:
            self.block_table.append(pool.allocate())
        return torch.tensor([self.block_table[i // BLOCK_SIZE] * BLOCK_SIZE + i % BLOCK_SIZE for i in range(start, end)],
                            dtype=torch.long, device=self.positions.device)

    def free_outside_window(self, pool, window):
        first_needed = self.num_computed - window  # the next token sees from here on
        for b in range(len(self.block_table)):
            if self.block_table[b] is not None and (b + 1) * BLOCK_SIZE <= first_needed:
                pool.free(self.block_table[b])
                self.block_table[b] = None


def _gather(pool, seq, rope, cache, start, end):
    """Keys (rotated as they are read, in the raw mode) and values of tokens start..end-1 of a sequence, [n, H, D]."""
    slots = torch.tensor([seq.block_table[i // BLOCK_SIZE] * BLOCK_SIZE + i % BLOCK_SIZE for i in range(start, end)],
                         dtype=torch.long, device=pool.key_cache.device)
    keys = pool.key_cache[slots]
    if cache == "raw":
        keys = rope(pool.position_cache[slots], keys)
    return keys, pool.value_cache[slots]


def _ref_attention(query, key, value, scale, allowed):
    """query [q, H, D], key/value [k, H, D], allowed [q, k]."""
    scores = torch.einsum("qhd,khd->hqk", query, key) * scale
    scores = scores.masked_fill(~allowed, float("-inf"))
    return torch.einsum("hqk,khd->qhd", torch.softmax(scores, dim=-1), value)


def decode(q, k, v, prompt_len, *, cache="rotated", window=None, attention_mask=None,
           position_ids=None, pairing="half", base=10000.0):
    B, H, T, D = q.shape
    device = q.device
    scale = D ** -0.5
    num_padding = [0] * B if attention_mask is None else [int(n) for n in (attention_mask == 0).sum(dim=-1).tolist()]
    rope = _RotaryEmbedding(D, base, pairing == "half", q.dtype)
    pool = _BlockPool(B * (T // BLOCK_SIZE + 2), H, D, q.dtype, device)
    seqs = []
    for b in range(B):
        token_ids = torch.arange(num_padding[b], T, device=device)
        if position_ids is not None:
            positions = position_ids[b, num_padding[b]:].to(device).long()
        else:
            positions = torch.arange(T - num_padding[b], device=device)
        seqs.append(_Sequence(token_ids, positions))

    out = torch.zeros_like(q)
    # one prefill step for every sequence, then one token per sequence per step
    for step_start, step_end in [(0, prompt_len)] + [(t, t + 1) for t in range(prompt_len, T)]:
        for b, seq in enumerate(seqs):
            start, end = max(step_start - num_padding[b], 0), step_end - num_padding[b]
            rows = seq.token_ids[start:end]
            query = rope(seq.positions[start:end], q[b, :, rows].transpose(0, 1))
            key = k[b, :, rows].transpose(0, 1)
            if cache == "rotated":
                key = rope(seq.positions[start:end], key)
            pool.reshape_and_cache(key, v[b, :, rows].transpose(0, 1), seq.positions[start:end],
                                   seq.slot_mapping(pool, start, end))
            seq.num_computed = end
            context_start = 0 if window is None else max(0, start - window + 1)
            keys, values = _gather(pool, seq, rope, cache, context_start, end)
            qi = torch.arange(start, end, device=device)[:, None]
            ki = torch.arange(context_start, end, device=device)[None, :]
            allowed = ki <= qi
            if window is not None:
                allowed = allowed & (ki > qi - window)
            out[b, :, rows] = _ref_attention(query, keys, values, scale, allowed).transpose(0, 1)
            if window is not None:
                seq.free_outside_window(pool, window)

    S = T if window is None else min(window, T)
    cached_keys = torch.zeros(B, H, S, D, dtype=q.dtype, device=device)
    for b, seq in enumerate(seqs):
        n = min(S, seq.num_computed)
        start = seq.num_computed - n
        slots = seq.slot_mapping(pool, start, seq.num_computed)
        cached_keys[b, :, S - n:] = pool.key_cache[slots].transpose(0, 1)
    return out, cached_keys
