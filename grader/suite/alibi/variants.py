"""The alibi exercise's correct variants: rewrites of its reference the way published code writes them."""

from __future__ import annotations

from grader.variants import transform

PRESS_SLOPES = """
def alibi_slopes(n_heads):
    def get_slopes_power_of_2(n):
        start = 2 ** (-2 ** -(math.log2(n) - 3))
        ratio = start
        return [start * ratio ** i for i in range(n)]

    if math.log2(n_heads).is_integer():
        slopes = get_slopes_power_of_2(n_heads)
    else:
        closest_power_of_2 = 2 ** math.floor(math.log2(n_heads))
        slopes = get_slopes_power_of_2(closest_power_of_2) + \\
            get_slopes_power_of_2(2 * closest_power_of_2)[0::2][: n_heads - closest_power_of_2]
    return torch.tensor(slopes, dtype=torch.float32)
"""

BLOOM_SLOPES = """
def alibi_slopes(n_heads):
    closest_power_of_2 = 2 ** math.floor(math.log2(n_heads))
    base = torch.tensor(2 ** (-(2 ** -(math.log2(closest_power_of_2) - 3))), dtype=torch.float32)
    powers = torch.arange(1, 1 + closest_power_of_2, dtype=torch.int32)
    slopes = torch.pow(base, powers)
    if closest_power_of_2 != n_heads:
        extra_base = torch.tensor(2 ** (-(2 ** -(math.log2(2 * closest_power_of_2) - 3))), dtype=torch.float32)
        num_remaining_heads = min(closest_power_of_2, n_heads - closest_power_of_2)
        extra_powers = torch.arange(1, 1 + 2 * num_remaining_heads, 2, dtype=torch.int32)
        slopes = torch.cat([slopes, torch.pow(extra_base, extra_powers)], dim=0)
    return slopes
"""

ODD_POWER_SLOPES = """
def alibi_slopes(n_heads):
    n = 2 ** math.floor(math.log2(n_heads))
    m = torch.pow(torch.tensor(2.0 ** (-8.0 / n)), torch.arange(1, 1 + n))
    if n < n_heads:
        m_hat = torch.pow(torch.tensor(2.0 ** (-4.0 / n)), torch.arange(1, 1 + 2 * (n_heads - n), 2))
        m = torch.cat([m, m_hat])
    return m.float()
"""

FINFO_TRIU_BIAS = """
def alibi_bias(n_heads, seq_len):
    positions = torch.arange(seq_len)
    distance = (positions[None, :] - positions[:, None]).float()  # j - i
    bias = alibi_slopes(n_heads)[:, None, None] * distance
    future = torch.triu(torch.ones(seq_len, seq_len, dtype=torch.bool), diagonal=1)
    return bias.masked_fill(future, torch.finfo(torch.float32).min)
"""

PRODUCTS_DIFFERENCE_BIAS = """
def alibi_bias(n_heads, seq_len):
    m = alibi_slopes(n_heads)[:, None]
    scaled = m * torch.arange(seq_len, dtype=torch.float32)  # (H, T): m * position
    bias = scaled[:, None, :] - scaled[:, :, None]  # m j - m i
    return torch.where(torch.ones(seq_len, seq_len, dtype=torch.bool).tril(), bias, float("-inf"))
"""

SYMMETRIC_THEN_MASK = """
def alibi_bias(n_heads, seq_len):
    i = torch.arange(seq_len)
    bias = -(i[None, :] - i[:, None]).abs().float() * alibi_slopes(n_heads).view(-1, 1, 1)
    return bias.masked_fill(i[None, :] > i[:, None], float("-inf"))
"""

FLOAT64_BIAS = """
def alibi_bias(n_heads, seq_len):
    below = 2 ** math.floor(math.log2(n_heads))
    exponents = [8.0 * (h + 1) / below for h in range(below)]
    exponents += [8.0 * (2 * h + 1) / (2 * below) for h in range(n_heads - below)]
    slopes = torch.tensor([2.0 ** -e for e in exponents], dtype=torch.float64)
    i = torch.arange(seq_len, dtype=torch.float64)
    bias = -slopes[:, None, None] * (i[:, None] - i[None, :])
    return bias.masked_fill(i[None, :] > i[:, None], -10000.0).float()
"""

TRANSFORMS = [
    transform(
        "Press slopes", "alibi", "Press et al.'s reference get_slopes (start * ratio ** i)", alibi_slopes=PRESS_SLOPES
    ),
    transform(
        "BLOOM slopes",
        "alibi",
        "Hugging Face BLOOM's build_alibi_tensor: float32 torch.pow of int32 powers",
        alibi_slopes=BLOOM_SLOPES,
    ),
    transform(
        "odd-power slopes",
        "alibi",
        "2^(-8/n) to the powers 1..n, then 2^(-4/n) to the odd powers",
        alibi_slopes=ODD_POWER_SLOPES,
    ),
    transform(
        "finfo triu bias",
        "alibi",
        "(j - i) m with a triu mask of torch.finfo(float32).min (Hugging Face)",
        alibi_bias=FINFO_TRIU_BIAS,
    ),
    transform(
        "difference of products bias",
        "alibi",
        "m j - m i, each product rounded, torch.where mask",
        alibi_bias=PRODUCTS_DIFFERENCE_BIAS,
    ),
    transform(
        "symmetric then masked bias",
        "alibi",
        "x-transformers: -m |i - j|, then the causal mask",
        alibi_bias=SYMMETRIC_THEN_MASK,
    ),
    transform(
        "float64 bias",
        "alibi",
        "its own float64 slopes, BERT's -10000.0 mask, cast to float32",
        alibi_bias=FLOAT64_BIAS,
    ),
]
