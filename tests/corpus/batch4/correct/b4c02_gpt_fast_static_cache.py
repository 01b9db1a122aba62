# gpt-fast style: a preallocated static KVCache written with index_copy_ at input_pos, freqs_cis as real (cos, sin) pairs [B, T, D/2, 2], SDPA with a boolean mask over the whole buffer; with a window a static sliding buffer of W slots that rolls left by one before each write once full (Transformers' StaticSlidingWindowLayer)
from __future__ import annotations

import torch
import torch.nn.functional as F


class _KVCache(torch.nn.Module):
    def __init__(self, batch, heads, max_cache_len, head_dim, dtype, device):
        super().__init__()
        self.max_cache_len = max_cache_len
        self.register_buffer("k_cache", torch.zeros(batch, heads, max_cache_len, head_dim, dtype=dtype, device=device))
        self.register_buffer("v_cache", torch.zeros(batch, heads, max_cache_len, head_dim, dtype=dtype, device=device))
        # per slot: the token index it holds (-1: empty) and that token's RoPE position
        self.register_buffer("slot_token", torch.full((max_cache_len,), -1, dtype=torch.long, device=device))
        self.register_buffer("slot_pos", torch.zeros(batch, max_cache_len, dtype=torch.long, device=device))
        self.seen = 0

    def update(self, input_pos, k_val, v_val, pos_val):
        """Writes the new entries; returns (keys, values, token index, position) to attend to."""
        n = input_pos.shape[0]
        if self.seen + n <= self.max_cache_len:
            slots = torch.arange(self.seen, self.seen + n, device=input_pos.device)
        elif n == 1:  # full sliding buffer: drop the oldest slot
            for name in ("k_cache", "v_cache", "slot_token", "slot_pos"):
                rolled = getattr(self, name).roll(-1, dims=-1 if name.startswith("slot") else 2)
                getattr(self, name).copy_(rolled)
            slots = torch.tensor([self.max_cache_len - 1], device=input_pos.device)
        else:  # a prompt longer than the window attends to itself and keeps its last W entries
            keep = slice(n - self.max_cache_len, n)
            self.update(input_pos[keep], k_val[:, :, keep], v_val[:, :, keep], pos_val[:, keep])
            return k_val, v_val, input_pos, pos_val
        self.k_cache.index_copy_(2, slots, k_val)
        self.v_cache.index_copy_(2, slots, v_val)
        self.slot_token.index_copy_(0, slots, input_pos)
        self.slot_pos.index_copy_(1, slots, pos_val)
        self.seen += n
        return self.k_cache, self.v_cache, self.slot_token, self.slot_pos


def _freqs_cis(positions, n_elem, base, dtype):
    """[B, T, n_elem/2, 2]: cos and sin of position * theta_i."""
    freqs = 1.0 / (base ** (torch.arange(0, n_elem, 2, device=positions.device)[: n_elem // 2].to(dtype) / n_elem))
    angles = positions.to(dtype)[..., None] * freqs
    cis = torch.polar(torch.ones_like(angles), angles)
    return torch.view_as_real(cis)


def _apply_rotary_emb(x, freqs_cis, pairing):
    """x [B, H, T, D]; freqs_cis [B, T, D/2, 2]."""
    if pairing == "interleaved":
        xshaped = x.reshape(*x.shape[:-1], -1, 2)
    else:
        xshaped = x.reshape(*x.shape[:-1], 2, -1).transpose(-1, -2)
    freqs_cis = freqs_cis[:, None]
    x_out = torch.stack(
        [
            xshaped[..., 0] * freqs_cis[..., 0] - xshaped[..., 1] * freqs_cis[..., 1],
            xshaped[..., 1] * freqs_cis[..., 0] + xshaped[..., 0] * freqs_cis[..., 1],
        ],
        -1,
    )
    if pairing == "half":
        x_out = x_out.transpose(-1, -2)
    return x_out.flatten(-2).type_as(x)


def decode(q, k, v, prompt_len, *, cache="rotated", window=None, attention_mask=None,
           position_ids=None, pairing="half", base=10000.0):
    B, H, T, D = q.shape
    device = q.device
    real = torch.ones(B, T, dtype=torch.bool, device=device)
    if attention_mask is not None:
        real[:, :prompt_len] = attention_mask.to(device) != 0
    if position_ids is None:
        position_ids = torch.clamp(real.long().cumsum(dim=1) - 1, min=0)
    position_ids = position_ids.to(device=device, dtype=torch.long)
    freqs_cis = _freqs_cis(position_ids, D, base, q.dtype)

    max_cache_len = T if window is None else min(window, T)
    kv_cache = _KVCache(B, H, max_cache_len, D, q.dtype, device)
    outputs = []
    for start, end in [(0, prompt_len)] + [(t, t + 1) for t in range(prompt_len, T)]:
        input_pos = torch.arange(start, end, device=device)
        step_freqs = freqs_cis[:, start:end]
        xq = _apply_rotary_emb(q[:, :, start:end], step_freqs, pairing)
        xk = k[:, :, start:end]
        if cache == "rotated":
            xk = _apply_rotary_emb(xk, step_freqs, pairing)
        keys, values, key_token, key_pos = kv_cache.update(input_pos, xk, v[:, :, start:end], position_ids[:, start:end])
        if cache == "raw":
            keys = _apply_rotary_emb(keys, _freqs_cis(key_pos, D, base, q.dtype), pairing)
        visible = (key_token[None, :] >= 0) & (key_token[None, :] <= input_pos[:, None])
        if window is not None:
            visible = visible & (key_token[None, :] > input_pos[:, None] - window)
        key_real = real[:, key_token.clamp(min=0)]
        attn_mask = visible[None, None] & key_real[:, None, None, :]
        outputs.append(F.scaled_dot_product_attention(xq, keys, values, attn_mask=attn_mask))

    # the rolls keep the slots oldest first, so the buffer is the answer as it stands
    return torch.cat(outputs, dim=2), kv_cache.k_cache
