"""Decode sources for tests/test_suite_scores.py, kept apart to keep that module short.

``TUTORIAL_DECODE`` completes its tutorial-style submission (it uses that file's ``_rotate_half``); it was
written for these tests, not derived from the reference. ``UNSEEN_DECODE_MISTAKE`` is a mistake outside
the mutant catalogue, run in the reference's namespace (``rope_inverse_frequencies``, ``_turned``).
"""

TUTORIAL_DECODE = """

def _rope_rows(x, positions, base, pairing):
    # x [B, H, N, D] turned by positions [B, N]: float32 cos/sin as Hugging Face computes them.
    dim = x.shape[-1]
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, device=x.device).float() / dim))
    freqs = positions.float()[..., None] * inv_freq
    if pairing == "half":
        emb = torch.cat([freqs, freqs], dim=-1)[:, None]
        return x * emb.cos().to(x.dtype) + _rotate_half(x) * emb.sin().to(x.dtype)
    emb = freqs.repeat_interleave(2, dim=-1)[:, None]
    swapped = torch.stack([-x[..., 1::2], x[..., 0::2]], dim=-1).flatten(-2)
    return x * emb.cos().to(x.dtype) + swapped * emb.sin().to(x.dtype)


def decode(q, k, v, prompt_len, *, cache="rotated", window=None, attention_mask=None,
           position_ids=None, pairing="half", base=10000.0):
    # The prompt as one span, then one span per token; SDPA with a boolean mask; a cache grown with cat.
    batch, _, length, _ = q.shape
    real = torch.ones(batch, length, dtype=torch.bool, device=q.device)
    if attention_mask is not None:
        real[:, :prompt_len] = attention_mask.bool()
    if position_ids is None:
        position_ids = real.long().cumsum(-1) - 1
    keys = values = key_pos = key_real = None
    outs = []
    for start, stop in [(0, prompt_len)] + [(t, t + 1) for t in range(prompt_len, length)]:
        pos = position_ids[:, start:stop]
        new_k = _rope_rows(k[:, :, start:stop], pos, base, pairing) if cache == "rotated" else k[:, :, start:stop]
        grow = lambda old, new, dim: new if old is None else torch.cat([old, new], dim=dim)
        keys, values = grow(keys, new_k, 2), grow(values, v[:, :, start:stop], 2)
        key_pos, key_real = grow(key_pos, pos, 1), grow(key_real, real[:, start:stop], 1)
        read = keys if cache == "rotated" else _rope_rows(keys, key_pos, base, pairing)
        q_idx = torch.arange(start, stop, device=q.device)[:, None]
        k_idx = torch.arange(stop - keys.shape[2], stop, device=q.device)[None, :]
        allowed = (k_idx <= q_idx) & key_real[:, None, None, :]
        if window is not None:
            allowed = allowed & (k_idx > q_idx - window)
        query = _rope_rows(q[:, :, start:stop], pos, base, pairing)
        outs.append(torch.nn.functional.scaled_dot_product_attention(query, read, values, attn_mask=allowed))
        if window is not None:  # a rolling buffer: what no later token sees is dropped
            keys, values = keys[:, :, -window:], values[:, :, -window:]
            key_pos, key_real = key_pos[:, -window:], key_real[:, -window:]
    return torch.cat(outs, dim=2), keys

"""

UNSEEN_DECODE_MISTAKE = """
def decode(q, k, v, prompt_len, *, cache="rotated", window=None, attention_mask=None,
           position_ids=None, pairing="half", base=10000.0):
    # Rotates the values as well as the queries and keys (RoPE belongs on q and k only).
    length = q.shape[-2]
    real = torch.ones(q.shape[0], length, dtype=torch.bool)
    if attention_mask is not None:
        real[:, :prompt_len] = attention_mask.bool()
    positions = (real.long().cumsum(-1) - 1).clamp(min=0) if position_ids is None else position_ids
    inv_freq = rope_inverse_frequencies(q.shape[-1], base, torch.float64)
    turn = lambda x: _turned(x, positions, inv_freq, pairing)
    slots = torch.arange(length)
    seen = (slots[None, :] <= slots[:, None]) & real[:, None, None, :]
    if window is not None:
        seen = seen & (slots[None, :] > slots[:, None] - window)
    scores = (turn(q) @ turn(k).transpose(-2, -1) / math.sqrt(q.shape[-1])).masked_fill(~seen, float("-inf"))
    out = torch.softmax(scores, dim=-1).nan_to_num() @ turn(v)
    kept = slice(length - (length if window is None else min(window, length)), None)
    return out, (turn(k) if cache == "rotated" else k)[..., kept, :]
"""
