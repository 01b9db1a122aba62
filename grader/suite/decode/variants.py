"""Correct ``decode`` as published inference code writes it (see ``grader.variants``).

Four caches: Hugging Face's ``DynamicCache`` grown with ``torch.cat`` (position ids from the mask's
cumsum as ``generate`` builds them, SDPA with a boolean mask), a preallocated static cache written with
``index_copy_`` (gpt-fast, torchtune), Mistral's rolling buffer of W slots written at ``t % W`` and
unrolled at the end, and vLLM's paged cache (blocks of 4 slots in a shuffled block table, gathered at
read). And rewrites of the reference's parts: RoPE as complex multiplication (Meta's LLaMA, either
pairing), Hugging Face's eager attention (float32 softmax over a ``finfo.min`` mask), and a
logsumexp softmax.
"""

from __future__ import annotations

from grader.variants import transform

# Shared by the four caches: which tokens are real, their positions, a RoPE in one of two styles.
PREAMBLE = """
    batch, heads, length, dim = q.shape
    real = torch.ones(batch, length, dtype=torch.bool, device=q.device)
    if attention_mask is not None:
        real[:, :prompt_len] = attention_mask.to(q.device).bool()
    if position_ids is None:
        position_ids = (real.long().cumsum(-1) - 1).masked_fill(~real, 1)
    steps = [(0, prompt_len)] + [(t, t + 1) for t in range(prompt_len, length)]
"""

HF_DYNAMIC_CACHE = (
    """
def decode(q, k, v, prompt_len, *, cache="rotated", window=None, attention_mask=None, position_ids=None,
           pairing="half", base=10000.0):"""
    + PREAMBLE
    + """
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64, device=q.device).float() / dim))

    def rotate(x, pos):
        freqs = pos.to(x.device)[:, None, :, None].float() * inv_freq
        if pairing == "half":
            emb = torch.cat((freqs, freqs), dim=-1)
            turned = torch.cat((-x[..., dim // 2:], x[..., : dim // 2]), dim=-1)
        else:
            emb = freqs.repeat_interleave(2, dim=-1)
            turned = torch.stack((-x[..., 1::2], x[..., 0::2]), dim=-1).flatten(-2)
        return x * emb.cos().to(x.dtype) + turned * emb.sin().to(x.dtype)

    keys = values = key_positions = key_real = None
    outputs = []
    for start, stop in steps:
        pos = position_ids[:, start:stop]
        new = k[:, :, start:stop]
        parts = ((rotate(new, pos) if cache == "rotated" else new, -2), (v[:, :, start:stop], -2), (pos, -1),
                 (real[:, start:stop], -1))
        grown = [part if old is None else torch.cat([old, part], dim=axis)
                 for (part, axis), old in zip(parts, (keys, values, key_positions, key_real))]
        keys, values, key_positions, key_real = grown
        read = keys if cache == "rotated" else rotate(keys, key_positions)
        query_tokens = torch.arange(start, stop, device=q.device)[:, None]
        key_tokens = torch.arange(stop - keys.shape[-2], stop, device=q.device)[None, :]
        allowed = key_tokens <= query_tokens
        if window is not None:
            allowed = allowed & (query_tokens - key_tokens < window)
        mask = allowed[None, None] & key_real[:, None, None, :]
        outputs.append(torch.nn.functional.scaled_dot_product_attention(rotate(q[:, :, start:stop], pos), read,
                                                                        values, attn_mask=mask))
        if window is not None and keys.shape[-2] > window:
            keys, values = keys[..., -window:, :], values[..., -window:, :]
            key_positions, key_real = key_positions[:, -window:], key_real[:, -window:]
    return torch.cat(outputs, dim=-2), keys
"""
)

