"""The hidden suite's inputs reach every part of each argument's domain that the spec states.

The suite runs once against the reference with a student that records every call. Each call is bound
to its stub's signature (``exercises/<id>.py``), so an argument left out counts as "at its default".
The table below says, per exercise function and argument, what the drawn values must include: the
spec's minimum, small and large values, each parity the formula's integer divisions touch, the
default and an explicit value, and every choice. It is written from the specs, not from the suite.
"""

from __future__ import annotations

import importlib
import inspect
from collections import defaultdict
from collections.abc import Callable
from functools import cache

import pytest

from grader.argument_layout import Viewed
from grader.mutants import reference_source
from grader.student import NAME_OF_OP
from grader.suite import collect, run_case
from grader.suite.local import LocalStudent
from poslab.vocabulary import TestStatus

DEFAULT = object()  # an argument the call left out: the function used its default
Calls = list[dict]  # one dict per call: argument name -> value (DEFAULT when left out)
Feature = tuple[str, Callable[[Calls], bool]]

# The op's stub callable: (exercise, name in exercises/<id>.py); learned's ops build the module.
STUBS = {
    "attention": ("attention", "attention"),
    "sinusoidal_encoding": ("sinusoidal", "sinusoidal_encoding"),
    "learned.forward": ("learned", "LearnedPositionalEmbedding"),
    "learned.parameters": ("learned", "LearnedPositionalEmbedding"),
    "apply_rope": ("rope", "apply_rope"),
    "alibi_slopes": ("alibi", "alibi_slopes"),
    "alibi_bias": ("alibi", "alibi_bias"),
    "t5_relative_bucket": ("t5", "t5_relative_bucket"),
    "t5_relative_bias": ("t5", "t5_relative_bias"),
    "decode": ("decode", "decode"),
    "scaled_inv_freq": ("extend", "scaled_inv_freq"),
}


def _plain(value):
    return value.tensor if isinstance(value, Viewed) else value


def _bound(op: str, args: tuple, kwargs: dict) -> dict:
    exercise, name = STUBS[op]
    stub = getattr(importlib.import_module(f"exercises.{exercise}"), name)
    signature = inspect.signature(stub.__init__ if inspect.isclass(stub) else stub)
    params = [p for p in signature.parameters.values() if p.name != "self"]
    known = {p.name for p in params}
    kwargs = {key: value for key, value in kwargs.items() if key in known}  # learned's x, table, dtype, device
    bound = inspect.Signature(params).bind_partial(*args, **kwargs).arguments
    return {p.name: _plain(bound[p.name]) if p.name in bound else DEFAULT for p in params}


@cache
def recorded() -> dict[str, Calls]:
    """Every call the suite makes on the reference, bound to its stub's arguments, by function."""
    calls: dict[str, Calls] = defaultdict(list)

    class Recording(LocalStudent):
        def call(self, op, *args, **kwargs):
            if op in STUBS:
                calls[NAME_OF_OP[op]].append(_bound(op, args, kwargs))
            return super().call(op, *args, **kwargs)

    student = Recording.from_source(reference_source())
    judged = [case for case in collect() if case.family != "speed"]  # timings say nothing of inputs
    failed = [case.name for case in judged if run_case(case, student).status != TestStatus.PASSED]
    assert not failed, f"the reference fails {failed}"
    return dict(calls)


def given(argument: str, derive: Callable | None = None) -> Callable[[dict], list]:
    """The values of ``argument`` in the calls that passed it (``derive`` maps the call to a number)."""

    def values(call: dict) -> list:
        if derive is not None:
            return [derive(call)]
        return [] if call[argument] is DEFAULT else [call[argument]]

    return values


def some(label: str, argument: str, test: Callable, derive: Callable | None = None) -> Feature:
    pick = given(argument, derive)
    return label, lambda calls: any(test(v, call) for call in calls for v in pick(call) if v is not None)


def value_in(argument: str, allowed, derive=None) -> Feature:
    return some(f"{argument} in {allowed}", argument, lambda v, _: v in allowed, derive)


def at_least(argument: str, low, derive=None) -> Feature:
    return some(f"{argument} >= {low} (large)", argument, lambda v, _: v >= low, derive)


def small(argument: str, high, derive=None) -> Feature:
    return some(f"{argument} small (2 .. {high})", argument, lambda v, _: 2 <= v <= high, derive)


