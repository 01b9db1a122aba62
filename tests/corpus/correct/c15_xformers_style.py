# Styles: x-transformers style: rearrange-free ellipsis einsum attention with a max-subtracted logits (stable by hand); RoPE with freqs repeated per pair ('... (d r)') and rotate_every_two via unbind; sinusoidal computed with float32 and inv_freq buffer-free; ALiBi with slopes * -(i - j) and masked_fill via torch.ones().triu_(1).bool(); position_ids buffer with bare nn.Parameter.
import math

import torch
from torch import einsum, nn


def attention(q, k, v, bias=None):
    sim = einsum("... i d, ... j d -> ... i j", q, k) * (q.shape[-1] ** -0.5)
    if bias is not None:
        sim = sim + bias
    sim = sim - sim.amax(dim=-1, keepdim=True).detach()
    attn = sim.softmax(dim=-1)
    return einsum("... i j, ... j d -> ... i d", attn, v), attn


def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    inv_freq = 1.0 / (base ** (torch.arange(0, d_model, 2).float() / d_model))
    t = torch.arange(seq_len).type_as(inv_freq)
    sinusoid_inp = einsum("i , j -> i j", t, inv_freq)
    return torch.stack((sinusoid_inp.sin(), sinusoid_inp.cos()), dim=-1).flatten(-2)


class LearnedPositionalEmbedding(nn.Module):
    def __init__(self, max_len, d_model):
        super().__init__()
        self.max_seq_len = max_len
        self.emb = nn.Parameter(torch.randn(max_len, d_model) * 0.02)
        self.register_buffer("pos", torch.arange(max_len), persistent=False)

    def forward(self, x):
        seq_len = x.shape[1]
        assert_msg = f"you are passing in a sequence length of {seq_len} but your max_seq_len is {self.max_seq_len}"
        if seq_len > self.max_seq_len:
            raise ValueError(assert_msg)
        return x + self.emb[self.pos[:seq_len]]


def rotate_every_two(x):
    x = x.unflatten(-1, (-1, 2))
    x1, x2 = x.unbind(dim=-1)
    return torch.stack((-x2, x1), dim=-1).flatten(-2)


def apply_rope(x, positions=None, base=10000.0):
    d = x.shape[-1]
    t = torch.arange(x.shape[-2], device=x.device) if positions is None else positions
    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, device=x.device).double() / d))
    freqs = einsum("i , j -> i j", t.double(), inv_freq)
    freqs = freqs.repeat_interleave(2, dim=-1)  # '... d -> ... (d r)', r = 2
    dt = torch.float64 if x.dtype == torch.float64 else torch.float32
    out = x.to(dt) * freqs.cos().to(dt) + rotate_every_two(x.to(dt)) * freqs.sin().to(dt)
    return out.to(x.dtype)


def alibi_slopes(n_heads):
    def get_slopes_power_of_2(n):
        start = 2 ** (-2 ** -(math.log2(n) - 3))
        ratio = start
        return [start * ratio ** i for i in range(n)]
    if math.log2(n_heads).is_integer():
        return torch.tensor(get_slopes_power_of_2(n_heads), dtype=torch.float32)
    closest_power_of_2 = 2 ** math.floor(math.log2(n_heads))
    slopes = (get_slopes_power_of_2(closest_power_of_2)
              + get_slopes_power_of_2(2 * closest_power_of_2)[0::2][: n_heads - closest_power_of_2])
    return torch.tensor(slopes, dtype=torch.float32)


def alibi_bias(n_heads, seq_len):
    i_arange = torch.arange(seq_len)
    j_arange = torch.arange(seq_len)
    bias = -torch.abs(j_arange[None, :] - i_arange[:, None]).float()
    bias = bias[None] * alibi_slopes(n_heads)[:, None, None]
    mask = torch.ones(seq_len, seq_len).triu_(1).bool()
    return bias.masked_fill(mask, float("-inf"))
