"""Brute-force checker for alibi.py submissions, written from the stub's docstrings alone.

Usage:  python check_against_spec.py [file.py ...]      (default: correct/*.py and bugs/*.py)

Oracle
  * slopes: exponents as exact Fractions straight from the spec's words (power of two:
    -8 (h+1) / n; otherwise the c slopes for c heads then [0::2][: n - c] of the 2c-head list, with
    c the largest power of two below n), and 2^e evaluated in 50-digit Decimal arithmetic.
  * bias: -m_h (i - j) with the exact slope; for T <= 24 by a plain triple loop over (h, i, j) in
    Decimal, otherwise vectorised in float64 (relative error ~1e-16, negligible next to float32's).

Tolerances (justified from float32 error)
  * slopes: |got - exact| <= 2 float32 ulps of the exact value.  A correctly rounded float32 is within
    0.5 ulp; computing in float64 then casting, or via a float32 exp2 good to 1 ulp, stays within 1.5 ulp.
  * bias, keys j < i: |got - exact| <= 2^-21 |exact| (4 float32 ulps relative): the float32 slope may be
    off by up to 2 ulps (as allowed above) and the product m * (i - j) adds 0.5 ulp of rounding;
    i - j itself is an integer < 2^24, exact in float32.  Every wrong slope / distance seen so far is
    off by far more (>= 1e-3 relative).
  * diagonal: exactly 0 (the spec says 0; -0.0 compares equal to 0 and is accepted).
  * keys j > i: -inf, or finite and <= -1e4; never NaN / +inf; softmax over keys (alone and after adding
    random scores of std 5) must give those keys weight exactly 0.
Other promises checked: float32 dtype, shape [n_heads] / [n_heads, T, T], CPU, keyword arguments by the
stub's names, every call gives the spec's answer even after the caller edited an earlier result in
place, and vectorisation (alibi_bias(8, 1024) in well under the time a Python (i, j) loop takes).
"""

from __future__ import annotations

import importlib.util
import random
import sys
import time
from decimal import Decimal, getcontext
from fractions import Fraction
from functools import lru_cache
from pathlib import Path

import numpy as np
import torch

torch.set_num_threads(1)
getcontext().prec = 50
HERE = Path(__file__).resolve().parent
SLOPE_ULPS = 2
BIAS_REL = 2.0**-21


# ----------------------------------------------------------------------------- the spec, exactly
def _power_of_two_exponents(k: int) -> list[Fraction]:
    return [Fraction(-8 * (h + 1), k) for h in range(k)]


@lru_cache(maxsize=None)
def spec_exponents(n: int) -> tuple[Fraction, ...]:
    if n & (n - 1) == 0:  # n a power of two (n >= 1)
        return tuple(_power_of_two_exponents(n))
    c = 1
    while 2 * c < n:  # the largest power of two below n
        c *= 2
    every_other = _power_of_two_exponents(2 * c)[0::2]  # the 1st, 3rd, 5th, ...
    return tuple(_power_of_two_exponents(c) + every_other[: n - c])


@lru_cache(maxsize=None)
def spec_slopes_dec(n: int) -> tuple[Decimal, ...]:
    return tuple(Decimal(2) ** (Decimal(e.numerator) / Decimal(e.denominator)) for e in spec_exponents(n))


def spec_slopes(n: int) -> np.ndarray:
    return np.array([float(x) for x in spec_slopes_dec(n)], dtype=np.float64)


def spec_bias_lower(n: int, T: int) -> np.ndarray:
    """float64 [n, T, T] with -m (i - j) below/on the diagonal and NaN above (checked separately)."""
    if T <= 24:  # slow oracle: a plain loop, exact Decimal products
        m = spec_slopes_dec(n)
        out = np.full((n, T, T), np.nan)
        for h in range(n):
            for i in range(T):
                for j in range(i + 1):
                    out[h, i, j] = float(-m[h] * (i - j))
        return out
    m = spec_slopes(n)[:, None, None]
    i = np.arange(T)[None, :, None]
    j = np.arange(T)[None, None, :]
    return np.where(j <= i, -m * (i - j), np.nan)


