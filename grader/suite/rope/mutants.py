"""The rope exercise's known mistakes, as patches on the reference source (``grader.mutants``).

A patch is ``(old, new)``: ``old`` must occur exactly once in ``reference_source()``. Names are
``rope_<mistake>``; keep each to the smallest change that reproduces the mistake, and say in the
description where it comes from or what it breaks.
"""

from __future__ import annotations

from grader.mutants.spec import MutantSpec

# Snippets of the reference that several mutants patch.
ROPE_FREQUENCIES = "return (base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)).to(dtype)"
ROPE_DEFAULT_POSITIONS = "return torch.arange(seq_len, device=x.device)"
ROPE_ROTATION = "rotated_a, rotated_b = a * cos - b * sin, a * sin + b * cos"
ROPE_SIGNATURE = "def apply_rope(x: torch.Tensor, positions: torch.Tensor | None = None, base: float = 10000.0)"
ROPE_WORK_DTYPE = "work = torch.float64 if x.dtype == torch.float64 else torch.float32"
ROPE_POSITIONS = "pos = _positions_for(x, positions).to(torch.float64)"
ROPE_ANGLES = "angles = torch.outer(pos, inv_freq.to(device=x.device, dtype=torch.float64))"
ROPE_RETURN = "return out.to(x.dtype)"

MUTANTS: tuple[MutantSpec, ...] = (
    MutantSpec(
        "rope_clockwise",
        "rope",
        "rotation by -angle (sign of sin flipped)",
        ((ROPE_ROTATION, "rotated_a, rotated_b = a * cos + b * sin, -a * sin + b * cos"),),
    ),
    MutantSpec(
        "rope_exponent_i_over_d",
        "rope",
        "theta_i = base^(-i/D) instead of base^(-2i/D)",
        (
            (
                ROPE_FREQUENCIES,
                "return (base ** (-torch.arange(0, head_dim // 2, dtype=torch.float64) / head_dim)).to(dtype)",
            ),
        ),
    ),
    MutantSpec(
        "rope_positions_from_one",
        "rope",
        "default positions 1..T instead of 0..T-1",
        ((ROPE_DEFAULT_POSITIONS, "return torch.arange(1, seq_len + 1, device=x.device)"),),
    ),
    MutantSpec(
        "rope_default_base_500000",
        "rope",
        "default base 500000 (Llama 3's) instead of 10000",
        ((ROPE_SIGNATURE, ROPE_SIGNATURE.replace("10000.0", "500000.0")),),
    ),
    MutantSpec(
        "rope_float16_angles",
        "rope",
        "positions and angles in the input's dtype (float16)",
        (
            (ROPE_POSITIONS, "pos = _positions_for(x, positions).to(x.dtype)"),
            (ROPE_ANGLES, "angles = torch.outer(pos, inv_freq.to(device=x.device, dtype=x.dtype))"),
        ),
    ),
    MutantSpec(
        "rope_float32_output",
        "rope",
        "everything in float32, returned without casting back",
        ((ROPE_WORK_DTYPE, "work = torch.float32"), (ROPE_RETURN, "return out")),
    ),
    MutantSpec(
        "rope_ignores_positions",
        "rope",
        "the positions argument is ignored (always 0..T-1)",
        ((ROPE_POSITIONS, "pos = _positions_for(x, None).to(torch.float64)"),),
    ),
    MutantSpec(
        "rope_same_angle_everywhere",
        "rope",
        "every pair rotated by the same angle (theta_0 = 1)",
        ((ROPE_ANGLES, "angles = torch.outer(pos, torch.ones(inv_freq.shape, dtype=torch.float64, device=x.device))"),),
    ),
    MutantSpec(
        "rope_flattens_with_view",
        "rope",
        ".view to flatten leading dims: fails on a transposed input",
        (
            ("xw = x.to(work)", "xw = x.to(work).view(-1, x.shape[-2], head_dim)  # (N, T, D)"),
            (ROPE_RETURN, "return out.view(x.shape).to(x.dtype)"),
        ),
    ),
    MutantSpec(
        "rope_4d_only",
        "rope",
        "assumes x is [B, H, T, D]: fails on other leading shapes",
        ((ROPE_POSITIONS, "batch, heads, seq_len, _ = x.shape\n    " + ROPE_POSITIONS),),
    ),
    MutantSpec(
        "rope_python_loop",
        "rope",
        "a Python loop over positions, one token rotated at a time",
        (
            (
                "return apply_rotary(x, rope_inverse_frequencies(x.shape[-1], base, torch.float64), positions)",
                "inv_freq = rope_inverse_frequencies(x.shape[-1], base, torch.float64)\n    at = torch.arange(x.shape[-2], device=x.device) if positions is None else positions\n    return torch.cat([apply_rotary(x[..., t : t + 1, :], inv_freq, at[t : t + 1]) for t in range(x.shape[-2])], dim=-2)",
            ),
        ),
        slow=True,
    ),
)
