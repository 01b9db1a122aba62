"""The sinusoidal exercise's known mistakes, as patches on the reference source (``grader.mutants``).

A patch is ``(old, new)``: ``old`` must occur exactly once in ``reference_source()``. Names are
``sinusoidal_<mistake>``; keep each to the smallest change that reproduces the mistake, and say in the
description where it comes from or what it breaks.
"""

from __future__ import annotations

from grader.mutants.spec import MutantSpec

# Snippets of the reference that several mutants patch.
SIN_FREQUENCIES = "return base ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)"
SIN_ANGLES = "angles = torch.outer(torch.arange(seq_len, dtype=torch.float64), inverse_frequencies(d_model, base))"
SIN_STACK = "table = torch.stack([angles.sin(), angles.cos()], dim=-1)"
SIN_SIGNATURE = "def sinusoidal_encoding(seq_len: int, d_model: int, base: float = 10000.0)"

MUTANTS: tuple[MutantSpec, ...] = (
    MutantSpec(
        "sinusoidal_positions_from_one",
        "sinusoidal",
        "positions 1..T instead of 0..T-1",
        ((SIN_ANGLES, SIN_ANGLES.replace("torch.arange(seq_len,", "torch.arange(1, seq_len + 1,")),),
    ),
    MutantSpec(
        "sinusoidal_exponent_i_over_d",
        "sinusoidal",
        "frequency base^(-i/d) instead of base^(-2i/d)",
        ((SIN_FREQUENCIES, "return base ** (-torch.arange(0, d_model // 2, dtype=torch.float64) / d_model)"),),
    ),
    MutantSpec(
        "sinusoidal_tensor2tensor_schedule",
        "sinusoidal",
        "tensor2tensor's timescales: log-spaced with increment log(base) / (d/2 - 1)",
        (
            (
                SIN_FREQUENCIES,
                "return base ** (-torch.arange(0, d_model // 2, dtype=torch.float64) / max(d_model // 2 - 1, 1))",
            ),
        ),
    ),
    MutantSpec(
        "sinusoidal_sin_cos_swapped",
        "sinusoidal",
        "cos in the even columns, sin in the odd ones",
        ((SIN_STACK, "table = torch.stack([angles.cos(), angles.sin()], dim=-1)"),),
    ),
    MutantSpec(
        "sinusoidal_column_exponent",
        "sinusoidal",
        "exponent from the column index j: cos columns use (2i+1)/d",
        ((SIN_STACK, "table = torch.stack([angles.sin(), (angles * base ** (-1.0 / d_model)).cos()], dim=-1)"),),
    ),
    MutantSpec(
        "sinusoidal_default_base_1000",
        "sinusoidal",
        "default base 1000 instead of 10000",
        ((SIN_SIGNATURE, SIN_SIGNATURE.replace("10000.0", "1000.0")),),
    ),
    MutantSpec(
        "sinusoidal_ignores_base",
        "sinusoidal",
        "base hard-coded to 10000, the argument ignored",
        ((SIN_ANGLES, SIN_ANGLES.replace("inverse_frequencies(d_model, base)", "inverse_frequencies(d_model)")),),
    ),
    MutantSpec(
        "sinusoidal_float64_output",
        "sinusoidal",
        "returns the float64 table (no .float())",
        (("return table.flatten(-2).float()", "return table.flatten(-2)"),),
    ),
    MutantSpec(
        "sinusoidal_float16_angles",
        "sinusoidal",
        "angles computed in float16 (inf past 65504)",
        (
            (
                SIN_ANGLES,
                "angles = torch.outer(torch.arange(seq_len, dtype=torch.float64).half(), "
                "inverse_frequencies(d_model, base).half()).double()",
            ),
        ),
    ),
    MutantSpec(
        "sinusoidal_concatenated_cos_first",
        "sinusoidal",
        "concatenated layout with cos first: [cos | sin]",
        (
            (
                SIN_STACK + "  # (T, d/2, 2)\n    return table.flatten(-2).float()",
                "return torch.cat([angles.cos(), angles.sin()], dim=-1).float()",
            ),
        ),
    ),
    MutantSpec(
        "sinusoidal_returns_numpy",
        "sinusoidal",
        "the table returned as a numpy array (.numpy())",
        (("return table.flatten(-2).float()", "return table.flatten(-2).float().numpy()"),),
    ),
    MutantSpec(
        "sinusoidal_python_loop",
        "sinusoidal",
        "a Python loop over positions (far too slow)",
        (
            (
                SIN_ANGLES,
                "frequencies = inverse_frequencies(d_model, base)\n"
                "    angles = torch.zeros(seq_len, d_model // 2, dtype=torch.float64)\n"
                "    for position in range(seq_len):\n"
                "        angles[position] = position * frequencies",
            ),
        ),
        slow=True,
    ),
)
