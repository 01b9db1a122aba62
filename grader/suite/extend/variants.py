"""The extend exercise's correct variants: ``scaled_inv_freq`` written from scratch the way published
code writes it, in float32 as Hugging Face does, in float64 throughout, and with a loop over pairs."""

from __future__ import annotations

from grader.variants import transform

HF_STYLE = """
def scaled_inv_freq(head_dim, base=10000.0, scaling=None, seq_len=None):
    config = dict(scaling or {"rope_type": "default"})
    rope_type = config.get("rope_type")
    if rope_type not in ("default", "linear", "dynamic", "yarn", "llama3"):
        raise ValueError(f"unknown rope_type {rope_type}")
    if head_dim % 2 or head_dim < 4:
        raise ValueError("head_dim must be even")
    factor = float(config.get("factor", 1.0))
    if factor < 1:
        raise ValueError("factor must be >= 1")
    original = config.get("original_max_position_embeddings", 4096)
    dim = head_dim

    def inverse_frequencies(theta_base):
        return 1.0 / (theta_base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))

    inv_freq = inverse_frequencies(base)
    if rope_type == "linear":
        return inv_freq / factor, 1.0
    if rope_type == "dynamic":
        length = seq_len if seq_len is not None and seq_len > original else original
        new_base = base * ((factor * length / original) - (factor - 1)) ** (dim / (dim - 2))
        return inverse_frequencies(new_base), 1.0
    if rope_type == "yarn":
        def find_correction_dim(num_rotations):
            return (dim * math.log(original / (num_rotations * 2 * math.pi))) / (2 * math.log(base))

        low = max(math.floor(find_correction_dim(config.get("beta_fast", 32))), 0)
        high = min(math.ceil(find_correction_dim(config.get("beta_slow", 1))), dim - 1)
        if high <= low:
            high = low + 0.001
        ramp = torch.clamp((torch.arange(dim // 2, dtype=torch.float32) - low) / (high - low), 0, 1)
        extrapolation = 1 - ramp
        inv_freq = (inv_freq / factor) * (1 - extrapolation) + inv_freq * extrapolation
        attention = config.get("attention_factor")
        if attention is None:
            attention = 0.1 * math.log(factor) + 1.0 if factor > 1 else 1.0
        return inv_freq, float(attention)
    if rope_type == "llama3":
        low_freq, high_freq = config.get("low_freq_factor", 1), config.get("high_freq_factor", 4)
        low_wavelen, high_wavelen = original / low_freq, original / high_freq
        wavelen = 2 * math.pi / inv_freq
        scaled = torch.where(wavelen > low_wavelen, inv_freq / factor, inv_freq)
        if high_freq != low_freq:
            smooth = (original / wavelen - low_freq) / (high_freq - low_freq)
            smoothed = (1 - smooth) * scaled / factor + smooth * scaled
            medium = ~(wavelen < high_wavelen) & ~(wavelen > low_wavelen)
            scaled = torch.where(medium, smoothed, scaled)
        return scaled, 1.0
    return inv_freq, 1.0
"""

FLOAT64_LOOP = """
def scaled_inv_freq(head_dim, base=10000.0, scaling=None, seq_len=None):
    config = scaling if scaling is not None else {"rope_type": "default"}
    kind = config.get("rope_type")
    s = float(config.get("factor", 1.0))
    if kind not in ("default", "linear", "dynamic", "yarn", "llama3") or s < 1.0 or head_dim % 2 or head_dim < 4:
        raise ValueError(f"bad arguments: head_dim={head_dim}, scaling={config}")
    trained = config.get("original_max_position_embeddings", 4096)
    pairs = head_dim // 2
    if kind == "dynamic" and seq_len is not None and seq_len > trained:
        base = base * (s * seq_len / trained - (s - 1)) ** (head_dim / (head_dim - 2))
    theta = [base ** (-2.0 * i / head_dim) for i in range(pairs)]
    keep = [1.0] * pairs
    if kind == "linear":
        keep = [0.0] * pairs
    elif kind == "yarn":
        def turns_pair(n):
            return head_dim * math.log(trained / (2 * math.pi * n)) / (2 * math.log(base))
        lo = max(math.floor(turns_pair(config.get("beta_fast", 32.0))), 0)
        hi = min(math.ceil(turns_pair(config.get("beta_slow", 1.0))), head_dim - 1)
        hi = hi if hi > lo else lo + 0.001
        keep = [1.0 - min(max((i - lo) / (hi - lo), 0.0), 1.0) for i in range(pairs)]
    elif kind == "llama3":
        low, high = config.get("low_freq_factor", 1.0), config.get("high_freq_factor", 4.0)
        for i, t in enumerate(theta):
            wavelength = 2 * math.pi / t
            if low == high:
                keep[i] = 1.0 if wavelength <= trained / low else 0.0
            else:
                keep[i] = min(max((trained / wavelength - low) / (high - low), 0.0), 1.0)
    out = torch.tensor([t * k + t / s * (1 - k) for t, k in zip(theta, keep)], dtype=torch.float64)
    attention = 1.0
    if kind == "yarn":
        given = config.get("attention_factor")
        attention = float(given) if given is not None else (0.1 * math.log(s) + 1.0 if s > 1 else 1.0)
    return out.float(), attention
"""

TRANSFORMS = [
    transform(
        "HF rope init",
        "extend",
        "Hugging Face's modeling_rope_utils: float32 frequencies from an int64 arange, the ramp in float32",
        scaled_inv_freq=HF_STYLE,
    ),
    transform(
        "float64 loop",
        "extend",
        "a plain Python loop over the pairs in float64, as a first implementation from the formulas",
        scaled_inv_freq=FLOAT64_LOOP,
    ),
]
