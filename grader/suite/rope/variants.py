"""The rope exercise's correct variants: rewrites of its reference the way published code writes them."""

from __future__ import annotations

from grader.variants import transform

HF_ROTATE_HALF = """
def apply_rope(x, positions=None, base=10000.0):
    dim = x.shape[-1]
    positions = torch.arange(x.shape[-2], device=x.device) if positions is None else positions
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64, device=x.device).float() / dim))
    freqs = positions.to(x.device).float()[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos().to(x.dtype), emb.sin().to(x.dtype)
    x1, x2 = x[..., : dim // 2], x[..., dim // 2:]
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin
"""

LLAMA_COMPLEX = """
def apply_rope(x, positions=None, base=10000.0):
    dim = x.shape[-1]
    freqs = 1.0 / (base ** (torch.arange(0, dim, 2, device=x.device)[: (dim // 2)].float() / dim))
    t = torch.arange(x.shape[-2], device=x.device) if positions is None else positions.to(x.device)
    freqs_cis = torch.polar(torch.ones(len(t), dim // 2, device=x.device), torch.outer(t.float(), freqs))
    x_ = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    return torch.view_as_real(x_ * freqs_cis).flatten(-2).type_as(x)
"""

GEMMA_HALVES_COMPLEX = """
def apply_rope(x, positions=None, base=10000.0):
    dim = x.shape[-1]
    freqs = 1.0 / (base ** (torch.arange(0, dim, 2, device=x.device)[: (dim // 2)].float() / dim))
    t = torch.arange(x.shape[-2], device=x.device) if positions is None else positions.to(x.device)
    freqs_cis = torch.polar(torch.ones(len(t), dim // 2, device=x.device), torch.outer(t.float(), freqs))
    x_ = torch.view_as_complex(torch.stack(torch.chunk(x.float(), 2, dim=-1), dim=-1))
    out = torch.view_as_real(x_ * freqs_cis)
    return torch.cat([out[..., 0], out[..., 1]], dim=-1).type_as(x)
"""

FLOAT64_ROTATION = """
def apply_rope(x, positions=None, base=10000.0):
    dim = x.shape[-1]
    p = (torch.arange(x.shape[-2], device=x.device) if positions is None else positions.to(x.device)).double()
    angles = p[:, None] * base ** (-torch.arange(0, dim, 2, dtype=torch.float64, device=x.device) / dim)
    a, b = x.double()[..., 0::2], x.double()[..., 1::2]
    out = torch.stack((a * angles.cos() - b * angles.sin(), a * angles.sin() + b * angles.cos()), dim=-1)
    return out.flatten(-2).to(x.dtype)
"""

BLOCK_MATRIX = """
def apply_rope(x, positions=None, base=10000.0):
    dim = x.shape[-1]
    p = (torch.arange(x.shape[-2], device=x.device) if positions is None else positions.to(x.device)).float()
    angles = p[:, None] * torch.exp(torch.arange(0, dim, 2, device=x.device).float() * (-math.log(base) / dim))
    cos, sin = angles.cos(), angles.sin()
    rotation = torch.stack([torch.stack([cos, -sin], -1), torch.stack([sin, cos], -1)], -2)  # (T, D/2, 2, 2)
    pairs = x.float().unflatten(-1, (dim // 2, 2))
    return torch.einsum("tfij,...tfj->...tfi", rotation, pairs).flatten(-2).to(x.dtype)
"""

CACHED_TABLE = """
def apply_rope(x, positions=None, base=10000.0):
    dim, seq_len = x.shape[-1], x.shape[-2]
    longest = seq_len if positions is None else int(positions.max()) + 1
    positions = torch.arange(seq_len, device=x.device) if positions is None else positions.long().to(x.device)
    theta = 1.0 / (base ** (torch.arange(0, dim, 2, device=x.device).float() / dim))
    idx_theta = torch.outer(torch.arange(longest, device=x.device).float(), theta)
    cache = torch.stack([idx_theta.cos(), idx_theta.sin()], dim=-1)[positions]  # (T, D/2, 2)
    xs = x.float().reshape(*x.shape[:-1], -1, 2)
    out = torch.stack([xs[..., 0] * cache[..., 0] - xs[..., 1] * cache[..., 1],
                       xs[..., 1] * cache[..., 0] + xs[..., 0] * cache[..., 1]], -1)
    return out.flatten(-2).type_as(x)
"""

X_TRANSFORMERS = """
def apply_rope(x, positions=None, base=10000.0):
    dim = x.shape[-1]
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, device=x.device).float() / dim))
    t = (torch.arange(x.shape[-2], device=x.device) if positions is None else positions.to(x.device)).type_as(inv_freq)
    freqs = torch.einsum("i , j -> i j", t, inv_freq)
    freqs = torch.cat((freqs, freqs), dim=-1)
    x1, x2 = x.float().chunk(2, dim=-1)
    rotated = torch.cat((-x2, x1), dim=-1)
    return (x.float() * freqs.cos() + rotated * freqs.sin()).type(x.dtype)
"""

CHUNKED = """
def apply_rope(x, positions=None, base=10000.0):
    dim = x.shape[-1]
    t = torch.arange(x.shape[-2], device=x.device) if positions is None else positions.to(x.device)
    exponents = -torch.arange(0, dim, 2, dtype=torch.float32, device=x.device) / dim
    freqs = torch.outer(t.to(torch.float32), torch.pow(base, exponents))
    cos, sin = freqs.cos(), freqs.sin()
    x1, x2 = torch.chunk(x.float(), 2, dim=-1)
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1).to(x.dtype)
"""

TRANSFORMS = [
    transform(
        "rotate_half",
        "rope",
        "Hugging Face LLaMA: half pairing, float32 angles, cos/sin in x's dtype",
        apply_rope=HF_ROTATE_HALF,
    ),
    transform(
        "LLaMA complex",
        "rope",
        "Meta's LLaMA: interleaved pairs as complex numbers, float32 inside",
        apply_rope=LLAMA_COMPLEX,
    ),
    transform(
        "Gemma complex halves", "rope", "Gemma: half pairing as complex numbers", apply_rope=GEMMA_HALVES_COMPLEX
    ),
    transform("float64 rotation", "rope", "float64 inside for every dtype, cast back", apply_rope=FLOAT64_ROTATION),
    transform(
        "block rotation",
        "rope",
        "a [T, D/2, 2, 2] rotation matrix and einsum, exp/log frequencies",
        apply_rope=BLOCK_MATRIX,
    ),
    transform(
        "cached table",
        "rope",
        "labml / torchtune: a cos/sin cache up to the largest position, indexed",
        apply_rope=CACHED_TABLE,
    ),
    transform(
        "x-transformers rotary",
        "rope",
        "x-transformers: einsum angles, cat(freqs, freqs), rotate_half in float32",
        apply_rope=X_TRANSFORMERS,
    ),
    transform("chunked halves", "rope", "vLLM-style chunked halves, torch.pow frequencies", apply_rope=CHUNKED),
]
