"""Brute-force check of batch 5's `extend` files against the spec (exercises/extend.py's docstring).

    python tests/corpus/batch5/check_against_spec.py FILE.py [FILE.py ...] [--n 400] [--seed 5] [--public]

`reference()` below is written from the spec's formulas alone, in float64 Python arithmetic (math.pow,
math.log, math.floor, math.ceil), one pair at a time. Each FILE is loaded as a module and called on --n
random configurations (every rope_type and scaling None; see `draw()`), plus fixed error cases. For each
call it checks:

* inv_freq is a torch.Tensor, dtype float32, shape [D/2], finite, and within tolerance of the float64
  reference: |got - ref| <= tol_i * |ref| with tol_i = 1e-6 by default. A file whose first line says it
  computes in float32 (the HF style; its first line says "computed in float32") is held to tol_i = max(1e-6, (4 + |ln ref_i|) * 2^-23)
  instead: b^(-2i/D) computed in float32 carries the rounding of the exponent 2i/D (relative 2^-24),
  which the power amplifies by |ln theta_i| (up to ~20 for the largest dynamic bases drawn here), plus a
  few roundings of pow, the division by s and the yarn/llama3 blend;
* attention_factor is a Python float (type float, not a subclass) within 1e-12 of the reference;
* the scaling dict is unchanged (== to a deep copy taken before the call);
* ValueError for an unknown rope_type, a factor below 1 (every non-default type) and an odd head_dim.

--public also runs the public tests on each file: the file is copied as extend.py into a temp folder
`exercises/` with exercises/conftest.py and exercises/test_extend.py. There is no poslab/ beside that
folder, so conftest looks names up in the .py files there (the copy only).

Prints one line per file: OK with the worst relative error seen, or the first disagreement with its config.
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import math
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

TYPES = ("default", "linear", "dynamic", "yarn", "llama3")
STATS: dict[str, int] = {}  # which branches of the spec the drawn configurations reached


def _hit(name):
    STATS[name] = STATS.get(name, 0) + 1
REPO = Path(__file__).resolve().parents[3]


# ----------------------------------------------------------------------------------------------------
# The spec, in float64, one pair at a time.
# ----------------------------------------------------------------------------------------------------
def reference(head_dim, base=10000.0, scaling=None, seq_len=None):
    D, b = head_dim, float(base)
    if D % 2:
        raise ValueError("odd head_dim")
    rope_type = "default" if scaling is None else scaling["rope_type"]
    if rope_type not in TYPES:
        raise ValueError("unknown rope_type")
    theta = [math.pow(b, -2.0 * i / D) for i in range(D // 2)]
    if rope_type == "default":
        _hit("default" if scaling else "None")
        return theta, 1.0
    s = scaling["factor"]
    if s < 1:
        raise ValueError("factor below 1")
    L = scaling["original_max_position_embeddings"]
    if rope_type == "linear":
        _hit("linear")
        return [t / s for t in theta], 1.0
    if rope_type == "dynamic":
        T = L if seq_len is None else seq_len
        if T <= L:
            _hit("dynamic T < L" if T < L else "dynamic T = L")
            return theta, 1.0
        _hit("dynamic T > L")
        b2 = b * math.pow(s * T / L - (s - 1), D / (D - 2))
        return [math.pow(b2, -2.0 * i / D) for i in range(D // 2)], 1.0
    if rope_type == "yarn":
        beta_fast = scaling.get("beta_fast", 32)
        beta_slow = scaling.get("beta_slow", 1)

        def d(n):
            return D * math.log(L / (2 * math.pi * n)) / (2 * math.log(b))

        lo = max(math.floor(d(beta_fast)), 0)
        hi = min(math.ceil(d(beta_slow)), D - 1)
        _hit("yarn")
        if hi <= lo:
            _hit("yarn hi <= lo")
        if hi < lo:
            _hit("yarn hi < lo")
        if math.floor(d(beta_fast)) != round(d(beta_fast)) and math.floor(d(beta_fast)) >= 0:
            _hit("yarn floor(d(beta_fast)) != round")
        if "attention_factor" in scaling:
            _hit("yarn attention_factor given")
        if hi <= lo:
            hi = lo + 0.001
        out = []
        for i, t in enumerate(theta):
            r = min(max((i - lo) / (hi - lo), 0.0), 1.0)
            out.append(t * (1 - r) + (t / s) * r)
        if "attention_factor" in scaling:
            att = float(scaling["attention_factor"])
        else:
            att = 0.1 * math.log(s) + 1
        return out, att
    # llama3
    low = scaling.get("low_freq_factor", 1)
    high = scaling.get("high_freq_factor", 4)
    out = []
    _hit("llama3 step (low == high)" if low == high else "llama3 band")
    if "low_freq_factor" in scaling or "high_freq_factor" in scaling:
        _hit("llama3 keys given")
    for t in theta:
        lam = 2 * math.pi / t
        if low == high:
            out.append(t if lam <= L / low else t / s)
        elif lam < L / high:
            out.append(t)
        elif lam > L / low:
            out.append(t / s)
        else:
            u = (L / lam - low) / (high - low)
            _hit("llama3 pairs in the band")
            out.append((1 - u) * t / s + u * t)
    return out, 1.0


# ----------------------------------------------------------------------------------------------------
# Random configurations.
# ----------------------------------------------------------------------------------------------------
def draw(rng: random.Random):
    D = rng.choice([4, 6, 8, 10, 16, 32, 64, 64, 96, 128, 128, 256, 2 * rng.randint(2, 128)])
    base = rng.choice([10000.0, 500000.0, 1e6, 100.0, 10 ** rng.uniform(2, 6), 10 ** rng.uniform(2, 6)])
    if rng.random() < 0.2:
        base = float(round(base))
    kind = rng.choice((None,) + TYPES + ("linear", "dynamic", "dynamic", "yarn", "yarn", "llama3", "llama3"))
    if kind is None:
        return dict(head_dim=D, base=base, scaling=None, seq_len=rng.choice([None, rng.randint(1, 9000)]))
    r = rng.random()
    if r < 0.12:
        factor = 1 if rng.random() < 0.5 else 1.0
    elif r < 0.45:
        factor = rng.randint(1, 64)
    else:
        factor = round(math.exp(rng.uniform(0, math.log(64))), rng.choice([1, 3, 6]))
        factor = max(factor, 1.0)
    L = rng.choice([16, 64, 2048, 4096, 8192, int(math.exp(rng.uniform(math.log(16), math.log(8192))))])
    scaling = {"rope_type": kind, "factor": factor, "original_max_position_embeddings": L}
    seq_len = rng.choice(
        [None, rng.randint(1, L), L, L + 1, rng.randint(L + 1, 4 * L), rng.randint(L + 1, 2 * L)]
    )
    if kind == "yarn":
        if rng.random() < 0.5:
            scaling["beta_fast"] = rng.choice([32, 16, 64, 8.0, round(rng.uniform(2, 64), 2)])
        if rng.random() < 0.5:
            scaling["beta_slow"] = rng.choice([1, 2, 0.5, round(rng.uniform(0.25, 4), 2)])
        if rng.random() < 0.15:  # beta_slow so large that ceil(d(beta_slow)) <= lo: the hi <= lo guard
            scaling["beta_slow"] = round(rng.uniform(L / (2 * math.pi), 40 * L), 1)
        if rng.random() < 0.35:
            scaling["attention_factor"] = rng.choice([1, 1.0, 0.75, round(rng.uniform(0.5, 2.5), 4)])
    if kind == "llama3":
        x = rng.random()
        if x < 0.3:
            pass  # defaults 1 and 4
        elif x < 0.55:  # low == high: the step
            low = rng.choice([1, 1.0, 2.0, round(rng.uniform(0.5, 8), 3)])
            scaling["low_freq_factor"] = low
            scaling["high_freq_factor"] = low
        else:
            low = rng.choice([1, 1.0, 0.5, round(rng.uniform(0.25, 4), 3)])
            high = low + rng.choice([3, 1.0, round(rng.uniform(0.5, 16), 3)])
            if rng.random() < 0.8:
                scaling["low_freq_factor"] = low
            if rng.random() < 0.8:
                scaling["high_freq_factor"] = high
            if scaling.get("low_freq_factor", 1) > scaling.get("high_freq_factor", 4):
                scaling["low_freq_factor"], scaling["high_freq_factor"] = low, high
    return dict(head_dim=D, base=base, scaling=scaling, seq_len=seq_len)


def error_cases():
    """Calls the spec says raise ValueError."""
    out = []
    for D in (5, 7, 9, 127):
        out.append(dict(head_dim=D, base=10000.0, scaling=None, seq_len=None))
        out.append(dict(head_dim=D, base=10000.0, scaling={"rope_type": "linear", "factor": 2.0,
                                                           "original_max_position_embeddings": 64},
                        seq_len=None))
    for t in ("longrope", "ntk", "su", "Linear", "YaRN", "dynamic_ntk", ""):
        out.append(dict(head_dim=8, base=10000.0,
                        scaling={"rope_type": t, "factor": 4.0, "original_max_position_embeddings": 64},
                        seq_len=None))
    for t in ("linear", "dynamic", "yarn", "llama3"):
        for f in (0.5, 0.999, 0.25, 0):
            for T in (None, 32, 128):
                out.append(dict(head_dim=8, base=10000.0,
                                scaling={"rope_type": t, "factor": f, "original_max_position_embeddings": 64},
                                seq_len=T))
    return out


def fixed_cases():
    """A few hand-picked boundary configurations, run on every file before the random ones."""
    base = {"original_max_position_embeddings": 64}
    cases = [
        dict(head_dim=8, base=10000.0, scaling={"rope_type": "default"}, seq_len=None),
        dict(head_dim=8, base=10000.0, scaling={"rope_type": "default", "factor": 4.0, **base}, seq_len=None),
        # yarn: hi < lo (HF guards only hi == lo)
        dict(head_dim=8, base=10000.0, scaling={"rope_type": "yarn", "factor": 4.0, "beta_slow": 200.0, **base},
             seq_len=None),
        # yarn: floor vs round of d(beta_fast) = 20.94
        dict(head_dim=128, base=10000.0,
             scaling={"rope_type": "yarn", "factor": 8, "original_max_position_embeddings": 4096}, seq_len=None),
        dict(head_dim=8, base=10000.0, scaling={"rope_type": "yarn", "factor": 4.0, "attention_factor": 0.5, **base},
             seq_len=None),
        # dynamic below, at and above L
        dict(head_dim=8, base=10000.0, scaling={"rope_type": "dynamic", "factor": 4.0, **base}, seq_len=32),
        dict(head_dim=8, base=10000.0, scaling={"rope_type": "dynamic", "factor": 1, **base}, seq_len=256),
        dict(head_dim=8, base=10000.0, scaling={"rope_type": "dynamic", "factor": 4.0, **base}, seq_len=None),
        # llama3 with its own keys, and the step
        dict(head_dim=8, base=10000.0,
             scaling={"rope_type": "llama3", "factor": 4.0, "low_freq_factor": 2.0, "high_freq_factor": 8.0, **base},
             seq_len=None),
        dict(head_dim=8, base=10000.0,
             scaling={"rope_type": "llama3", "factor": 8, "low_freq_factor": 0.5, "high_freq_factor": 0.5, **base},
             seq_len=None),
    ]
    return cases


# ----------------------------------------------------------------------------------------------------
def load(path: Path):
    spec = importlib.util.spec_from_file_location(f"b5check_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def describe(case):
    return (f"scaled_inv_freq({case['head_dim']}, base={case['base']!r}, scaling={case['scaling']!r}, "
            f"seq_len={case['seq_len']!r})")


def check_one(fn, case, float32_style):
    """None when the call agrees with the spec, else a message. Also returns the worst relative error."""
    kept = copy.deepcopy(case["scaling"])
    args = (case["head_dim"], case["base"], case["scaling"], case["seq_len"])
    try:
        want = reference(*args)
    except ValueError:
        want = None
    try:
        got = fn(*args)
    except ValueError as error:
        if want is None:
            return None, 0.0
        return f"raised ValueError({error}) but the spec gives a result", 0.0
    except Exception as error:  # noqa: BLE001
        return f"raised {type(error).__name__}: {error}", 0.0
    if case["scaling"] != kept:
        return f"modified the scaling dict: {kept!r} -> {case['scaling']!r}", 0.0
    if want is None:
        return "returned instead of raising ValueError", 0.0
    if not isinstance(got, tuple) or len(got) != 2:
        return f"did not return a pair: {type(got).__name__}", 0.0
    inv, att = got
    ref_inv, ref_att = want
    D = case["head_dim"]
    if not isinstance(inv, torch.Tensor) or inv.dtype != torch.float32 or tuple(inv.shape) != (D // 2,):
        return f"inv_freq is not float32 [{D // 2}]: {type(inv).__name__} {getattr(inv, 'dtype', '')} " \
               f"{tuple(getattr(inv, 'shape', ()))}", 0.0
    if type(att) is not float:
        return f"attention_factor is {type(att).__name__}, not float", 0.0
    if abs(att - ref_att) > 1e-12:
        return f"attention_factor {att!r} != {ref_att!r}", 0.0
    worst = 0.0
    values = inv.tolist()
    for i, (g, r) in enumerate(zip(values, ref_inv)):
        if not math.isfinite(g):
            return f"inv_freq[{i}] = {g}", worst
        rel = abs(g - r) / abs(r)
        tol = max(1e-6, (4 + abs(math.log(r))) * 2.0 ** -23) if float32_style else 1e-6
        worst = max(worst, rel)
        if rel > tol:
            return f"inv_freq[{i}] = {g!r}, spec {r!r} (relative error {rel:.2e} > {tol:.1e})", worst
    return None, worst


def check_file(path: Path, n: int, seed: int):
    module = load(path)
    fn = module.scaled_inv_freq
    float32_style = "computed in float32" in path.read_text(encoding="utf-8").splitlines()[0]
    rng = random.Random(seed)
    cases = fixed_cases() + error_cases() + [draw(rng) for _ in range(n)]
    worst = 0.0
    STATS.clear()
    for case in cases:
        shown = describe(copy.deepcopy(case))  # as called, before any mutation
        message, rel = check_one(fn, case, float32_style)
        worst = max(worst, rel)
        if message:
            return f"FAIL {path.name}: {shown}: {message}"
    reached = ", ".join(f"{k} {v}" for k, v in sorted(STATS.items()))
    return (f"OK   {path.name}: {len(cases)} calls, worst relative error {worst:.2e}"
            + (" (float32 tolerance)" if float32_style else "") + f"\n     reached: {reached}")


def public_tests(path: Path) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "exercises"
        folder.mkdir()
        shutil.copy(path, folder / "extend.py")
        for name in ("conftest.py", "test_extend.py"):
            shutil.copy(REPO / "exercises" / name, folder / name)
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(folder / "test_extend.py")],
            cwd=tmp, capture_output=True, text=True,
        )
        last = (result.stdout.strip().splitlines() or ["?"])[-1]
        return f"public tests {path.name}: {'pass' if result.returncode == 0 else 'FAIL'} ({last})"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--n", type=int, default=400)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--public", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(1)
    for path in args.files:
        print(check_file(path, args.n, args.seed), flush=True)
        if args.public:
            print("     " + public_tests(path), flush=True)


if __name__ == "__main__":
    main()