# ----------------------------------------------------------------------------- harness
class Failure(Exception):
    pass


def load(path: Path):
    spec = importlib.util.spec_from_file_location(f"sub_{path.stem}", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def _tensor(x, what):
    if not isinstance(x, torch.Tensor):
        raise Failure(f"{what} returned {type(x).__name__}, not a torch.Tensor")
    return x


def check_slopes(mod, n: int) -> None:
    call = f"alibi_slopes({n})"
    s = _tensor(mod.alibi_slopes(n), call)
    if s.dtype != torch.float32:
        raise Failure(f"{call}.dtype = {s.dtype}, spec: float32")
    if tuple(s.shape) != (n,):
        raise Failure(f"{call}.shape = {tuple(s.shape)}, spec: ({n},)")
    if s.device.type != "cpu":
        raise Failure(f"{call} on {s.device}")
    got = s.detach().double().numpy()
    want = spec_slopes(n)
    tol = SLOPE_ULPS * np.spacing(want.astype(np.float32)).astype(np.float64)
    bad = np.nonzero(~(np.abs(got - want) <= tol))[0]
    if bad.size:
        h = int(bad[0])
        raise Failure(f"{call}[{h}] = {got[h]!r}, spec: 2^({spec_exponents(n)[h]}) = {want[h]!r}")
    kw = mod.alibi_slopes(n_heads=n)
    if not torch.equal(kw, s):
        raise Failure(f"alibi_slopes(n_heads={n}) differs from alibi_slopes({n})")
    try:  # the caller edits its result in place; the next call must still follow the spec
        s.fill_(123.0)
        kw.fill_(123.0)
    except RuntimeError:
        return
    again = mod.alibi_slopes(n).detach().double().numpy()
    if again.shape != want.shape or not (np.abs(again - want) <= tol).all():
        raise Failure(f"after `s = alibi_slopes({n}); s.fill_(123.)`, alibi_slopes({n}) = {again[:4]}..., "
                      f"spec: {want[:4]}...")


def check_bias(mod, n: int, T: int, gen: torch.Generator) -> None:
    call = f"alibi_bias({n}, {T})"
    b = _tensor(mod.alibi_bias(n, T), call)
    if b.dtype != torch.float32:
        raise Failure(f"{call}.dtype = {b.dtype}, spec: float32")
    if tuple(b.shape) != (n, T, T):
        raise Failure(f"{call}.shape = {tuple(b.shape)}, spec: ({n}, {T}, {T})")
    if b.device.type != "cpu":
        raise Failure(f"{call} on {b.device}")
    got = b.detach().double().numpy()
    want = spec_bias_lower(n, T)
    lower = np.tril(np.ones((T, T), dtype=bool))[None].repeat(n, 0)
    diag = np.eye(T, dtype=bool)[None].repeat(n, 0)
    # diagonal: exactly 0
    bad = np.argwhere(diag & (got != 0))
    if bad.size:
        h, i, j = map(int, bad[0])
        raise Failure(f"{call}[{h},{i},{j}] = {got[h, i, j]!r}, spec: 0 (diagonal)")
    # keys behind: -m (i - j)
    err = np.abs(got - want)
    bad = np.argwhere(lower & ~(err <= BIAS_REL * np.abs(want)))
    if bad.size:
        h, i, j = map(int, bad[0])
        raise Failure(f"{call}[{h},{i},{j}] = {got[h, i, j]!r}, spec: -m_{h}*({i}-{j}) = {want[h, i, j]!r}")
    # keys ahead: -inf or finite <= -1e4
    up = ~lower
    ok = np.isneginf(got) | (np.isfinite(got) & (got <= -1e4))
    bad = np.argwhere(up & ~ok)
    if bad.size:
        h, i, j = map(int, bad[0])
        raise Failure(f"{call}[{h},{i},{j}] = {got[h, i, j]!r} (key ahead of query), spec: -inf or <= -1e4")
    # attention gives the future weight exactly 0 (bias alone, and with random scores)
    up_t = torch.from_numpy(up)
    scores = torch.randn(n, T, T, generator=gen) * 5
    for name, logits in (("softmax(bias)", b.detach()), ("softmax(scores + bias)", scores + b.detach())):
        w = torch.softmax(logits, dim=-1)
        if torch.isnan(w).any():
            raise Failure(f"{name} for {call} has NaN")
        if (w[up_t] != 0).any():
            h, i, j = map(int, torch.nonzero(up_t & (w != 0))[0])
            raise Failure(f"{name} for {call}: weight {w[h, i, j].item()!r} on future key [{h},{i},{j}], spec: 0")
    kw = mod.alibi_bias(n_heads=n, seq_len=T)
    if not torch.equal(kw, b):
        raise Failure(f"alibi_bias(n_heads={n}, seq_len={T}) differs from {call}")
    try:
        b.fill_(7.0)
        kw.fill_(7.0)
    except RuntimeError:
        return
    again = mod.alibi_bias(n, T).detach().double().numpy()
    if again.shape != got.shape or not np.array_equal(np.nan_to_num(again), np.nan_to_num(got)):
        raise Failure(f"after `b = {call}; b.fill_(7.)`, {call} changed")


SLOPE_CASES = list(range(1, 81)) + [96, 100, 127, 128, 129, 255, 256, 257, 500, 511, 512, 513,
                                    1000, 1023, 1024, 1025, 2047, 2048, 2049, 4096, 4097]
_rng = random.Random(20240613)
BIAS_CASES = sorted(
    {(n, T) for n in (1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 17, 24, 32, 33, 64)
     for T in (1, 2, 3, 4, 5, 7, 8, 16, 24, 31, 64, 100)}
    | {(_rng.randint(1, 48), _rng.randint(1, 160)) for _ in range(25)}
    | {(1, 258), (2, 300), (3, 513), (12, 260), (1, 2049), (1, 3000)},
    key=lambda c: (c[0] * c[1] * c[1], c),
)


def run(path: Path) -> list[str]:
    failures: list[str] = []
    try:
        mod = load(path)
    except Exception as exc:  # noqa: BLE001
        return [f"import: {exc!r}"]
    seen: set[str] = set()

    def attempt(kind: str, fn, *args):
        if kind in seen:  # report only the smallest failing case of each kind
            return
        try:
            fn(mod, *args)
        except Failure as exc:
            seen.add(kind)
            failures.append(f"{kind}: {exc}")
        except Exception as exc:  # noqa: BLE001
            seen.add(kind)
            failures.append(f"{kind}: {fn.__name__}{args[:2]} raised {exc!r}")

    for n in SLOPE_CASES:
        attempt("slopes", check_slopes, n)
    gen = torch.Generator().manual_seed(0)
    for n, T in BIAS_CASES:
        attempt("bias", check_bias, n, T, gen)
    if "bias" not in seen:  # vectorised: a Python loop over (i, j) takes many seconds here
        t0 = time.perf_counter()
        mod.alibi_bias(8, 1024)
        dt = time.perf_counter() - t0
        if dt > 5.0:
            failures.append(f"vectorised: alibi_bias(8, 1024) took {dt:.1f} s")
    return failures


def info(path: Path) -> str:
    """Out-of-domain behaviour (n_heads = 0, seq_len = 0): reported, not judged."""
    mod = load(path)
    out = []
    for call in ("alibi_slopes(0)", "alibi_bias(2, 0)"):
        try:
            r = eval(f"mod.{call}")
            out.append(f"{call} -> shape {tuple(r.shape)}")
        except Exception as exc:  # noqa: BLE001
            out.append(f"{call} -> {type(exc).__name__}")
    return "; ".join(out)


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or sorted((HERE / "correct").glob("*.py")) + sorted((HERE / "bugs").glob("*.py"))
    worst = 0
    for path in paths:
        t0 = time.perf_counter()
        failures = run(path)
        verdict = "AGREES with spec" if not failures else "DISAGREES"
        print(f"{path.name}: {verdict}  ({time.perf_counter() - t0:.1f} s)   [info: {info(path)}]")
        for f in failures:
            print("    -", f)
        worst = max(worst, bool(failures))
    return worst


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
