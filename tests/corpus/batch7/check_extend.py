"""Brute-force checker for scaled_inv_freq, written from the stub's docstring alone.

Usage:  python check_against_spec.py FILE.py [FILE.py ...] [--n N] [--seed S]

The oracle below is a scalar float64 transcription of the spec (math.log/floor/ceil, one pair at a time).
Each file gets: a signature check, a list of hand-picked edge cases, N random cases over the whole domain
(every rope_type, D in 4..256 even and odd, base 1.01..1e7 also as int, factor 1..1000 also as int,
L from 1 up, T None/below/at/above L, every optional key present or absent, positional/keyword calls),
and the three ValueError rules. For every call: the return is a 2-tuple, inv_freq a float32 torch tensor
of shape (D/2,), attention_factor exactly a Python float, values within tolerance, the scaling dict unchanged
(same keys, order, values and value types). Error cases must raise ValueError (and also not touch the dict).

Tolerance, per element: rel 1e-5 (the public tests' own) + 4 * 2^-23 * (|ln x| + cond). The spec allows float32
intermediates (HF computes everything in float32); the spec's formulas have no cancellation, but
  - b^(-2i/D) in float32 errs by ~|ln x| * 2^-24 relatively (the exponent is rounded), and
  - the yarn / llama3 blends theta (1 - r + r/s), theta ((1 - u)/s + u) are ill-conditioned in r, u when the result
    is near theta/s and s is large: an O(eps) error in r or u becomes O(eps * s) relatively. cond is that
    amplification, computed by the oracle per element (0 outside the ramp / band).
  The slack is ~1e-7 * (|ln x| + cond); cond is 0 outside the blends, <= ~2D in yarn's ramp, and ~s x / (high - low)
  near the low end of llama3's band (it matters only for large factors or narrow bands). Every bug here is off by
  >= 1e-2 relatively, or by type / exception / dict change, so the slack hides none of them.
attention_factor: rel 1e-6 (pytest.approx default).
Places where the spec's answer is discontinuous (yarn's floor/ceil when d(n) is within 1e-6 of an
integer, relative to max(1, |d|); llama3's step when low == high and lambda_i is within 1e-6 of L / low)
accept either side, and are counted separately ("near a discontinuity" in the output; the few random ones
are yarn with base 1.01, where |d| is in the thousands).
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import inspect
import math
import random
import sys
import traceback

import torch

torch.set_num_threads(1)

RTOL = 1e-5
EPS32 = 2.0**-23
AF_RTOL = 1e-6
NEAR = 1e-6
MISSING = object()
KNOWN = ("default", "linear", "dynamic", "yarn", "llama3")


# ----------------------------------------------------------------------------------------------- oracle
class Raise:
    pass


def _floor_choices(x):
    k = round(x)
    if abs(x - k) <= NEAR * max(1.0, abs(x)):
        return {k - 1, k}, True
    return {math.floor(x)}, False


def _ceil_choices(x):
    k = round(x)
    if abs(x - k) <= NEAR * max(1.0, abs(x)):
        return {k, k + 1}, True
    return {math.ceil(x)}, False


def oracle(D, b, scaling, T):
    """Spec answer: Raise, or (candidates, attention_factor, near_boundary). candidates: list of
    (expected list, alternative list or None): a result is right if it matches one candidate, where each
    element may match either the expected value or (if given) the alternative one."""
    if D % 2 != 0:
        return Raise
    if scaling is None:
        kind, s = "default", 1.0
    else:
        kind = scaling["rope_type"]
        if kind not in KNOWN:
            return Raise
        s = scaling.get("factor", 1.0)
        if s < 1:
            return Raise
    half = D // 2
    theta = [b ** (-2.0 * i / D) for i in range(half)]
    af = 1.0
    near = False
    if kind == "default":
        cands = [(theta, None, None)]
    elif kind == "linear":
        cands = [([t / s for t in theta], None, None)]
    elif kind == "dynamic":
        L = scaling["original_max_position_embeddings"]
        TT = L if T is None else T
        if TT <= L:
            cands = [(theta, None, None)]
        else:
            b2 = b * (s * TT / L - (s - 1)) ** (D / (D - 2))
            cands = [([b2 ** (-2.0 * i / D) for i in range(half)], None, None)]
    elif kind == "yarn":
        L = scaling["original_max_position_embeddings"]
        bf = scaling.get("beta_fast", 32)
        bs = scaling.get("beta_slow", 1)

        def d(n):
            return D * math.log(L / (2 * math.pi * n)) / (2 * math.log(b))

        los, n1 = _floor_choices(d(bf))
        his, n2 = _ceil_choices(d(bs))
        near = n1 or n2
        cands = []
        for lo0 in sorted(los):
            for hi0 in sorted(his):
                lo = max(lo0, 0)
                hi = min(hi0, D - 1)
                if hi <= lo:
                    hi = lo + 0.001
                vec, cond = [], []
                for i in range(half):
                    r = min(max((i - lo) / (hi - lo), 0.0), 1.0)
                    vec.append(theta[i] * (1 - r) + (theta[i] / s) * r)
                    # f = theta (1 - r (1 - 1/s)): an error dr in r moves f by dr (1 - 1/s) / (1 - r + r/s) relatively
                    cond.append((r + 1) * (1 - 1 / s) / (1 - r + r / s) if 0 < r < 1 else 0.0)
                cands.append((vec, None, cond))
        af = float(scaling["attention_factor"]) if "attention_factor" in scaling else 0.1 * math.log(s) + 1
    else:  # llama3
        L = scaling["original_max_position_embeddings"]
        low = scaling.get("low_freq_factor", 1)
        high = scaling.get("high_freq_factor", 4)
        vec, alt, cond = [], [], []
        for t in theta:
            cond.append(0.0)
            lam = 2 * math.pi / t
            if low == high:
                vec.append(t if lam <= L / low else t / s)
                if abs(lam - L / low) <= NEAR * (L / low):
                    alt.append(t / s if vec[-1] == t else t)
                    near = True
                else:
                    alt.append(vec[-1])
            elif lam < L / high:
                vec.append(t)
                alt.append(t)
            elif lam > L / low:
                vec.append(t / s)
                alt.append(t / s)
            else:
                u = (L / lam - low) / (high - low)
                vec.append((1 - u) * t / s + u * t)
                alt.append(vec[-1])
                # f = theta (1/s + u (1 - 1/s)), u = (x - low) / (high - low), x = L / lambda: computing x and u in
                # float32 errs by ~eps (x / (high - low) + |u| + 1) in u, amplified by (1 - 1/s) / (1/s + u (1 - 1/s))
                x = L / lam
                cond[-1] = (x / (high - low) + abs(u) + 1) * (1 - 1 / s) / (1 / s + u * (1 - 1 / s))
        cands = [(vec, alt, cond)]
    return cands, af, near


def oracle_self_test():
    """The oracle reproduces the hand-worked numbers of the public tests' docstrings."""
    th = [1.0, 0.1, 0.01, 0.001]
    cfg = lambda t, **k: {"rope_type": t, "factor": 4.0, "original_max_position_embeddings": 64, **k}  # noqa: E731
    close = lambda a, b: all(abs(x - y) <= 1e-12 * abs(y) for x, y in zip(a, b))  # noqa: E731
    assert close(oracle(8, 1e4, None, None)[0][0][0], th)
    assert close(oracle(8, 1e4, cfg("linear"), None)[0][0][0], [t / 4 for t in th])
    assert close(oracle(8, 1e4, cfg("dynamic"), 128)[0][0][0], [t * 5 ** (-2 * i / 6) for i, t in enumerate(th)])
    c, af, _ = oracle(8, 1e4, cfg("yarn"), None)
    assert close(c[0][0], [1.0, 0.1 * 0.5 + 0.025 * 0.5, 0.01 / 4, 0.001 / 4]) and abs(af - (0.1 * math.log(4) + 1)) < 1e-15
    u = (64 / (2 * math.pi / 0.1) - 1) / 3
    assert close(oracle(8, 1e4, cfg("llama3"), None)[0][0][0], [1.0, (1 - u) * 0.1 / 4 + u * 0.1, 0.01 / 4, 0.001 / 4])
    assert oracle(8, 1e4, cfg("longrope"), None) is Raise and oracle(7, 1e4, None, None) is Raise