STATIC_CACHE = (
    """
def decode(q, k, v, prompt_len, *, cache="rotated", window=None, attention_mask=None, position_ids=None,
           pairing="half", base=10000.0):"""
    + PREAMBLE
    + """
    theta = torch.pow(torch.tensor(float(base)), -torch.arange(0, dim, 2, dtype=torch.float32) / dim).to(q.device)

    def rotate(x, pos):
        angles = pos.to(torch.float32)[:, None, :, None] * theta
        cos, sin = angles.cos(), angles.sin()
        a, b = (x.float()[..., 0::2], x.float()[..., 1::2]) if pairing == "interleaved" else x.float().chunk(2, -1)
        first, second = a * cos - b * sin, b * cos + a * sin
        both = torch.stack((first, second), -1).flatten(-2) if pairing == "interleaved" else torch.cat((first, second), -1)
        return both.to(x.dtype)

    k_cache = torch.zeros(batch, heads, length, dim, dtype=q.dtype, device=q.device)
    v_cache = torch.zeros_like(k_cache)
    slots = torch.arange(length, device=q.device)
    outputs = []
    for start, stop in steps:
        input_pos = slots[start:stop]
        new = k[:, :, start:stop]
        k_cache.index_copy_(2, input_pos, rotate(new, position_ids[:, start:stop]) if cache == "rotated" else new)
        v_cache.index_copy_(2, input_pos, v[:, :, start:stop])
        read = k_cache if cache == "rotated" else rotate(k_cache, position_ids)
        allowed = slots[None, :] <= input_pos[:, None]
        if window is not None:
            allowed = allowed & (input_pos[:, None] - slots[None, :] < window)
        query = rotate(q[:, :, start:stop], position_ids[:, start:stop])
        scores = (query @ read.transpose(-1, -2)) / math.sqrt(dim)
        scores = scores.masked_fill(~(allowed[None, None] & real[:, None, None, :]), float("-inf"))
        weights = torch.softmax(scores.float(), dim=-1).nan_to_num(0.0).to(q.dtype)
        outputs.append(weights @ v_cache)
    kept = length if window is None else min(window, length)
    return torch.cat(outputs, dim=-2), k_cache[:, :, length - kept:]
"""
)

ROLLING_BUFFER = (
    """
def decode(q, k, v, prompt_len, *, cache="rotated", window=None, attention_mask=None, position_ids=None,
           pairing="half", base=10000.0):"""
    + PREAMBLE
    + """
    def rotate(x, pos):
        return _turned(x, pos, rope_inverse_frequencies(dim, base, torch.float64).to(x.device), pairing)

    size = length if window is None else window
    k_buf = torch.zeros(batch, heads, size, dim, dtype=q.dtype, device=q.device)
    v_buf = torch.zeros_like(k_buf)
    token_of = torch.full((size,), -1, dtype=torch.long, device=q.device)  # which token each slot holds
    pos_buf = torch.zeros(batch, size, dtype=torch.long, device=q.device)
    real_buf = torch.zeros(batch, size, dtype=torch.bool, device=q.device)
    outputs = []
    for start, stop in steps:
        tokens = torch.arange(start, stop, device=q.device)
        pos = position_ids[:, start:stop].long()
        if start == 0:  # the prefill attends over the whole prompt, masked to the window
            offset = tokens[:, None] - tokens[None, :]
            allowed = (offset >= 0) & (offset < (window or length))
            scores = rotate(q[:, :, :stop], pos) @ rotate(k[:, :, :stop], pos).transpose(-1, -2) / math.sqrt(dim)
            scores = scores.masked_fill(~(allowed[None, None] & real[:, None, None, :stop]), float("-inf"))
            outputs.append(torch.softmax(scores, dim=-1).nan_to_num(0.0) @ v[:, :, :stop])
        kept = tokens[-size:]
        slot = kept % size
        new = k[:, :, kept]
        k_buf[:, :, slot] = rotate(new, position_ids[:, kept]) if cache == "rotated" else new
        v_buf[:, :, slot] = v[:, :, kept]
        token_of[slot], pos_buf[:, slot], real_buf[:, slot] = kept, position_ids[:, kept].long(), real[:, kept]
        if start > 0:
            read = k_buf if cache == "rotated" else rotate(k_buf, pos_buf)
            scores = rotate(q[:, :, start:stop], pos) @ read.transpose(-1, -2) / math.sqrt(dim)
            seen = (token_of >= 0)[None] & real_buf
            outputs.append(torch.softmax(scores.masked_fill(~seen[:, None, None, :], float("-inf")), dim=-1) @ v_buf)
    order = torch.argsort(token_of)  # unroll: oldest first
    return torch.cat(outputs, dim=-2), k_buf[:, :, order[(token_of[order] >= 0)]]
"""
)

