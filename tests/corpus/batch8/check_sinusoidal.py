"""Brute-force checker for sinusoidal_encoding, written from the spec (the stub's docstrings) alone.

usage: python check_against_spec.py FILE.py [FILE.py ...]      (exit 1 if any file fails)

Oracle: a plain Python double loop with `math` (float64): w_i = base ** (-2*i/d), angle = p*w_i,
compared against BOTH accepted layouts (interleaved, concatenated); a table passes a case if it
matches one of them everywhere.  For the 100,000-row cases the same formula is evaluated with
numpy float64 (the loop would take too long) -- this is checked to agree with the loop oracle.

Tolerance (|table - oracle| <= tol, elementwise), justified from float32 error analysis:
  The spec lets the angles be computed in float32.  Positions p < 2**24 are exact in float32.
  w_i computed in float32 (pow, or exp(-2i/d * ln base)) has relative error about
  (2 + |ln w_i|) * eps32 (the exp argument itself carries a relative error of a few eps32);
  rounding p*w_i to float32 adds theta*eps32/2; sin/cos add ~1 ulp of the result; the final
  cast to float32 adds <= 6e-8.  So   tol = 2e-6 + 8 * eps32 * theta * (2 + |ln w_i|),
  theta = p * w_i.  At small positions this is ~2e-6 (tight); at p = 1e5 it is ~0.2 at most,
  which is what legal float32 angle arithmetic can produce there.  All bugs are caught at small
  positions where the tolerance is tight.

Further checks (all promises of the spec): shape [seq_len, d_model], dtype float32, finite,
distinct rows for 100,000 positions, default base == 10000.0, the base argument matters,
keyword / positional / int-base calls agree, the output is a fresh tensor (mutating it does not
change later calls), results do not depend on call history, and vectorisation: the number of
Python line events in the submission file and of torch calls must not grow with seq_len.
"""

from __future__ import annotations

import importlib.util
import inspect
import math
import random
import sys
import traceback
from pathlib import Path

import numpy as np
import torch
from torch.overrides import TorchFunctionMode

torch.set_num_threads(1)
EPS32 = float(np.finfo(np.float32).eps)


# ----------------------------------------------------------------------------- oracle
def oracle_loop(seq_len: int, d: int, base: float):
    """(interleaved, concatenated, tol) as float64 numpy arrays, by a plain double loop."""
    half = d // 2
    inter = np.empty((seq_len, d))
    concat = np.empty((seq_len, d))
    tol_pair = np.empty((seq_len, half))
    for p in range(seq_len):
        for i in range(half):
            w = float(base) ** (-2.0 * i / d)
            th = p * w
            s, c = math.sin(th), math.cos(th)
            inter[p, 2 * i], inter[p, 2 * i + 1] = s, c
            concat[p, i], concat[p, half + i] = s, c
            tol_pair[p, i] = 2e-6 + 8 * EPS32 * th * (2 + abs(math.log(w)))
    return inter, concat, tol_pair


def oracle_numpy(seq_len: int, d: int, base: float):
    half = d // 2
    w = np.array([float(base) ** (-2.0 * i / d) for i in range(half)])
    th = np.arange(seq_len, dtype=np.float64)[:, None] * w[None, :]
    s, c = np.sin(th), np.cos(th)
    inter = np.stack([s, c], axis=-1).reshape(seq_len, d)
    concat = np.concatenate([s, c], axis=-1)
    tol_pair = 2e-6 + 8 * EPS32 * th * (2 + np.abs(np.log(w)))[None, :]
    return inter, concat, tol_pair


def expected(seq_len, d, base):
    return (oracle_loop if seq_len * d <= 20000 else oracle_numpy)(seq_len, d, base)


class Fail(Exception):
    pass


def compare(table, seq_len, d, base, what):
    if not isinstance(table, torch.Tensor):
        raise Fail(f"{what}: returned {type(table).__name__}, not a tensor")
    if tuple(table.shape) != (seq_len, d):
        raise Fail(f"{what}: shape {tuple(table.shape)}, spec says {(seq_len, d)}")
    if table.dtype != torch.float32:
        raise Fail(f"{what}: dtype {table.dtype}, spec says float32")
    t = table.detach().double().numpy()
    if not np.isfinite(t).all():
        bad = np.argwhere(~np.isfinite(t))[0]
        raise Fail(f"{what}: non-finite value {t[tuple(bad)]} at {tuple(bad)}")
    inter, concat, tol_pair = expected(seq_len, d, base)
    tol_inter = np.repeat(tol_pair, 2, axis=1)
    tol_concat = np.concatenate([tol_pair, tol_pair], axis=1)
    results = []
    for name, ref, tol in (("interleaved", inter, tol_inter), ("concatenated", concat, tol_concat)):
        err = np.abs(t - ref)
        bad = err > tol
        if not bad.any():
            return name
        idx = tuple(int(k) for k in np.argwhere(bad)[0])
        results.append(f"{name}: at {idx} got {t[idx]:.9g}, spec {ref[idx]:.9g} (|err|={err[idx]:.3g} > tol {tol[idx]:.3g})")
    raise Fail(f"{what}: matches neither layout; " + " | ".join(results))


