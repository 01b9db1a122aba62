"""The extend exercise's inputs: a head size, a base, a Hugging Face ``rope_scaling`` dict, a length.

Every argument over the spec's whole domain: head sizes from 4 to 256 with an odd and an even number
of pairs, bases from just over 1 to 10^6, factors from 1 to 64, trained lengths from 1 to 131,072,
each type's own keys given and left to their defaults, ``seq_len`` absent, within and beyond L.
Cases where a correct float32 computation could round across a step of the spec (YaRN's floor and
ceil, llama3's step when its band has no width) are left out: there both answers are right.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from hypothesis import strategies as st

from grader.suite.domains import bases, sizes
from grader.suite.extend.oracle import default_frequencies

ROPE_TYPES = ("default", "linear", "dynamic", "yarn", "llama3")
STEP_MARGIN = 1e-4  # how close to a step of the spec a case may come (relative)


@dataclass(frozen=True)
class ExtendCase:
    head_dim: int
    base: float | None  # None: not passed (10000.0)
    rope_type: str | None  # None: scaling=None
    factor: float
    original_len: int
    params: tuple[tuple[str, float], ...] = ()  # the type's own keys, as given
    seq_len: int | None = None

    @property
    def used_base(self) -> float:
        return 10000.0 if self.base is None else self.base

    def scaling(self) -> dict | None:
        """A new dict for every call: what the submission does to it stays with that call."""
        if self.rope_type is None:
            return None
        return {
            "rope_type": self.rope_type,
            "factor": self.factor,
            "original_max_position_embeddings": self.original_len,
            **dict(self.params),
        }

    def kwargs(self) -> dict:
        kwargs = {} if self.base is None else {"base": self.base}
        kwargs = kwargs if self.rope_type is None else kwargs | {"scaling": self.scaling()}
        return kwargs if self.seq_len is None else kwargs | {"seq_len": self.seq_len}

    def describe(self) -> str:
        base = "" if self.base is None else f", base={self.base:g}"
        length = "" if self.seq_len is None else f", seq_len={self.seq_len}"
        return f"scaled_inv_freq({self.head_dim}{base}, scaling={self.scaling()}{length})"


# Keys of other types a real config may carry (Hugging Face's configs keep every key they were given).
FOREIGN_KEYS = {
    "yarn": ((), (("low_freq_factor", 2.0),)),
    **{kind: ((), (("attention_factor", 1.25),), (("beta_fast", 8.0),)) for kind in ROPE_TYPES if kind != "yarn"},
}
HEAD_DIMS = sizes(2, 128, 3, 32, 64).map(lambda pairs: 2 * pairs)
FACTORS = st.one_of(
    st.sampled_from([2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 1.5]), st.floats(1.01, 64.0).map(lambda s: float(f"{s:.3g}"))
)
TRAINED = sizes(1, 131072, 64, 2048, 4096, 8192, 32768)


def _near_step(value: float) -> bool:
    return abs(value - round(value)) <= STEP_MARGIN * max(1.0, abs(value))


def fair(case: ExtendCase) -> bool:
    """No pair of the case sits at a step where float32 and float64 may choose differently."""
    params = dict(case.params)
    if case.rope_type == "yarn":
        turns = (params.get("beta_fast", 32.0), params.get("beta_slow", 1.0))
        pairs = [
            case.head_dim * math.log(case.original_len / (2 * math.pi * n)) / (2 * math.log(case.used_base))
            for n in turns
        ]
        return not any(_near_step(pair) for pair in pairs)
    if case.rope_type == "llama3" and params.get("low_freq_factor", 1.0) == params.get("high_freq_factor", 4.0):
        wavelengths = 2 * math.pi / default_frequencies(case.head_dim, case.used_base)
        edge = case.original_len / params.get("low_freq_factor", 1.0)
        return bool(((wavelengths / edge - 1).abs() > STEP_MARGIN).all())
    return True


@st.composite
def yarn_params(draw) -> tuple[tuple[str, float], ...]:
    beta_slow = draw(st.sampled_from([None, 1.0, 0.5, 2.0]))
    beta_fast = draw(st.sampled_from([None, 32.0, 16.0, 64.0, 8.0]))
    given = draw(st.sampled_from([None, None, 1.0, 1.2]))
    params = {"beta_fast": beta_fast, "beta_slow": beta_slow, "attention_factor": given}
    return tuple((key, value) for key, value in params.items() if value is not None)


@st.composite
def llama3_params(draw) -> tuple[tuple[str, float], ...]:
    low = draw(st.sampled_from([None, 1.0, 2.0, 0.5]))
    width = draw(st.sampled_from([None, 3.0, 0.0, 7.0, 1.5]))  # high = low + width; 0: a band of no width
    used_low = 1.0 if low is None else low
    high = None if width is None else used_low + width
    params = {"low_freq_factor": low, "high_freq_factor": high}
    return tuple((key, value) for key, value in params.items() if value is not None)


def _length(draw, original_len: int, where: str) -> int | None:
    if where == "absent":
        return None
    if where == "within":  # None means L
        return draw(st.sampled_from([original_len, None, 1, max(1, original_len // 2)]))
    return draw(st.sampled_from([original_len + 1, 2 * original_len, 8 * original_len, 64 * original_len]))


@st.composite
def extend_cases(draw, rope_type: str | None = None, factor: float | None = None, seq: str | None = None):
    """Cases of ``rope_type`` (any when None), with ``factor`` fixed or drawn; ``seq``: the length for
    dynamic ("absent", "within" L, "beyond" L; any when None)."""
    kind = rope_type if rope_type is not None else draw(st.sampled_from(ROPE_TYPES))
    params = draw(yarn_params()) if kind == "yarn" else draw(llama3_params()) if kind == "llama3" else ()
    params += draw(st.sampled_from(FOREIGN_KEYS[kind]))  # another type's keys: the spec reads only its own
    original_len = draw(TRAINED)
    where = seq if seq is not None else draw(st.sampled_from(["absent", "within", "beyond"]))
    return ExtendCase(
        head_dim=draw(HEAD_DIMS),
        base=draw(bases()),
        rope_type=kind,
        factor=factor if factor is not None else draw(FACTORS),
        original_len=original_len,
        params=params,
        seq_len=_length(draw, original_len, where) if kind == "dynamic" else None,
    )


def cases(rope_type: str | None = None, factor: float | None = None, seq: str | None = None) -> st.SearchStrategy:
    return extend_cases(rope_type, factor, seq).filter(fair)


def default_cases() -> st.SearchStrategy:
    """scaling=None, or {"rope_type": "default", ...} with any factor: the default frequencies."""
    plain = st.builds(lambda d, b: ExtendCase(d, b, None, 1.0, 4096), HEAD_DIMS, bases())
    return st.one_of(plain, extend_cases("default"))


def _with_attention_factor(case: ExtendCase, value: float) -> ExtendCase:
    params = tuple(item for item in case.params if item[0] != "attention_factor")
    return ExtendCase(**{**case.__dict__, "params": (*params, ("attention_factor", value))})


def factor_one_edges() -> st.SearchStrategy:
    """yarn at a factor of 1 with and without its own attention_factor, in every run: the one case where a
    factor of 1 does not mean attention_factor 1.0, and the one beside it where it does."""
    given = st.builds(lambda case: _with_attention_factor(case, 1.3), extend_cases("yarn", 1.0, "within"))
    return st.tuples(given.filter(fair), cases("yarn", 1.0, "within"))


def attention_edges() -> st.SearchStrategy:
    """One case of each kind the attention factor depends on, in every run: yarn with and without its
    own attention_factor, and a type that carries yarn's key but must ignore it."""
    given = st.builds(lambda case: _with_attention_factor(case, 1.2), extend_cases("yarn"))
    foreign = st.builds(
        lambda case, kind: ExtendCase(**{**case.__dict__, "rope_type": kind, "params": (("attention_factor", 1.25),)}),
        extend_cases("linear"),
        st.sampled_from(["linear", "llama3", "default"]),
    )
    return st.tuples(given.filter(fair), cases("yarn"), foreign)