# ------------------------------------------------------------------------------------------ the cases
def call_repr(D, base, scaling, seq_len, style):
    args = []
    if style == "positional":
        args.append(repr(D))
        if base is not MISSING or scaling is not MISSING or seq_len is not MISSING:
            args.append("10000.0" if base is MISSING else repr(base))
        if scaling is not MISSING or seq_len is not MISSING:
            args.append("None" if scaling is MISSING else repr(scaling))
        if seq_len is not MISSING:
            args.append(repr(seq_len))
    else:
        args.append(f"head_dim={D!r}" if style == "keyword" else repr(D))
        if base is not MISSING:
            args.append(f"base={base!r}")
        if scaling is not MISSING:
            args.append(f"scaling={scaling!r}")
        if seq_len is not MISSING:
            args.append(f"seq_len={seq_len!r}")
    return f"scaled_inv_freq({', '.join(args)})"


def do_call(fn, D, base, scaling, seq_len, style):
    if style == "positional":
        args = [D]
        if base is not MISSING or scaling is not MISSING or seq_len is not MISSING:
            args.append(10000.0 if base is MISSING else base)
        if scaling is not MISSING or seq_len is not MISSING:
            args.append(None if scaling is MISSING else scaling)
        if seq_len is not MISSING:
            args.append(seq_len)
        return fn(*args)
    kwargs = {}
    if base is not MISSING:
        kwargs["base"] = base
    if scaling is not MISSING:
        kwargs["scaling"] = scaling
    if seq_len is not MISSING:
        kwargs["seq_len"] = seq_len
    if style == "keyword":
        return fn(head_dim=D, **kwargs)
    return fn(D, **kwargs)