# ----------------------------------------------------------------------------- vectorisation probe
class _Count(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.n = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.n += 1
        return func(*args, **(kwargs or {}))


def work_count(fn, filename, *args):
    """(python line events inside the submission file, torch function calls) for one call."""
    lines = 0

    def local(frame, event, arg):
        nonlocal lines
        if event == "line":
            lines += 1
        return local

    def glob(frame, event, arg):
        if frame.f_code.co_filename == filename:
            return local
        return None

    mode = _Count()
    sys.settrace(glob)
    try:
        with mode:
            fn(*args)
    finally:
        sys.settrace(None)
    return lines, mode.n


# ----------------------------------------------------------------------------- driver
def load(path: Path):
    spec = importlib.util.spec_from_file_location(f"cand_{path.stem}", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def cases(rng: random.Random):
    bases = [10000.0, 2.0, 10.0, 100.0, 500000.0, 1e6, 1.5, 1.0, 0.5]
    seqs = [1, 2, 3, 4, 5, 7, 16, 33, 100, 257, 1000, 2049, 4097, 5000]
    dims = [2, 4, 6, 8, 10, 12, 14, 30, 64, 66, 128, 130, 512]
    out = [(s, d, b) for s in (1, 2, 3, 7) for d in (2, 4, 6, 8, 10) for b in (10000.0, 100.0, 0.5)]
    for _ in range(120):
        b = rng.choice(bases) if rng.random() < 0.5 else math.exp(rng.uniform(math.log(1.2), math.log(2e6)))
        s = rng.choice(seqs) if rng.random() < 0.6 else rng.randint(1, 3000)
        d = rng.choice(dims) if rng.random() < 0.6 else 2 * rng.randint(1, 150)
        if s * d > 3_000_000:
            d = 2 * max(1, 1_500_000 // s)
        out.append((s, d, b))
    rng.shuffle(out)  # random call history (catches caches keyed wrongly)
    return out


def check_file(path: Path, seed: int = 0, verbose: bool = True) -> list[str]:
    fails: list[str] = []
    mod = load(path)
    f = getattr(mod, "sinusoidal_encoding", None)
    if f is None:
        return ["no sinusoidal_encoding"]
    sig = inspect.signature(f)
    params = list(sig.parameters.values())
    if [p.name for p in params] != ["seq_len", "d_model", "base"] or params[2].default != 10000.0:
        fails.append(f"signature {sig} differs from the stub's")

    def run(label, fn):
        try:
            fn()
        except Fail as e:
            fails.append(f"[{label}] {e}")
        except Exception as e:  # noqa: BLE001
            fails.append(f"[{label}] raised {type(e).__name__}: {e}")

    rng = random.Random(seed)
    layouts = set()

    # 1. values over the domain, in random call order, alternating call styles
    def values():
        for k, (s, d, b) in enumerate(cases(rng)):
            style = k % 4
            if style == 0:
                t = f(s, d, b)
            elif style == 1:
                t = f(seq_len=s, d_model=d, base=b)
            elif style == 2:
                t = f(s, d_model=d, base=float(b))
            else:
                t = f(d_model=d, seq_len=s, base=b)
            lay = compare(t, s, d, b, f"f({s}, {d}, base={b!r})")
            if d > 2:
                layouts.add(lay)
    run("values", values)

    # 2. default base, int base, keyword base, all equal to base=10000.0
    def defaults():
        for s, d in ((1, 2), (5, 6), (37, 64), (300, 10)):
            ref = f(s, d, 10000.0)
            compare(ref, s, d, 10000.0, f"f({s}, {d}, 10000.0)")
            for label, t in (("default", f(s, d)), ("int base 10000", f(s, d, 10000)), ("kw", f(s, d, base=10000.0))):
                compare(t, s, d, 10000.0, f"f({s}, {d}) [{label}]")
        # int bases other than the default
        for b in (100, 2, 500000):
            compare(f(9, 8, b), 9, 8, float(b), f"f(9, 8, {b}) [int base]")
    run("defaults/int base", defaults)

    # 3. the base argument matters, whatever was called before
    def base_matters():
        for b1, b2 in ((10000.0, 100.0), (100.0, 10000.0), (10000.0, 10000.5), (2.0, 1e6)):
            t1 = f(6, 4, b1)
            t2 = f(6, 4, b2)
            compare(t1, 6, 4, b1, f"f(6, 4, {b1}) [then base {b2}]")
            compare(t2, 6, 4, b2, f"f(6, 4, {b2}) [after base {b1}]")
    run("base matters", base_matters)

    # 4. a fresh tensor each call: mutating the result does not change later results
    def fresh():
        for s, d in ((4, 4), (10, 8), (3000, 6)):
            t = f(s, d)
            t.mul_(0).add_(7.0)
            compare(f(s, d), s, d, 10000.0, f"f({s}, {d}) after the caller overwrote an earlier result")
            compare(f(2, d), 2, d, 10000.0, f"f(2, {d}) after the caller overwrote an earlier result")
    run("fresh output", fresh)

    # 5. large tables: finite, distinct rows, correct values, for 100,000 positions
    def large():
        for d, b in ((2, 10000.0), (4, 10000.0), (64, 10000.0), (6, 500000.0), (2, 100.0)):
            s = 100_000
            t = f(s, d, b)
            compare(t, s, d, b, f"f({s}, {d}, {b})")
            n_unique = torch.unique(t, dim=0).shape[0]
            if n_unique != s:
                u, inv, cnt = torch.unique(t, dim=0, return_inverse=True, return_counts=True)
                dup = int(torch.nonzero(cnt[inv] > 1)[0])
                raise Fail(f"f({s}, {d}, {b}): only {n_unique} distinct rows of {s} (row {dup} repeats)")
    run("100k positions", large)

    # 6. vectorised: no Python loop over positions
    def vectorised():
        fn = str(path.resolve())
        f(16, 8)
        f(8192, 8)  # warm any cache for both sizes
        small = work_count(f, fn, 16, 8)
        f(12000, 8)
        big = work_count(f, fn, 12000, 8)
        grown = (big[0] - small[0], big[1] - small[1])
        if grown[0] > 100 or grown[1] > 100:
            raise Fail(f"work grows with seq_len: (line events, torch calls) = {small} at seq_len=16, {big} at seq_len=12000")
    run("vectorised", vectorised)

    # 7. deterministic
    def deterministic():
        a, b = f(50, 12, 321.0), f(50, 12, 321.0)
        if not torch.equal(a, b):
            raise Fail("two identical calls differ")
    run("deterministic", deterministic)

    if verbose:
        status = "PASS" if not fails else "FAIL"
        print(f"{status} {path.name}  layouts seen: {sorted(layouts) or '-'}")
        for msg in fails:
            print("    " + msg[:600])
    return fails


def informational(path: Path):
    """Outside the clear domain (see README ambiguities): reported, not graded."""
    mod = load(path)
    f = mod.sinusoidal_encoding
    notes = []
    try:
        t = f(0, 8)
        notes.append(f"seq_len=0 -> shape {tuple(t.shape)} {t.dtype}")
    except Exception as e:  # noqa: BLE001
        notes.append(f"seq_len=0 -> {type(e).__name__}")
    old = torch.get_default_dtype()
    try:
        torch.set_default_dtype(torch.float64)
        t = f(3, 4)
        notes.append(f"default dtype float64 -> {t.dtype}")
    except Exception as e:  # noqa: BLE001
        notes.append(f"default dtype float64 -> {type(e).__name__}")
    finally:
        torch.set_default_dtype(old)
    t = f(5, 8)
    notes.append(f"contiguous={t.is_contiguous()}")
    print("    info: " + "; ".join(notes))


def self_test():
    """The numpy oracle agrees with the loop oracle."""
    for s, d, b in ((50, 8, 10000.0), (7, 130, 2.5), (300, 6, 1e6), (20, 10, 0.5)):
        for a, c in zip(oracle_loop(s, d, b), oracle_numpy(s, d, b)):
            assert np.allclose(a, c, rtol=0, atol=1e-12), (s, d, b)


if __name__ == "__main__":
    self_test()
    bad = 0
    for arg in sys.argv[1:]:
        try:
            fails = check_file(Path(arg))
            informational(Path(arg))
        except Exception:  # noqa: BLE001
            traceback.print_exc()
            fails = ["crashed"]
        bad += bool(fails)
    sys.exit(1 if bad else 0)
