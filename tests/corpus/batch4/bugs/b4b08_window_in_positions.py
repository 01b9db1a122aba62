# decode bug (base b4c08_llamacpp_kv_cells): the sliding window is measured in positions (llama.cpp's SWA test on p1 - p0) instead of tokens, so with position_ids that step by more than 1 a token sees fewer than W keys
from __future__ import annotations

import torch


class _KVCells:
    def __init__(self, n_cells, heads, head_dim, dtype, device):
        self.k = torch.zeros(n_cells, heads, head_dim, dtype=dtype, device=device)
        self.v = torch.zeros(n_cells, heads, head_dim, dtype=dtype, device=device)
        self.seq = torch.full((n_cells,), -1, dtype=torch.long, device=device)  # -1: a free cell
        self.pos = torch.zeros(n_cells, dtype=torch.long, device=device)
        self.token = torch.zeros(n_cells, dtype=torch.long, device=device)

    def find_slot(self, n_tokens):
        free = torch.nonzero(self.seq < 0).flatten()
        return free[:n_tokens]

    def apply_ubatch(self, cells, k, v, seq, pos, token):
        self.k[cells], self.v[cells] = k, v
        self.seq[cells], self.pos[cells], self.token[cells] = seq, pos, token

    def prune_swa(self, seq_id, last_token, n_swa):
        """Frees the cells of seq_id that no later token of it can see."""
        gone = (self.seq == seq_id) & (self.token <= last_token - n_swa)
        self.seq[gone] = -1


def _rope_tables(max_pos, n_dims, freq_base, dtype, device):
    """cos and sin [max_pos + 1, n_dims / 2], angles in float64."""
    theta_scale = freq_base ** (-2.0 / n_dims)
    theta = theta_scale ** torch.arange(n_dims // 2, dtype=torch.float64, device=device)
    angles = torch.arange(max_pos + 1, dtype=torch.float64, device=device)[:, None] * theta
    return angles.cos().to(dtype), angles.sin().to(dtype)


def _ggml_rope(x, pos, tables, mode):
    """x [n, H, D] at positions pos [n]; mode 'normal' (adjacent pairs) or 'neox' (halves)."""
    cos, sin = tables[0][pos][:, None, :], tables[1][pos][:, None, :]
    if mode == "normal":
        x0, x1 = x[..., 0::2], x[..., 1::2]
        return torch.stack([x0 * cos - x1 * sin, x0 * sin + x1 * cos], dim=-1).flatten(-2)
    half = x.shape[-1] // 2
    x0, x1 = x[..., :half], x[..., half:]
    return torch.cat([x0 * cos - x1 * sin, x0 * sin + x1 * cos], dim=-1)


def _soft_max_ext(kq, kq_mask, scale):
    """softmax(kq * scale + mask) along the cells."""
    return torch.softmax(kq * scale + kq_mask, dim=-1)


def decode(q, k, v, prompt_len, *, cache="rotated", window=None, attention_mask=None,
           position_ids=None, pairing="half", base=10000.0):
    B, H, T, D = q.shape
    device = q.device
    mode = "normal" if pairing == "interleaved" else "neox"
    real = torch.ones(B, T, dtype=torch.bool, device=device)
    if attention_mask is not None:
        real[:, :prompt_len] = attention_mask.to(device) != 0
    if position_ids is None:
        position_ids = torch.where(real, real.long().cumsum(-1) - 1, 0)
    position_ids = position_ids.to(device).long()
    tables = _rope_tables(int(position_ids.max()), D, base, q.dtype, device)
    # token-major, as llama.cpp lays out a batch: [B, T, H, D]
    q_t, k_t, v_t = (x.transpose(1, 2) for x in (q, k, v))

    kv = _KVCells(B * T, H, D, q.dtype, device)
    out = torch.zeros(B, T, H, D, dtype=q.dtype, device=device)
    for lo, hi in [(0, prompt_len)] + [(t, t + 1) for t in range(prompt_len, T)]:
        # the ubatch: every real token of every sequence in this step
        seq_ids, tokens = torch.nonzero(real[:, lo:hi], as_tuple=True)
        tokens = tokens + lo
        pos = position_ids[seq_ids, tokens]
        Q = _ggml_rope(q_t[seq_ids, tokens], pos, tables, mode)
        K = k_t[seq_ids, tokens]
        if cache == "rotated":
            K = _ggml_rope(K, pos, tables, mode)
        kv.apply_ubatch(kv.find_slot(len(tokens)), K, v_t[seq_ids, tokens], seq_ids, pos, tokens)

        keys = kv.k if cache == "rotated" else _ggml_rope(kv.k, kv.pos, tables, mode)
        visible = (kv.seq[None, :] == seq_ids[:, None]) & (kv.token[None, :] <= tokens[:, None])
        if window is not None:
            visible &= kv.pos[None, :] > pos[:, None] - window
        kq_mask = torch.zeros(visible.shape, dtype=q.dtype, device=device).masked_fill(~visible, float("-inf"))
        kq = torch.einsum("thd,chd->htc", Q, keys)
        weights = _soft_max_ext(kq, kq_mask, D ** -0.5)
        out[seq_ids, tokens] = torch.einsum("htc,chd->thd", weights, kv.v)
        if window is not None:
            for s in range(B):
                kv.prune_swa(s, hi - 1, window)

    S = T if window is None else min(window, T)
    cached_keys = torch.zeros(B, S, H, D, dtype=q.dtype, device=device)
    for s in range(B):
        cells = torch.nonzero(kv.seq == s).flatten()
        cells = cells[torch.argsort(kv.token[cells])][-S:]
        cached_keys[s, S - len(cells):] = kv.k[cells]
    return out.transpose(1, 2), cached_keys.transpose(1, 2)