PAGED = (
    """
def decode(q, k, v, prompt_len, *, cache="rotated", window=None, attention_mask=None, position_ids=None,
           pairing="half", base=10000.0):"""
    + PREAMBLE
    + """
    block = 4
    blocks = (length + block - 1) // block
    table = torch.arange(blocks - 1, -1, -1, device=q.device)  # a block table that is not in token order
    slot_of = table[torch.arange(length, device=q.device) // block] * block + torch.arange(length, device=q.device) % block
    key_cache = torch.zeros(batch, heads, blocks * block, dim, dtype=q.dtype, device=q.device)
    value_cache = torch.zeros_like(key_cache)
    inv_freq = rope_inverse_frequencies(dim, base, torch.float64).to(q.device)
    outputs = []
    for start, stop in steps:
        pos = position_ids[:, start:stop]
        new = k[:, :, start:stop]
        key_cache[:, :, slot_of[start:stop]] = _turned(new, pos, inv_freq, pairing) if cache == "rotated" else new
        value_cache[:, :, slot_of[start:stop]] = v[:, :, start:stop]
        first = 0 if window is None or start == 0 else max(0, stop - window)
        read = slot_of[first:stop]
        keys = key_cache[:, :, read]
        if cache == "raw":
            keys = _turned(keys, position_ids[:, first:stop], inv_freq, pairing)
        query_tokens = torch.arange(start, stop, device=q.device)[:, None]
        key_tokens = torch.arange(first, stop, device=q.device)[None, :]
        allowed = (key_tokens <= query_tokens) & (query_tokens - key_tokens < (window or length))
        visible = allowed[None, None] & real[:, None, None, first:stop]
        outputs.append(_attend(_turned(q[:, :, start:stop], pos, inv_freq, pairing), keys, value_cache[:, :, read],
                               visible))
    kept = length if window is None else min(window, length)
    return torch.cat(outputs, dim=-2), key_cache[:, :, slot_of[length - kept:]]
"""
)

COMPLEX_ROPE = '''
def _turned(x, positions, inv_freq, pairing):
    """Meta's LLaMA: each pair a complex number times e^(i p theta), for either pairing."""
    angles = positions.to(torch.float64)[:, None, :, None] * inv_freq
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    rotation = torch.polar(torch.ones_like(angles), angles).to(torch.complex128 if work == torch.float64 else torch.complex64)
    if pairing == "interleaved":
        pairs = torch.view_as_complex(x.to(work).reshape(*x.shape[:-1], -1, 2).contiguous())
        return torch.view_as_real(pairs * rotation).flatten(-2).to(x.dtype)
    half = x.shape[-1] // 2
    turned = torch.complex(x[..., :half].to(work), x[..., half:].to(work)) * rotation
    return torch.cat((turned.real, turned.imag), dim=-1).to(x.dtype)
'''

HF_EAGER = '''
def _attend(queries, keys, values, visible):
    """Hugging Face's eager attention: scores plus a finfo.min mask, softmax in float32, cast back."""
    scores = torch.matmul(queries, keys.transpose(2, 3)) / math.sqrt(queries.shape[-1])
    mask = torch.zeros(visible.shape, dtype=scores.dtype, device=scores.device)
    scores = scores + mask.masked_fill(~visible, torch.finfo(scores.dtype).min)
    weights = torch.nn.functional.softmax(scores, dim=-1, dtype=torch.float32).to(queries.dtype)
    weights = weights * visible.any(dim=-1, keepdim=True)
    return torch.matmul(weights, values)
'''

LOGSUMEXP = '''
def _attend(queries, keys, values, visible):
    """The softmax as exp(s - logsumexp(s)), the keys summed last: another order of the same sums."""
    scores = (queries.unsqueeze(-2) * keys.unsqueeze(-3)).sum(-1) * queries.shape[-1] ** -0.5
    scores = scores.masked_fill(~visible, float("-inf"))
    weights = torch.exp(scores - torch.logsumexp(scores, dim=-1, keepdim=True)).nan_to_num(0.0)
    return torch.einsum("bhqk,bhkd->bhqd", weights, values)
'''

TRANSFORMS = [
    transform(
        "HF DynamicCache",
        "decode",
        "Hugging Face: a DynamicCache grown with torch.cat, generate's position ids, "
        "rotate_half in float32, SDPA with a boolean mask",
        decode=HF_DYNAMIC_CACHE,
    ),
    transform(
        "static cache",
        "decode",
        "gpt-fast / torchtune: a preallocated cache written with index_copy_, a mask over every slot, float32 softmax",
        decode=STATIC_CACHE,
    ),
    transform(
        "rolling buffer",
        "decode",
        "Mistral: W slots written at t % W, unrolled oldest first at the end",
        decode=ROLLING_BUFFER,
    ),
    transform(
        "paged cache",
        "decode",
        "vLLM: blocks of 4 slots in a block table not in token order, gathered at read",
        decode=PAGED,
    ),
    transform(
        "complex RoPE", "decode", "Meta's LLaMA: feature pairs as complex numbers, either pairing", _turned=COMPLEX_ROPE
    ),
    transform("HF eager attention", "decode", "Hugging Face: a finfo.min mask and a float32 softmax", _attend=HF_EAGER),
    transform(
        "logsumexp attention",
        "decode",
        "exp(s - logsumexp(s)), scores as a broadcast product summed last",
        _attend=LOGSUMEXP,
    ),
]
