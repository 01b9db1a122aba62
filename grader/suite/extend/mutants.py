"""The extend exercise's known mistakes, as patches on the reference source (``grader.mutants``).

The reference is ``poslab/encodings/extend.py`` over the schedules of ``rope_scaling.py`` (both in
the source). A patch is ``(old, new)``: ``old`` must occur exactly once in ``reference_source()``.
"""

from __future__ import annotations

from grader.mutants.spec import MutantSpec

YARN_BLEND = "inv_freq = theta * (1 - ramp) + (theta / factor) * ramp"
YARN_SCALE = YARN_BLEND + "\n    scale = 0.1 * math.log(factor) + 1.0 if factor > 1 else 1.0"
YARN_LOW = "low = max(math.floor(yarn_correction_dim(beta_fast, head_dim, base, original_len)), 0)"
DYNAMIC_FACTOR = "effective_factor = factor * length / original_len - (factor - 1)"
LLAMA3_BLEND = "return RopeSchedule((1 - smooth) * theta / factor + smooth * theta)"
GIVEN_FACTOR = 'attention_factor = scaling.get("attention_factor") if rope_type == "yarn" else None'

MUTANTS: tuple[MutantSpec, ...] = (
    MutantSpec(
        "extend_linear_multiplies",
        "extend",
        "position interpolation multiplies the frequencies by s (stretches the angles instead of squeezing them)",
        (
            (
                "RopeSchedule(rope_inverse_frequencies(head_dim, base) / factor)",
                "RopeSchedule(rope_inverse_frequencies(head_dim, base) * factor)",
            ),
        ),
    ),
    MutantSpec(
        "extend_yarn_ramp_reversed",
        "extend",
        "YaRN's ramp read the wrong way round: the fast pairs interpolated, the slow ones kept",
        ((YARN_BLEND, "inv_freq = theta * ramp + (theta / factor) * (1 - ramp)"),),
    ),
    MutantSpec(
        "extend_yarn_low_not_floored",
        "extend",
        "YaRN's lo is not rounded down (a fractional start of the ramp)",
        ((YARN_LOW, "low = max(yarn_correction_dim(beta_fast, head_dim, base, original_len), 0)"),),
    ),
    MutantSpec(
        "extend_yarn_scale_log10",
        "extend",
        "YaRN's attention factor with log base 10 (0.1 log10(s) + 1)",
        ((YARN_SCALE, YARN_SCALE.replace("math.log(factor)", "math.log10(factor)")),),
    ),
    MutantSpec(
        "extend_yarn_given_factor_ignored",
        "extend",
        "a yarn config's own attention_factor is ignored (DeepSeek-style configs give one)",
        ((GIVEN_FACTOR, "attention_factor = None"),),
    ),
    MutantSpec(
        "extend_dynamic_yarn_factor",
        "extend",
        "dynamic NTK with YaRN's s T / L instead of Hugging Face's s T / L - (s - 1)",
        ((DYNAMIC_FACTOR, "effective_factor = factor * length / original_len"),),
    ),
    MutantSpec(
        "extend_dynamic_no_exponent",
        "extend",
        "the NTK base grows by the factor alone, without the exponent D / (D - 2)",
        (("return base * factor ** (head_dim / (head_dim - 2))", "return base * factor"),),
    ),
    MutantSpec(
        "extend_llama3_bands_swapped",
        "extend",
        "llama3's bands swapped: short wavelengths divided by s, long ones kept",
        ((LLAMA3_BLEND, "return RopeSchedule(smooth * theta / factor + (1 - smooth) * theta)"),),
    ),
    MutantSpec(
        "extend_dynamic_no_length_is_stretched",
        "extend",
        "with no seq_len, dynamic takes T = s L (a config's stretched max_position_embeddings), not L",
        (
            (
                "original_len, seq_len, **params)",
                "original_len, seq_len or round(factor * original_len), **params)",
            ),
        ),
    ),
    MutantSpec(
        "extend_scaling_dict_popped",
        "extend",
        "yarn's attention_factor is popped from the caller's scaling dict (the spec says not to modify it)",
        (
            (
                GIVEN_FACTOR,
                GIVEN_FACTOR.replace('scaling.get("attention_factor")', 'scaling.pop("attention_factor", None)'),
            ),
        ),
    ),
    MutantSpec(
        "extend_unknown_type_key_error",
        "extend",
        "an unknown rope_type raises KeyError from the lookup, not ValueError",
        (("require(rope_type in ROPE_TYPES,", "require(True,"),),
    ),
    MutantSpec(
        "extend_odd_head_dim_rounded_down",
        "extend",
        "an odd head_dim rounded down to even, not rejected with ValueError",
        (
            (
                'require(head_dim >= 4, f"head_dim must be an even int >= 4, got {head_dim!r}")',
                'require(head_dim >= 4, f"head_dim must be an even int >= 4, got {head_dim!r}")\n    head_dim -= head_dim % 2',
            ),
        ),
    ),
    MutantSpec(
        "extend_base_ignored",
        "extend",
        "the base argument ignored: every schedule starts from 10000",
        (
            (
                "schedule = rope_schedule(ROPE_TYPES[rope_type], head_dim, base, factor,",
                "schedule = rope_schedule(ROPE_TYPES[rope_type], head_dim, 10000.0, factor,",
            ),
        ),
    ),
    MutantSpec(
        "extend_foreign_attention_factor",
        "extend",
        "an attention_factor key is read for every rope_type, not only yarn's",
        (
            (
                'attention_factor = scaling.get("attention_factor") if rope_type == "yarn" else None',
                'attention_factor = scaling.get("attention_factor")',
            ),
        ),
    ),
    MutantSpec(
        "extend_yarn_beta_fast_default_16",
        "extend",
        "yarn's beta_fast defaults to 16, not 32",
        (
            (
                "def _yarn(\n    head_dim, base, factor, original_len, current_len, beta_fast: float = 32.0",
                "def _yarn(\n    head_dim, base, factor, original_len, current_len, beta_fast: float = 16.0",
            ),
        ),
    ),
    MutantSpec(
        "extend_llama3_low_default_2",
        "extend",
        "llama3's low_freq_factor defaults to 2, not 1",
        (("low_freq_factor: float = 1.0", "low_freq_factor: float = 2.0"),),
    ),
    MutantSpec(
        "extend_numpy_attention_factor",
        "extend",
        "attention_factor returned as a numpy float64 (the spec: a Python float)",
        (
            (
                "return schedule.inv_freq, float(schedule.attention_scale if attention_factor is None else attention_factor)",
                'return schedule.inv_freq, __import__("numpy").float64(schedule.attention_scale if attention_factor is None else attention_factor)',
            ),
        ),
    ),
)