def loguniform(rng, lo, hi):
    return math.exp(rng.uniform(math.log(lo), math.log(hi)))


def random_case(rng):
    D = rng.choice([4, 4, 6, 8, 8, 10, 12, 14, 16, 18, 22, 26, 32, 34, 48, 64, 80, 96, 128, 130, 256])
    base = rng.choice([MISSING, 10000.0, 10000, 500000.0, 1e6, 1e4, 10.0, 2.0, 1.5, 1.01, "rand", "rand", "rand"])
    if base == "rand":
        base = loguniform(rng, 1.01, 1e7)
    kind = rng.choice([None, "default", "linear", "dynamic", "yarn", "yarn", "llama3", "llama3"])
    seq_len = MISSING
    if kind is None:
        scaling = rng.choice([MISSING, None])
        if rng.random() < 0.3:
            seq_len = rng.choice([None, 1, 100, 10**6])
        return D, base, scaling, seq_len
    s = rng.choice([1.0, 1, 2, 4.0, 8.0, 16, 32.0, 1.0000001, 1.5, "rand", "rand", "rand"])
    if s == "rand":
        s = loguniform(rng, 1.0, 1000.0)
    L = rng.choice([1, 2, 3, 7, 16, 64, 100, 512, 2048, 4096, 8192, 32768, 131072, "rand"])
    if L == "rand":
        L = rng.randint(1, 300000)
    scaling = {"rope_type": kind, "factor": s, "original_max_position_embeddings": L}
    if kind == "yarn":
        def beta():
            return rng.choice([32, 32.0, 16.0, 64, 4.0, 2.0, 1, 1.0, 0.5, loguniform(rng, 0.25, 256.0)])
        if rng.random() < 0.6:
            scaling["beta_fast"] = beta()
        if rng.random() < 0.6:
            scaling["beta_slow"] = beta()
        if rng.random() < 0.5:
            scaling["attention_factor"] = rng.choice([1.0, 1.5, 0.7, 2, 1, rng.uniform(0.5, 3.0)])
    elif kind == "llama3":
        mode = rng.random()
        low = rng.choice([1.0, 1, 2.0, 0.5, 0.25, 4.0, 8, loguniform(rng, 0.1, 16.0)])
        if mode < 0.25:
            scaling["low_freq_factor"] = low
            scaling["high_freq_factor"] = low  # the step
        elif mode < 0.7:
            scaling["low_freq_factor"] = low
            scaling["high_freq_factor"] = low * rng.choice([2, 4, 1.5, loguniform(rng, 1.01, 64.0)])
        elif mode < 0.85:
            scaling["low_freq_factor"] = min(low, 4.0)  # high defaults to 4
        else:
            scaling["high_freq_factor"] = max(low, 1.0)  # low defaults to 1
    if rng.random() < 0.15:  # a dict key order that differs from the spec's listing
        scaling = dict(reversed(list(scaling.items())))
    r = rng.random()
    if r < 0.3:
        seq_len = MISSING
    elif r < 0.4:
        seq_len = None
    else:
        seq_len = rng.choice([1, max(L - 1, 1), L, L + 1, 2 * L, 3 * L + 7, rng.randint(1, 50 * L),
                              int(L * loguniform(rng, 1.0, 1000.0)) + 1])
    return D, base, scaling, seq_len


