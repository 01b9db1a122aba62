"""The attention exercise's correct variants: rewrites of its reference the way published code writes them."""

from __future__ import annotations

from grader.variants import transform

NANOGPT = """
def attention(q, k, v, bias=None):
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
    if bias is not None:
        att = att + bias
    att = torch.nn.functional.softmax(att, dim=-1)
    return att @ v, att
"""

EINSUM = """
def attention(q, k, v, bias=None):
    scores = torch.einsum("...qd,...kd->...qk", q, k) / math.sqrt(q.shape[-1])
    if bias is not None:
        scores = scores + bias
    weights = scores.softmax(dim=-1)
    return torch.einsum("...qk,...kv->...qv", weights, v), weights
"""

SCALE_Q_FIRST = """
def attention(q, k, v, bias=None):
    q = q * q.shape[-1] ** -0.5
    scores = torch.matmul(q, k.mT)
    if bias is not None:
        scores = scores + bias
    weights = torch.softmax(scores, dim=-1)
    return torch.matmul(weights, v), weights
"""

MANUAL_SOFTMAX = """
def attention(q, k, v, bias=None):
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.size(-1))
    if bias is not None:
        scores = scores + bias
    scores = scores - scores.max(dim=-1, keepdim=True).values.detach()
    weights = scores.exp()
    weights = weights / weights.sum(dim=-1, keepdim=True)
    return weights @ v, weights
"""

LOGSUMEXP = """
def attention(q, k, v, bias=None):
    scores = q @ k.transpose(-2, -1) / torch.tensor(q.shape[-1], dtype=q.dtype).sqrt()
    if bias is not None:
        scores = scores + bias
    weights = torch.exp(scores - torch.logsumexp(scores, dim=-1, keepdim=True))
    return weights @ v, weights
"""

FLOAT64_INSIDE = """
def attention(q, k, v, bias=None):
    scores = q.double() @ k.double().transpose(-2, -1) / math.sqrt(q.shape[-1])
    if bias is not None:
        scores = scores + bias.double()
    weights = torch.softmax(scores, dim=-1)
    return (weights @ v.double()).to(q.dtype), weights.to(q.dtype)
"""

T5_FLOAT32_SOFTMAX = """
def attention(q, k, v, bias=None):
    scores = torch.matmul(q, k.transpose(3, 2) if q.dim() == 4 else k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    if bias is not None:
        scores = scores + bias
    weights = torch.nn.functional.softmax(scores.float(), dim=-1).type_as(scores)
    return torch.matmul(weights, v), weights
"""

SDPA = """
def attention(q, k, v, bias=None):
    out = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=bias)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = torch.softmax(scores if bias is None else scores + bias, dim=-1)
    return out, weights
"""

FLATTEN_BMM = """
def attention(q, k, v, bias=None):
    lead, (tq, d), (tk, dv) = q.shape[:-2], q.shape[-2:], v.shape[-2:]
    q3, k3, v3 = q.reshape(-1, tq, d), k.reshape(-1, tk, d), v.reshape(-1, tk, dv)
    scores = torch.bmm(q3, k3.transpose(1, 2)) / math.sqrt(d)
    if bias is not None:
        scores = scores + bias.expand(*lead, tq, tk).reshape(-1, tq, tk)
    weights = torch.softmax(scores, dim=-1)
    return torch.bmm(weights, v3).reshape(*lead, tq, dv), weights.reshape(*lead, tq, tk)
"""

BADDBMM = """
def attention(q, k, v, bias=None):
    lead, (tq, d), (tk, dv) = q.shape[:-2], q.shape[-2:], v.shape[-2:]
    q3, k3, v3 = q.reshape(-1, tq, d), k.reshape(-1, tk, d), v.reshape(-1, tk, dv)
    start = torch.zeros(q3.shape[0], tq, tk, dtype=q.dtype, device=q.device) if bias is None else \\
        bias.to(q.dtype).expand(*lead, tq, tk).reshape(-1, tq, tk)
    scores = torch.baddbmm(start, q3, k3.transpose(1, 2), beta=1.0, alpha=1.0 / math.sqrt(d))
    weights = torch.softmax(scores, dim=-1)
    return torch.bmm(weights, v3).reshape(*lead, tq, dv), weights.reshape(*lead, tq, tk)
"""

FINFO_MASK = """
def attention(q, k, v, bias=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if bias is not None:
        scores = scores + bias.masked_fill(bias == float("-inf"), torch.finfo(q.dtype).min).to(q.dtype)
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights
"""

TRANSFORMS = [
    transform("nanoGPT attention", "attention", "nanoGPT model.py (the manual path)", attention=NANOGPT),
    transform("einsum attention", "attention", "einsum throughout (x-transformers, many tutorials)", attention=EINSUM),
    transform(
        "q scaled first", "attention", "q * D^-0.5 before the product (x-transformers, T5X)", attention=SCALE_Q_FIRST
    ),
    transform("manual softmax", "attention", "exp(s - max) / sum, the textbook softmax", attention=MANUAL_SOFTMAX),
    transform("logsumexp softmax", "attention", "exp(s - logsumexp(s))", attention=LOGSUMEXP),
    transform("float64 attention", "attention", "float64 inside, cast back to q's dtype", attention=FLOAT64_INSIDE),
    transform(
        "float32 softmax",
        "attention",
        "Hugging Face T5: softmax(scores.float()).type_as(scores)",
        attention=T5_FLOAT32_SOFTMAX,
    ),
    transform(
        "SDPA",
        "attention",
        "F.scaled_dot_product_attention for out (nanoGPT's flash path), weights apart",
        attention=SDPA,
    ),
    transform(
        "flattened bmm", "attention", "leading axes flattened to one batch, bmm, reshaped back", attention=FLATTEN_BMM
    ),
    transform("baddbmm", "attention", "Hugging Face BLOOM: baddbmm(bias, q, k^T, alpha=1/sqrt(D))", attention=BADDBMM),
    transform("finfo mask", "attention", "Hugging Face: -inf replaced by torch.finfo(dtype).min", attention=FINFO_MASK),
]
