"""Transforms that wrap any exercise's names instead of rewriting them, so they compose with every
rewrite of the same exercise (and apply to an exercise added later, from ``poslab.exercises``):

* float64 inside: floating-point tensor arguments go in as float64, floating-point results come back
  in the dtype of the first floating-point argument (what every spec asks; a function without one,
  such as ``sinusoidal_encoding``, is left alone);
* contiguous inputs: every tensor argument is made contiguous first;
* float32 inside, for the exercises whose spec lets float32 do the work for any input dtype
  (attention's softmax as in Hugging Face's T5, RoPE as in Meta's LLaMA).
"""

from __future__ import annotations

from grader.variants import Transform
from poslab.exercises import EXERCISES

FLOAT32_EXERCISES = ("attention", "rope")

HELPERS = '''

def _variant_wrap(function, inputs, outputs):
    """``function`` with its tensor arguments passed through ``inputs`` and its float results through ``outputs``."""
    def convert(value, how, dtype=None):
        if isinstance(value, torch.Tensor):
            return how(value, dtype)
        if isinstance(value, tuple):
            return tuple(convert(item, how, dtype) for item in value)
        return value

    def wrapped(*args, **kwargs):
        floats = [a for a in (*args, *kwargs.values()) if isinstance(a, torch.Tensor) and a.is_floating_point()]
        dtype = floats[0].dtype if floats else None
        result = function(*(convert(a, inputs) for a in args), **{k: convert(v, inputs) for k, v in kwargs.items()})
        return convert(result, outputs, dtype) if dtype is not None else result
    return wrapped
'''

KINDS = {
    "float64 inside": (
        "lambda t, _: t.double() if t.is_floating_point() else t",
        "lambda t, dtype: t.to(dtype) if t.is_floating_point() else t",
    ),
    "contiguous inputs": ("lambda t, _: t.contiguous()", "lambda t, _: t"),
    "float32 inside": (
        "lambda t, _: t.float() if t.is_floating_point() else t",
        "lambda t, dtype: t.to(dtype) if t.is_floating_point() else t",
    ),
}


def _wrap_lines(exercise, inputs: str, outputs: str) -> str:
    lines = []
    for name in exercise.names:
        target = f"{name}.forward" if name[:1].isupper() else name
        lines.append(f"{target} = _variant_wrap({target}, {inputs}, {outputs})")
    return "\n".join(lines)


def wrapper_transforms() -> list[Transform]:
    found = []
    for exercise in EXERCISES:
        for kind, (inputs, outputs) in KINDS.items():
            if kind == "float32 inside" and exercise.id not in FLOAT32_EXERCISES:
                continue
            text = HELPERS + "\n\n" + _wrap_lines(exercise, inputs, outputs) + "\n"
            found.append(Transform(f"{kind} ({exercise.id})", exercise.id, f"a wrapper: {kind}", (), text))
    return found
