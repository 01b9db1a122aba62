"""The sinusoidal exercise's correct variants: rewrites of its reference the way published code writes them."""

from __future__ import annotations

from grader.variants import transform

TUTORIAL = """
def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    pe = torch.zeros(seq_len, d_model)
    position = torch.arange(0, seq_len, dtype=torch.float).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(base) / d_model))
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe
"""

CONCATENATED = """
def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    angles = torch.outer(torch.arange(seq_len, dtype=torch.float64), inverse_frequencies(d_model, base))
    return torch.cat([angles.sin(), angles.cos()], dim=-1).float()
"""

DIVISION = """
def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    position = torch.arange(seq_len, dtype=torch.float32)[:, None]
    denominator = torch.pow(torch.tensor(base, dtype=torch.float32), torch.arange(0, d_model, 2).float() / d_model)
    angles = position / denominator
    return torch.stack([torch.sin(angles), torch.cos(angles)], dim=-1).reshape(seq_len, d_model)
"""

ONES_POW = """
def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    frequencies = (base * torch.ones(d_model // 2)).pow(-torch.arange(0, d_model, 2).float() / d_model)
    angles = torch.einsum("p,f->pf", torch.arange(seq_len).float(), frequencies)
    return torch.cat([angles.sin(), angles.cos()], dim=1)
"""

NUMPY = """
import numpy


def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    angles = numpy.arange(seq_len)[:, None] / numpy.power(base, numpy.arange(0, d_model, 2) / d_model)
    table = numpy.zeros((seq_len, d_model))
    table[:, 0::2], table[:, 1::2] = numpy.sin(angles), numpy.cos(angles)
    return torch.from_numpy(table).float()
"""

PHASE = """
def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    columns = torch.arange(d_model)
    frequencies = 1.0 / base ** ((columns - columns % 2).float() / d_model)
    phase = (columns % 2).float() * (math.pi / 2)  # cos(a) = sin(a + pi/2)
    return torch.sin(torch.arange(seq_len).float()[:, None] * frequencies + phase)
"""

TRANSFORMS = [
    transform(
        "tutorial table",
        "sinusoidal",
        "PyTorch tutorial: float32 exp/log div_term, sliced assignment",
        sinusoidal_encoding=TUTORIAL,
    ),
    transform(
        "concatenated table",
        "sinusoidal",
        "[all sin | all cos] (tensor2tensor's layout, the spec's frequencies)",
        sinusoidal_encoding=CONCATENATED,
    ),
    transform(
        "division table", "sinusoidal", "p / base^(2i/d) in float32, stacked pairs", sinusoidal_encoding=DIVISION
    ),
    transform(
        "pow table", "sinusoidal", "(base * ones).pow(-2i/d), einsum, concatenated", sinusoidal_encoding=ONES_POW
    ),
    transform(
        "numpy table", "sinusoidal", "numpy float64, then torch.from_numpy(...).float()", sinusoidal_encoding=NUMPY
    ),
    transform("phase table", "sinusoidal", "one sin with a phase of pi/2 on odd columns", sinusoidal_encoding=PHASE),
]
