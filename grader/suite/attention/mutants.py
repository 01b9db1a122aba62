"""The attention exercise's known mistakes, as patches on the reference source (``grader.mutants``).

A patch is ``(old, new)``: ``old`` must occur exactly once in ``reference_source()``. Names are
``attention_<mistake>``; keep each to the smallest change that reproduces the mistake, and say in the
description where it comes from or what it breaks.
"""

from __future__ import annotations

from grader.mutants.spec import MutantSpec

# Snippets of the reference that several mutants patch.
SCALED_LOGITS = "logits = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])"
ADD_BIAS = "logits = logits + bias.to(dtype=logits.dtype, device=logits.device)"
SOFTMAX = "weights = torch.softmax(logits, dim=-1)"

MUTANTS: tuple[MutantSpec, ...] = (
    MutantSpec(
        "attention_no_scale",
        "attention",
        "logits not divided by sqrt(D)",
        ((SCALED_LOGITS, "logits = q @ k.transpose(-2, -1)"),),
    ),
    MutantSpec(
        "attention_scale_by_d",
        "attention",
        "logits divided by D instead of sqrt(D)",
        ((SCALED_LOGITS, "logits = q @ k.transpose(-2, -1) / q.shape[-1]"),),
    ),
    MutantSpec(
        "attention_scale_by_value_dim",
        "attention",
        "scaled by sqrt of v's feature size Dv",
        ((SCALED_LOGITS, "logits = q @ k.transpose(-2, -1) / math.sqrt(v.shape[-1])"),),
    ),
    MutantSpec(
        "attention_softmax_over_queries",
        "attention",
        "softmax over the query axis (dim=-2)",
        ((SOFTMAX, "weights = torch.softmax(logits, dim=-2)"),),
    ),
    MutantSpec(
        "attention_bias_after_softmax",
        "attention",
        "bias added to the weights after the softmax",
        (
            (ADD_BIAS, "pass"),
            (SOFTMAX, SOFTMAX + "\n    if bias is not None:\n        weights = weights + bias.to(dtype=logits.dtype)"),
        ),
    ),
    MutantSpec(
        "attention_mask_with_zero",
        "attention",
        "-inf entries of the bias replaced by a 0 logit",
        (
            (
                ADD_BIAS,
                "logits = torch.where(bias == float('-inf'), torch.zeros_like(logits), "
                "logits + bias.to(dtype=logits.dtype))",
            ),
        ),
    ),
    MutantSpec(
        "attention_scales_q_in_place",
        "attention",
        "q divided by sqrt(D) in place (mutates the input)",
        ((SCALED_LOGITS, "q /= math.sqrt(q.shape[-1])\n    logits = q @ k.transpose(-2, -1)"),),
    ),
    MutantSpec(
        "attention_float64_scaled_in_place",
        "attention",
        "q scaled in a float64 work copy, which "
        "q.to(torch.float64) does not make of a float64 q: the caller's q changes (a float32 q is safe)",
        (
            (
                SCALED_LOGITS,
                "logits = q.to(torch.float64).div_(math.sqrt(q.shape[-1])).to(q.dtype) @ k.transpose(-2, -1)",
            ),
        ),
    ),
    MutantSpec(
        "attention_casts_to_float32",
        "attention",
        ".float() on the inputs: float64 comes back float32",
        ((SCALED_LOGITS, "q, k, v = q.float(), k.float(), v.float()\n    " + SCALED_LOGITS),),
    ),
    MutantSpec(
        "attention_always_causal",
        "attention",
        "a causal mask built in, even when no bias is given",
        (
            (
                SOFTMAX,
                "logits = logits.masked_fill(torch.ones(logits.shape[-2:], dtype=torch.bool,"
                " device=logits.device).triu(1), float('-inf'))\n    " + SOFTMAX,
            ),
        ),
    ),
    MutantSpec(
        "attention_naive_softmax",
        "attention",
        "exp / sum without subtracting the max: overflows",
        ((SOFTMAX, "weights = logits.exp() / logits.exp().sum(-1, keepdim=True)"),),
    ),
    MutantSpec(
        "attention_bias_needs_the_full_shape",
        "attention",
        "the bias is viewed as the logits' full shape: a bias that broadcasts (one row of keys for every query) raises",
        (
            (
                "logits = logits + bias.to(dtype=logits.dtype, device=logits.device)",
                "logits = logits + bias.to(dtype=logits.dtype, device=logits.device).view(logits.shape)",
            ),
        ),
    ),
    MutantSpec(
        "attention_out_shaped_like_q",
        "attention",
        "out viewed as q's shape: right only when v's feature size Dv equals D",
        (("return weights @ v, weights", "return (weights @ v).view(q.shape), weights"),),
    ),
    MutantSpec(
        "attention_four_axes_at_most",
        "attention",
        "refuses q with more than four axes ([B, H, T, D] at most): the spec allows any leading axes",
        (
            (
                "logits = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])",
                'require(q.dim() <= 4, "q must be [B, H, T, D]")\n    logits = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])',
            ),
        ),
    ),
)