def error_case(rng):
    D, base, scaling, seq_len = random_case(rng)
    which = rng.choice(["odd", "type", "factor"])
    if which == "odd":
        D = rng.choice([1, 3, 5, 7, 9, 11, 33, 63, 127, 129])
        return D, base, scaling, seq_len
    if not isinstance(scaling, dict) or scaling.get("rope_type") == "default":
        scaling = {"rope_type": rng.choice(["linear", "dynamic", "yarn", "llama3"]), "factor": 2.0,
                   "original_max_position_embeddings": 64}
    scaling = dict(scaling)
    if which == "type":
        scaling["rope_type"] = rng.choice(["longrope", "su", "ntk", "Linear", "YARN", "", "dynamic-ntk", "llama2"])
    else:
        scaling["factor"] = rng.choice([0.5, 0.999, 0.9999999, 0.25, 0, 0.0, -1.0, 0.1])
    return D, base, scaling, seq_len


def edge_cases():
    P = lambda t, **k: {"rope_type": t, "factor": 4.0, "original_max_position_embeddings": 64, **k}  # noqa: E731
    out = [
        (8, MISSING, MISSING, MISSING), (4, MISSING, None, MISSING), (4, 10000, None, None), (256, 500000.0, None, 5),
        (8, MISSING, {"rope_type": "default", "factor": 1.0, "original_max_position_embeddings": 64}, MISSING),
        (8, MISSING, {"rope_type": "default", "factor": 4.0, "original_max_position_embeddings": 64}, 300),
        (8, MISSING, P("linear"), MISSING), (8, MISSING, P("linear", factor=4), 1000),
        (8, MISSING, P("dynamic"), 64), (8, MISSING, P("dynamic"), 128), (8, MISSING, P("dynamic"), MISSING),
        (8, MISSING, P("dynamic"), None), (8, MISSING, P("dynamic"), 1), (8, MISSING, P("dynamic"), 32),
        (8, MISSING, P("dynamic"), 48), (8, MISSING, P("dynamic"), 56), (8, MISSING, P("dynamic"), 63),
        (8, MISSING, P("dynamic"), 65), (4, MISSING, P("dynamic"), 128), (4, 2.0, P("dynamic", factor=1.0), 640),
        (8, MISSING, P("dynamic", factor=1.0), 64), (8, MISSING, P("dynamic", factor=1.0), 128),
        (8, MISSING, P("yarn"), MISSING), (8, MISSING, P("yarn", factor=1.0), MISSING),
        (8, MISSING, P("yarn", factor=1.0, attention_factor=1.5), MISSING),
        (8, MISSING, P("yarn", factor=1, attention_factor=2), MISSING),
        (8, MISSING, P("yarn", beta_fast=16.0, beta_slow=2.0, attention_factor=1.5), MISSING),
        (8, MISSING, P("yarn", beta_fast=1, beta_slow=32), MISSING),       # swapped betas: hi <= lo
        (8, 10.0, P("yarn", original_max_position_embeddings=100000), MISSING),   # lo > D - 1
        (8, MISSING, P("yarn", original_max_position_embeddings=1), MISSING),     # both d(n) < 0
        (8, MISSING, P("yarn", original_max_position_embeddings=8192), MISSING),  # hi above D/2 - 1
        (128, 500000.0, P("yarn", factor=8.0, original_max_position_embeddings=8192), MISSING),
        (4, 1.01, P("yarn"), MISSING), (6, 1.5, P("yarn"), MISSING),
        (8, MISSING, P("llama3"), MISSING), (8, MISSING, P("llama3", factor=1.0), MISSING),
        (8, MISSING, P("llama3", low_freq_factor=2.0, high_freq_factor=8.0), MISSING),
        (8, MISSING, P("llama3", low_freq_factor=2.0, high_freq_factor=2.0), MISSING),
        (8, MISSING, P("llama3", low_freq_factor=0.5, high_freq_factor=0.5), MISSING),
        (8, MISSING, P("llama3", low_freq_factor=1, high_freq_factor=32), MISSING),
        (128, 500000.0, {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                         "original_max_position_embeddings": 8192}, MISSING),
        (8, MISSING, P("linear", factor=1.0), MISSING), (8, MISSING, P("llama3", factor=1), 5),
    ]
    errors = [
        (7, MISSING, MISSING, MISSING), (9, MISSING, None, MISSING), (5, MISSING, P("linear"), MISSING),
        (3, MISSING, P("yarn"), MISSING), (8, MISSING, P("longrope"), MISSING), (8, MISSING, P("ntk"), MISSING),
        (8, MISSING, P("linear", factor=0.5), MISSING), (8, MISSING, P("dynamic", factor=0.5), 128),
        (8, MISSING, P("dynamic", factor=0.5), 32), (8, MISSING, P("yarn", factor=0.999), MISSING),
        (8, MISSING, P("llama3", factor=0.5), MISSING), (8, MISSING, P("yarn", factor=0.5, attention_factor=1.0), MISSING),
    ]
    return out, errors