def parity(argument: str, odd: bool, of: Callable = lambda v: v, derive=None, what: str = "") -> Feature:
    label = f"{what or argument} {'odd' if odd else 'even'}"
    return some(label, argument, lambda v, _: of(v) % 2 == int(odd), derive)


def defaulted(argument: str) -> Feature:
    return f"{argument} left at its default", lambda calls: any(call[argument] is DEFAULT for call in calls)


def explicit(argument: str) -> Feature:
    return f"{argument} given explicitly", lambda calls: any(call[argument] is not DEFAULT for call in calls)


def every_choice(argument: str, choices) -> list[Feature]:
    return [value_in(argument, (choice,)) for choice in choices]


def _last_dim(name: str) -> Callable[[dict], int]:
    return lambda call: call[name].shape[-1]


def _tokens(call: dict) -> int:
    return call["q"].shape[-2]


def _is_power_of_two(n: int) -> bool:
    return n >= 1 and n & (n - 1) == 0


def _window_covers_all(v, call) -> bool:
    return v >= _tokens(call)


def _prompt_is_everything(v, call) -> bool:
    return v == _tokens(call)


def _rope_type(scaling) -> str | None:
    return scaling.get("rope_type") if isinstance(scaling, dict) else None


D_HALF = "D/2"
EXPECTED: dict[str, dict[str, list[Feature]]] = {
    "sinusoidal_encoding": {
        "seq_len": [value_in("seq_len", (1,)), small("seq_len", 8), at_least("seq_len", 1000)],
        # w_i = base^(-2i/d_model), i < d_model/2: both parities of d_model/2.
        "d_model": [
            value_in("d_model", (2,)),
            at_least("d_model", 256),
            parity("d_model", True, lambda d: d // 2, what="d_model/2"),
            parity("d_model", False, lambda d: d // 2, what="d_model/2"),
        ],
        "base": [defaulted("base"), explicit("base")],
    },
    "LearnedPositionalEmbedding": {
        "max_len": [value_in("max_len", (1,)), small("max_len", 8), at_least("max_len", 64)],
        "d_model": [value_in("d_model", (1,)), parity("d_model", True), parity("d_model", False)],
    },
    "apply_rope": {
        "head_dim": [
            value_in("head_dim", (2,), _last_dim("x")),
            at_least("head_dim", 64, _last_dim("x")),
            parity("head_dim", True, lambda d: d // 2, _last_dim("x"), D_HALF),
            parity("head_dim", False, lambda d: d // 2, _last_dim("x"), D_HALF),
        ],
        "positions": [defaulted("positions"), explicit("positions")],
        "base": [defaulted("base"), explicit("base")],
    },
    "alibi_slopes": {
        "n_heads": [
            value_in("n_heads", (1,)),
            at_least("n_heads", 32),
            some("n_heads a power of two", "n_heads", lambda v, _: _is_power_of_two(v)),
            some("n_heads not a power of two", "n_heads", lambda v, _: not _is_power_of_two(v)),
            some("n_heads odd above 1", "n_heads", lambda v, _: v > 1 and v % 2 == 1),
        ],
    },
    "alibi_bias": {
        "n_heads": [
            value_in("n_heads", (1,)),
            some("n_heads a power of two", "n_heads", lambda v, _: _is_power_of_two(v)),
            some("n_heads not a power of two", "n_heads", lambda v, _: not _is_power_of_two(v)),
        ],
        "seq_len": [value_in("seq_len", (1,)), small("seq_len", 8), at_least("seq_len", 64)],
    },
    "t5_relative_bucket": {
        "bidirectional": [defaulted("bidirectional"), *every_choice("bidirectional", (True, False))],
        # N = num_buckets // 2 (bidirectional), E = N // 2: odd and even num_buckets and N.
        "num_buckets": [
            defaulted("num_buckets"),
            explicit("num_buckets"),
            value_in("num_buckets", (2,)),
            parity("num_buckets", True),
            parity("num_buckets", False),
            parity("num_buckets", True, lambda n: n // 2, what="num_buckets // 2"),
            at_least("num_buckets", 64),
        ],
        "max_distance": [defaulted("max_distance"), explicit("max_distance"), small("max_distance", 8)],
    },
    "t5_relative_bias": {
        "num_buckets": [
            parity("num_buckets", True, derive=lambda call: call["table"].shape[0]),
            parity("num_buckets", False, derive=lambda call: call["table"].shape[0]),
        ],
        # At the default max_distance 128, a decoder's far keys sit at least 128 before the query.
        "query_len": [value_in("query_len", (1,)), at_least("query_len", 129)],
        "key_len": [value_in("key_len", (1,)), at_least("key_len", 64)],
        "bidirectional": [defaulted("bidirectional"), *every_choice("bidirectional", (True, False))],
        "max_distance": [defaulted("max_distance"), explicit("max_distance")],
    },
    "decode": {
        "head_dim": [
            value_in("head_dim", (2,), _last_dim("q")),
            parity("head_dim", True, lambda d: d // 2, _last_dim("q"), D_HALF),
            parity("head_dim", False, lambda d: d // 2, _last_dim("q"), D_HALF),
        ],
        "prompt_len": [
            value_in("prompt_len", (1,)),
            some("prompt_len = T (no decoded token)", "prompt_len", _prompt_is_everything),
            some("1 < prompt_len < T", "prompt_len", lambda v, call: 1 < v < _tokens(call)),
        ],
        "cache": [defaulted("cache"), *every_choice("cache", ("rotated", "raw"))],
        "window": [
            defaulted("window"),
            value_in("window", (1,)),
            some("window >= T", "window", _window_covers_all),
            some("1 < window < T", "window", lambda v, call: 1 < v < _tokens(call)),
        ],
        "attention_mask": [defaulted("attention_mask"), explicit("attention_mask")],
        "position_ids": [defaulted("position_ids"), explicit("position_ids")],
        "pairing": [defaulted("pairing"), *every_choice("pairing", ("interleaved", "half"))],
        "base": [defaulted("base"), explicit("base")],
    },
    "scaled_inv_freq": {
        "head_dim": [
            value_in("head_dim", (4,)),
            at_least("head_dim", 128),
            parity("head_dim", True, lambda d: d // 2, what=D_HALF),
            parity("head_dim", False, lambda d: d // 2, what=D_HALF),
        ],
        "base": [defaulted("base"), explicit("base")],
        "scaling": [
            defaulted("scaling"),
            *[
                some(f"rope_type {kind}", "scaling", lambda v, _, kind=kind: _rope_type(v) == kind)
                for kind in ("default", "linear", "dynamic", "yarn", "llama3")
            ],
        ],
        "seq_len": [defaulted("seq_len"), value_in("seq_len", (1,)), at_least("seq_len", 65536)],
    },
}

# Arguments the table reads from a tensor's shape rather than from the signature.
DERIVED = {("apply_rope", "head_dim"), ("decode", "head_dim"), ("t5_relative_bias", "num_buckets")}
TENSORS = {"q", "k", "v", "x", "table", "relative_position"}  # shapes drawn by the value tests


def _stub_arguments(name: str) -> list[str]:
    for exercise, stub_name in STUBS.values():
        if stub_name == name:
            stub = getattr(importlib.import_module(f"exercises.{exercise}"), stub_name)
            signature = inspect.signature(stub.__init__ if inspect.isclass(stub) else stub)
            return [p for p in signature.parameters if p != "self"]
    raise KeyError(f"no stub defines {name}")


@pytest.mark.parametrize("function", sorted(EXPECTED))
def test_table_covers_every_argument_of_the_stub(function):
    """Every non-tensor argument of the stub has a row, so a new argument cannot go unchecked."""
    rows = {argument for argument in EXPECTED[function]} - {a for f, a in DERIVED if f == function}
    assert set(_stub_arguments(function)) - TENSORS == rows


@pytest.mark.parametrize("function", sorted(EXPECTED))
def test_drawn_values_reach_the_spec_domain(function):
    """The suite's calls on the reference reach each feature of each argument's domain."""
    calls = recorded().get(function, [])
    assert calls, f"the suite never calls {function}"
    missing = [
        f"{argument}: {label}"
        for argument, features in EXPECTED[function].items()
        for label, reached in features
        if not reached(calls)
    ]
    assert not missing, f"{function}: the hidden tests never reach " + "; ".join(missing)


def test_features_can_fail():
    """A feature is false on calls that miss it (the checks are not vacuous)."""
    calls = [{"n_heads": 8, "seq_len": DEFAULT}]
    assert not value_in("n_heads", (1,))[1](calls)
    assert not some("", "n_heads", lambda v, _: not _is_power_of_two(v))[1](calls)
    assert not explicit("seq_len")[1](calls) and defaulted("seq_len")[1](calls)
    assert not parity("n_heads", True)[1](calls)