# ---------------------------------------------------------------------------------------- checking
def load(path):
    spec = importlib.util.spec_from_file_location(f"candidate_{abs(hash(path))}", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def same_dict(a, b):
    return (list(a.keys()) == list(b.keys()) and all(a[k] == b[k] and type(a[k]) is type(b[k]) for k in a))


def check_one(fn, D, base, scaling, seq_len, style):
    """None if right, else a message. Returns (message, near_boundary)."""
    before = copy.deepcopy(scaling) if isinstance(scaling, dict) else None
    sc = None if scaling is MISSING else scaling
    T = None if seq_len is MISSING else seq_len
    b = 10000.0 if base is MISSING else base
    want = oracle(D, b, sc, T)
    msg = None
    near = False
    try:
        got = do_call(fn, D, base, scaling, seq_len, style)
        raised = None
    except Exception as exc:  # noqa: BLE001
        raised = exc
    if before is not None and not same_dict(scaling, before):
        msg = f"modified the scaling dict: {before!r} became {scaling!r}"
    elif want is Raise:
        if not isinstance(raised, ValueError):
            msg = "expected ValueError, " + ("returned normally" if raised is None else f"got {type(raised).__name__}: {raised}")
    elif raised is not None:
        msg = f"raised {type(raised).__name__}: {raised}"
    else:
        cands, af, near = want
        if not (isinstance(got, tuple) and len(got) == 2):
            msg = f"return is not a 2-tuple: {type(got).__name__}"
        else:
            inv, a = got
            if not isinstance(inv, torch.Tensor):
                msg = f"inv_freq is {type(inv).__name__}, not a tensor"
            elif inv.dtype != torch.float32 or tuple(inv.shape) != (D // 2,):
                msg = f"inv_freq dtype/shape {inv.dtype} {tuple(inv.shape)}, want float32 ({D // 2},)"
            elif type(a) is not float:
                msg = f"attention_factor is {type(a).__module__}.{type(a).__qualname__}, not a Python float"
            elif not abs(a - af) <= AF_RTOL * max(1.0, abs(af)):
                msg = f"attention_factor {a!r}, spec {af!r}"
            else:
                vals = inv.detach().double().tolist()
                ok = False
                worst = None
                for vec, alt, cond in cands:
                    tol = [RTOL + 4 * EPS32 * (abs(math.log(e)) + (cond[i] if cond else 0.0)) for i, e in enumerate(vec)]
                    bad = [i for i, (x, e) in enumerate(zip(vals, vec))
                           if not (abs(x - e) <= tol[i] * abs(e)
                                   or (alt is not None and abs(x - alt[i]) <= tol[i] * abs(alt[i])))]
                    if not bad:
                        ok = True
                        break
                    if worst is None:
                        worst = (bad, vec, tol)
                if not ok:
                    bad, vec, tol = worst
                    i = bad[0]
                    msg = (f"inv_freq[{i}] = {vals[i]!r}, spec {vec[i]!r} (rel err {abs(vals[i] - vec[i]) / abs(vec[i]):.3g} "
                           f"> tol {tol[i]:.2g}; "
                           f"{len(bad)} of {D // 2} off)\n      got  {[float(f'{v:.6g}') for v in vals[:8]]}\n      spec {[float(f'{v:.6g}') for v in vec[:8]]}")
    return msg, near


def check_file(path, n, seed):
    mod = load(path)
    fn = getattr(mod, "scaled_inv_freq", None)
    if fn is None:
        return [("scaled_inv_freq missing", "")], 0, 0
    failures = []
    sig = inspect.signature(fn)
    params = [(p.name, p.default, p.kind) for p in sig.parameters.values()]
    want = [("head_dim", inspect.Parameter.empty), ("base", 10000.0), ("scaling", None), ("seq_len", None)]
    if [(a, b) for a, b, _ in params] != want or any(k != inspect.Parameter.POSITIONAL_OR_KEYWORD for *_, k in params):
        failures.append(("signature differs from the stub: " + str(sig), ""))
    rng = random.Random(seed)
    ok_cases, err_cases = edge_cases()
    cases = [(c, "positional") for c in ok_cases + err_cases] + [(c, "keyword") for c in ok_cases + err_cases]
    for _ in range(n):
        c = error_case(rng) if rng.random() < 0.12 else random_case(rng)
        cases.append((c, rng.choice(["positional", "keyword", "mixed"])))
    nears = 0
    for (D, base, scaling, seq_len), style in cases:
        shown = call_repr(D, base, scaling, seq_len, style)
        try:
            msg, near = check_one(fn, D, base, scaling, seq_len, style)
        except Exception:  # noqa: BLE001 -- a checker crash is reported, not hidden
            msg, near = "checker crashed:\n" + traceback.format_exc(), False
        nears += near
        if msg:
            failures.append((msg, shown))
    return failures, len(cases), nears


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--n", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=20240607)
    args = ap.parse_args()
    oracle_self_test()
    status = 0
    for path in args.files:
        failures, total, nears = check_file(path, args.n, args.seed)
        name = path.rsplit("/", 1)[-1]
        if not failures:
            print(f"{name}: AGREES with the spec on all {total} cases ({nears} near a discontinuity)")
            continue
        status = 1
        failures.sort(key=lambda f: (len(f[1]), f[1]))  # shortest call first: a small repro
        print(f"{name}: DISAGREES on {len(failures)} of {total} cases")
        for msg, shown in failures[:2]:
            print(f"    {shown}\n      -> {msg}")
    return status


if __name__ == "__main__":
    sys.exit(main())
