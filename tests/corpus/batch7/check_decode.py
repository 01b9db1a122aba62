"""Brute-force checker for `decode`, written from the stub's docstring alone.

    python check_against_spec.py FILE.py [FILE.py ...] [--cases N] [--seed S] [--lenient-angles]

For every file: the signature must be the stub's; then many random cases over the spec's whole domain
(float32 / float64; B, H, T, D from 1 / 2 up, D/2 odd and even; P = 1 .. T; both cache modes; window None,
1, small, = T, > T; left padding with bool / int64 / int32 masks; position_ids None / int64 / int32, shifted,
repeated, unsorted, negative, large; both pairings; several bases, int or float; contiguous and
non-contiguous inputs: token-major transposes, strided last dims, stride-0 expanded batches, a last dim
that is not unit-stride; input magnitudes 0.01, 1 and 10) are compared with a slow oracle: Python
floats for every angle (math.cos / math.sin of p * base^(-2i/D)), numpy float64 per-token loops for the
scores and a max-subtracted softmax over exactly the keys the spec lists (s <= t, s > t - W, not padding).

Checked, per call: a (out, cached_keys) pair of tensors; shapes [B, H, T, D] and [B, H, S, D] with
S = T or min(W, T); both of q's dtype; every entry of a real (non-padding) token finite and within the
tolerance below (entries of padding tokens, in out and in cached_keys, are skipped as the spec says);
q, k, v, attention_mask, position_ids unchanged after the call.

Tolerance (absolute, per case), from the rounding of the dtype the results are stored in (eps = 2^-23 for
float32, 2^-52 for float64), with a safety factor 4 on top of first-order bounds:
- angle error  e_a = 4 * eps64 * max(1, max|p|)   (p * theta_i and cos/sin in float64: the spec's
  rotation is by the exact integer position; --lenient-angles uses the stored dtype's eps instead, to
  accept implementations that form p * theta in float32)
- a rotated key entry a cos - b sin: |error| <= (|a| + |b|) (3 eps + e_a)
  -> tol_keys = 4 * 2 * max|k| * (3 eps + e_a)
- a score <Rq, Rk> / sqrt(D): |error| <= |q| |k| / sqrt(D) * (D eps + 2 (3 eps + e_a))   = ds
  softmax weights move by at most 2 ds in l1; the weighted sum adds (n + 4) eps relative rounding
  -> tol_out = 4 * max|v| * (2 ds + (T + 4) eps)
The oracle's own error is of the float64 order and is covered by the same bounds.

Exit status 0 when every file agrees with the spec on every case; the smallest failing case of each file
is printed as a repro.
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import math
import sys
import traceback
from pathlib import Path

import numpy as np
import torch

torch.set_num_threads(1)

EPS = {torch.float32: 2.0**-23, torch.float64: 2.0**-52}
EPS64 = 2.0**-52
STATS = False
RATIOS: dict = {}  # dtype -> max(|err| / tol) per passing-shape case, for --stats


# ----------------------------------------------------------------------------------------------- the oracle


def oracle(q, k, v, P, *, cache="rotated", window=None, attention_mask=None, position_ids=None, pairing="half",
           base=10000.0):
    """(out [B,H,T,D], cached [B,H,S,D], out_checked [B,T] bool, cache_checked [B,S] bool, positions [B][T]),
    numpy float64, straight from the docstring."""
    qn, kn, vn = (x.detach().to(torch.float64).numpy().copy() for x in (q, k, v))
    B, H, T, D = qn.shape
    real = np.ones((B, T), dtype=bool)
    if attention_mask is not None:
        real[:, :P] = attention_mask.detach().numpy() != 0
    positions = [[0] * T for _ in range(B)]
    for b in range(B):
        for t in range(T):
            if position_ids is not None:
                positions[b][t] = int(position_ids[b, t])
            elif attention_mask is not None:
                positions[b][t] = int(real[b, :t].sum())  # a token after j real tokens is at j
            else:
                positions[b][t] = t
    theta = [float(base) ** (-2.0 * i / D) for i in range(D // 2)]
    if pairing == "interleaved":
        pairs = [(2 * i, 2 * i + 1) for i in range(D // 2)]
    else:
        pairs = [(i, i + D // 2) for i in range(D // 2)]

    def rot(x, p):  # x [H, D]: pair i turned counter-clockwise by p * theta_i
        y = x.copy()
        for i, (a, c) in enumerate(pairs):
            ang = p * theta[i]
            cs, sn = math.cos(ang), math.sin(ang)
            y[:, a] = x[:, a] * cs - x[:, c] * sn
            y[:, c] = x[:, a] * sn + x[:, c] * cs
        return y

    rq = np.zeros_like(qn)
    rk = np.zeros_like(kn)
    for b in range(B):
        for t in range(T):
            rq[b, :, t] = rot(qn[b, :, t], positions[b][t])
            rk[b, :, t] = rot(kn[b, :, t], positions[b][t])
    out = np.zeros_like(qn)
    for b in range(B):
        for t in range(T):
            if not real[b, t]:
                continue
            keys = [s for s in range(t + 1) if real[b, s] and (window is None or s > t - window)]
            sc = np.einsum("hd,hnd->hn", rq[b, :, t], rk[b][:, keys]) / math.sqrt(D)
            sc = sc - sc.max(axis=1, keepdims=True)
            w = np.exp(sc)
            w = w / w.sum(axis=1, keepdims=True)
            out[b, :, t] = np.einsum("hn,hnd->hd", w, vn[b][:, keys])
    S = T if window is None else min(window, T)
    idx = list(range(T - S, T))
    cached = (rk if cache == "rotated" else kn)[:, :, idx]
    return out, cached, real, real[:, idx], positions


# ------------------------------------------------------------------------------------------- input builders


def _tensor(gen, shape, layout, dtype, scale):
    B, H, T, D = shape
    if layout == "contiguous":
        x = torch.randn(B, H, T, D, generator=gen, dtype=torch.float64)
    elif layout == "token_major":  # [B, T, H, D] transposed: a view, not contiguous
        x = torch.randn(B, T, H, D, generator=gen, dtype=torch.float64).transpose(1, 2)
    elif layout == "strided_last":  # every other feature of a wider tensor
        x = torch.randn(B, H, T, 2 * D, generator=gen, dtype=torch.float64)[..., ::2]
    elif layout == "feature_major":  # [B, H, D, T] transposed: the last dim has stride T
        x = torch.randn(B, H, D, T, generator=gen, dtype=torch.float64).transpose(2, 3)
    elif layout == "expanded":  # stride 0 along the batch
        x = torch.randn(1, H, T, D, generator=gen, dtype=torch.float64).expand(B, H, T, D)
    else:
        raise ValueError(layout)
    if layout == "expanded":
        return (x[:1] * scale).to(dtype).expand(B, H, T, D)
    y = (x * scale).to(dtype)
    # keep the same non-contiguous layout after the dtype cast / scaling
    if layout == "token_major":
        y = y.transpose(1, 2).contiguous().transpose(1, 2)
    elif layout == "strided_last":
        wide = torch.zeros(B, H, T, 2 * D, dtype=dtype)
        wide[..., ::2] = y
        y = wide[..., ::2]
    elif layout == "feature_major":
        y = y.transpose(2, 3).contiguous().transpose(2, 3)
    return y


def random_case(rng: np.random.Generator, gen: torch.Generator, size_hint: str = "small") -> dict:
    dtype = [torch.float32, torch.float64][rng.integers(2)]
    if size_hint == "small":
        B, H = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        T = int(rng.choice([1, 1, 2, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12]))
        D = int(rng.choice([2, 4, 6, 8, 10, 16]))
    else:
        B, H = int(rng.integers(1, 3)), int(rng.integers(1, 3))
        T = int(rng.choice([17, 24, 33]))
        D = int(rng.choice([32, 64]))
    P = int(rng.choice([1, T, int(rng.integers(1, T + 1)), int(rng.integers(1, T + 1))]))
    wchoice = rng.integers(7)
    window = [None, None, 1, 2, int(rng.integers(1, T + 1)), T, T + int(rng.integers(1, 4))][wchoice]
    layout = str(rng.choice(["contiguous", "contiguous", "token_major", "strided_last", "feature_major", "expanded"]))
    scale = float(rng.choice([1.0, 1.0, 1.0, 0.01, 10.0]))
    q, k, v = (_tensor(gen, (B, H, T, D), layout, dtype, scale) for _ in range(3))

    mask = None
    if rng.random() < 0.45:
        n_pad = [int(rng.integers(0, P)) for _ in range(B)]  # at least one real token per row
        if rng.random() < 0.5 and P > 1:
            n_pad[int(rng.integers(B))] = P - 1  # a row with a single real token
        m = torch.tensor([[0] * n + [1] * (P - n) for n in n_pad])
        mdt = [torch.bool, torch.int64, torch.int32][rng.integers(3)]
        m = m.to(mdt)
        if rng.random() < 0.3:
            m = m.t().contiguous().t()  # a non-contiguous mask
        mask = m
    pos = None
    if rng.random() < 0.45:
        kind = rng.integers(6)
        if kind == 0:  # shifted per row
            base_pos = torch.arange(T)[None] + torch.tensor(rng.integers(0, 1000, size=(B, 1)))
        elif kind == 1:  # random, with repeats, unsorted
            base_pos = torch.tensor(rng.integers(0, 50, size=(B, T)))
        elif kind == 2:  # negative allowed by "an integer tensor"
            base_pos = torch.tensor(rng.integers(-300, 300, size=(B, T)))
        elif kind == 3:  # all zero
            base_pos = torch.zeros(B, T, dtype=torch.long)
        elif kind == 4:  # HF style with a mask: cumsum - 1, padding at 1
            if mask is not None:
                full = torch.ones(B, T, dtype=torch.long)
                full[:, :P] = (mask != 0).long()
                base_pos = (full.cumsum(-1) - 1).masked_fill(full == 0, 1)
            else:
                base_pos = torch.arange(T).expand(B, T).clone()
        else:  # moderately large
            base_pos = torch.arange(T)[None] + torch.tensor(rng.integers(0, 20000, size=(B, 1)))
        pdt = [torch.int64, torch.int32][rng.integers(2)]
        pos = base_pos.to(pdt)
        if rng.random() < 0.3:
            pos = pos.t().contiguous().t()
    case = dict(q=q, k=k, v=v, P=P, cache=str(rng.choice(["rotated", "raw"])), window=window,
                attention_mask=mask, position_ids=pos, pairing=str(rng.choice(["interleaved", "half"])),
                base=[10000.0, 10000.0, 500000.0, 10.0, 2.0, 1.0, 100, 1e6][rng.integers(8)],
                layout=layout, scale=scale)
    return case


def edge_cases() -> list[dict]:
    """Hand-picked corners, deterministic."""
    gen = torch.Generator().manual_seed(1234)
    out = []

    def mk(B, H, T, D, P, dtype=torch.float32, layout="contiguous", **kw):
        q, k, v = (_tensor(gen, (B, H, T, D), layout, dtype, 1.0) for _ in range(3))
        d = dict(q=q, k=k, v=v, P=P, cache="rotated", window=None, attention_mask=None, position_ids=None,
                 pairing="half", base=10000.0, layout=layout, scale=1.0)
        d.update(kw)
        return d

    for dtype in (torch.float32, torch.float64):
        for cache in ("rotated", "raw"):
            for pairing in ("half", "interleaved"):
                out += [
                    mk(1, 1, 1, 2, 1, dtype, cache=cache, pairing=pairing),
                    mk(1, 1, 5, 2, 1, dtype, cache=cache, pairing=pairing),
                    mk(2, 2, 6, 6, 6, dtype, cache=cache, pairing=pairing, window=2),
                    mk(2, 1, 7, 4, 3, dtype, cache=cache, pairing=pairing, window=3,
                       attention_mask=torch.tensor([[0, 0, 1], [1, 1, 1]])),
                    mk(2, 2, 8, 8, 4, dtype, cache=cache, pairing=pairing, window=5,
                       attention_mask=torch.tensor([[False, False, False, True], [False, True, True, True]])),
                    mk(1, 2, 6, 8, 2, dtype, cache=cache, pairing=pairing,
                       position_ids=torch.tensor([[7, 3, 3, 0, -2, 40]])),
                    mk(2, 1, 6, 4, 3, dtype, cache=cache, pairing=pairing,
                       attention_mask=torch.tensor([[0, 1, 1], [1, 1, 1]]),
                       position_ids=torch.tensor([[1, 0, 1, 2, 3, 4], [5, 6, 7, 8, 9, 10]])),
                    mk(1, 1, 9, 10, 4, dtype, cache=cache, pairing=pairing, window=4, base=500000.0,
                       layout="feature_major"),
                    mk(2, 3, 5, 4, 2, dtype, cache=cache, pairing=pairing, window=9, layout="expanded"),
                ]
    # large positions (precision of the angles)
    for dtype in (torch.float32, torch.float64):
        out.append(mk(1, 2, 5, 8, 2, dtype, position_ids=torch.tensor([[10**6, 10**6 + 1, 10**6 + 2, 10**6 + 3,
                                                                         10**6 + 4]])))
        out.append(mk(1, 1, 4, 4, 2, dtype, cache="raw", position_ids=torch.tensor([[2**31 - 4, 2**31 - 3,
                                                                                       2**31 - 2, 2**31 - 1]])))
    return out


# ----------------------------------------------------------------------------------------------- checking


STUB_PARAMS = [
    ("q", inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.empty),
    ("k", inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.empty),
    ("v", inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.empty),
    ("prompt_len", inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.empty),
    ("cache", inspect.Parameter.KEYWORD_ONLY, "rotated"),
    ("window", inspect.Parameter.KEYWORD_ONLY, None),
    ("attention_mask", inspect.Parameter.KEYWORD_ONLY, None),
    ("position_ids", inspect.Parameter.KEYWORD_ONLY, None),
    ("pairing", inspect.Parameter.KEYWORD_ONLY, "half"),
    ("base", inspect.Parameter.KEYWORD_ONLY, 10000.0),
]


def load(path: str):
    spec = importlib.util.spec_from_file_location(f"cand_{Path(path).stem}", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def check_signature(fn) -> str | None:
    params = list(inspect.signature(fn).parameters.values())
    got = [(p.name, p.kind, p.default) for p in params]
    if got != STUB_PARAMS:
        return f"signature differs from the stub: {got}"
    return None


def describe(case: dict) -> str:
    q = case["q"]
    B, H, T, D = q.shape
    bits = [f"B={B} H={H} T={T} D={D} P={case['P']} dtype={str(q.dtype).replace('torch.', '')}",
            f"layout={case['layout']} scale={case['scale']}", f"cache={case['cache']!r}", f"window={case['window']}",
            f"pairing={case['pairing']!r}", f"base={case['base']!r}"]
    if case["attention_mask"] is not None:
        m = case["attention_mask"]
        bits.append(f"attention_mask({str(m.dtype).replace('torch.', '')})={m.int().tolist()}")
    if case["position_ids"] is not None:
        p = case["position_ids"]
        bits.append(f"position_ids({str(p.dtype).replace('torch.', '')})={p.tolist()}")
    return ", ".join(bits)


def tolerances(case: dict, positions, lenient: bool) -> tuple[float, float]:
    q, k, v = (case[n].detach().to(torch.float64) for n in ("q", "k", "v"))
    T, D = q.shape[2], q.shape[3]
    eps = EPS[case["q"].dtype]
    pmax = max(1, max(abs(p) for row in positions for p in row))
    e_a = 4 * (eps if lenient else EPS64) * pmax
    e_rot = 3 * eps + e_a
    kmax = float(k.abs().max())
    vmax = float(v.abs().max())
    qk = float(q.norm(dim=-1).max() * k.norm(dim=-1).max())
    ds = qk / math.sqrt(D) * (D * eps + 2 * e_rot)
    tol_out = 4 * vmax * (2 * ds + (T + 4) * eps) + 1e-300
    tol_keys = 4 * 2 * kmax * e_rot + 1e-300
    return tol_out, tol_keys


def run_case(fn, case: dict, lenient: bool, omit_defaults: bool) -> str | None:
    """None when the file agrees with the spec on this case, else what is wrong."""
    names = ("q", "k", "v", "attention_mask", "position_ids")
    before = {n: (None if case[n] is None else case[n].clone()) for n in names}
    kwargs = dict(cache=case["cache"], window=case["window"], attention_mask=case["attention_mask"],
                  position_ids=case["position_ids"], pairing=case["pairing"], base=case["base"])
    if omit_defaults:  # rely on the file's own defaults where the case uses the stub's
        defaults = dict(cache="rotated", window=None, attention_mask=None, position_ids=None, pairing="half",
                        base=10000.0)
        kwargs = {n: val for n, val in kwargs.items() if not (val is defaults[n] or (
            isinstance(val, (str, float)) and type(val) is type(defaults[n]) and val == defaults[n]))}
    try:
        result = fn(case["q"], case["k"], case["v"], case["P"], **kwargs)
    except Exception as exc:  # noqa: BLE001
        return f"raised {type(exc).__name__}: {exc}".splitlines()[0][:300]
    for n in names:
        now = case[n]
        if now is not None and not torch.equal(now, before[n]):
            return f"modified its input {n} in place"
    if not (isinstance(result, tuple) and len(result) == 2 and all(isinstance(x, torch.Tensor) for x in result)):
        return f"did not return a pair of tensors: {type(result)}"
    out, cached = result
    exp_out, exp_cached, out_checked, cache_checked, positions = oracle(
        case["q"], case["k"], case["v"], case["P"], cache=case["cache"], window=case["window"],
        attention_mask=case["attention_mask"], position_ids=case["position_ids"], pairing=case["pairing"],
        base=case["base"])
    if tuple(out.shape) != exp_out.shape:
        return f"out shape {tuple(out.shape)} != {exp_out.shape}"
    if tuple(cached.shape) != exp_cached.shape:
        return f"cached_keys shape {tuple(cached.shape)} != {exp_cached.shape}"
    if out.dtype != case["q"].dtype or cached.dtype != case["q"].dtype:
        return f"dtypes {out.dtype}, {cached.dtype} != q's {case['q'].dtype}"
    tol_out, tol_keys = tolerances(case, positions, lenient)
    got_out_ = out.detach().to(torch.float64).numpy()
    got_cached_ = cached.detach().to(torch.float64).numpy()
    with np.errstate(invalid="ignore"):
        r_out = float(np.max(np.where(out_checked[:, None, :, None], np.abs(got_out_ - exp_out), 0.0))) / tol_out
        r_key = float(np.max(np.where(cache_checked[:, None, :, None], np.abs(got_cached_ - exp_cached), 0.0))) / tol_keys
    RATIOS.setdefault(case["q"].dtype, []).append(max(r_out, r_key))
    got_out = out.detach().to(torch.float64).numpy()
    got_cached = cached.detach().to(torch.float64).numpy()
    sel = out_checked[:, None, :, None] & np.ones_like(exp_out, dtype=bool)
    err = np.where(sel, np.abs(got_out - exp_out), 0.0)
    err = np.where(sel & ~np.isfinite(got_out), np.inf, err)
    if err.max() > tol_out:
        b, h, t, d = np.unravel_index(int(err.argmax()), err.shape)
        return (f"out[{b},{h},{t},{d}] = {got_out[b, h, t, d]!r}, spec {exp_out[b, h, t, d]!r} "
                f"(|err| {err.max():.3g} > tol {tol_out:.3g})")
    sel = cache_checked[:, None, :, None] & np.ones_like(exp_cached, dtype=bool)
    err = np.where(sel, np.abs(got_cached - exp_cached), 0.0)
    err = np.where(sel & ~np.isfinite(got_cached), np.inf, err)
    if err.max() > tol_keys:
        b, h, s, d = np.unravel_index(int(err.argmax()), err.shape)
        return (f"cached_keys[{b},{h},{s},{d}] = {got_cached[b, h, s, d]!r}, spec {exp_cached[b, h, s, d]!r} "
                f"(|err| {err.max():.3g} > tol {tol_keys:.3g})")
    return None


def check_file(path: str, n_cases: int, seed: int, lenient: bool, verbose: bool = True) -> bool:
    mod = load(path)
    fn = getattr(mod, "decode", None)
    if fn is None:
        print(f"{path}: FAIL no decode")
        return False
    problems = []
    sig = check_signature(fn)
    if sig:
        problems.append((0, "signature", sig))
    cases = edge_cases()
    rng = np.random.default_rng(seed)
    gen = torch.Generator().manual_seed(seed)
    for i in range(n_cases):
        cases.append(random_case(rng, gen, "large" if i % 10 == 9 else "small"))
    n_fail = 0
    for i, case in enumerate(cases):
        omit = bool(i % 2)
        why = run_case(fn, case, lenient, omit)
        if why is not None:
            n_fail += 1
            B, H, T, D = case["q"].shape
            size = B * H * T * D * (2 if case["q"].dtype == torch.float64 else 1)
            problems.append((size, describe(case) + (" [defaults omitted]" if omit else ""), why))
    name = Path(path).name
    if STATS:
        for dt, rs in RATIOS.items():
            rs = [r for r in rs if r == r]
            print(f"    [{name} {str(dt).replace('torch.', '')}] max |err|/tol = {max(rs):.3g} over {len(rs)} cases")
        RATIOS.clear()
    if not problems:
        print(f"{name}: PASS ({len(cases)} cases)")
        return True
    problems.sort(key=lambda p: p[0])
    print(f"{name}: FAIL ({n_fail}/{len(cases)} cases)")
    if verbose:
        size, desc, why = problems[0]
        print(f"    smallest failing case: {desc}\n    -> {why}")
    return False


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--lenient-angles", action="store_true")
    ap.add_argument("--stats", action="store_true", help="print the largest |err| / tol seen per dtype")
    args = ap.parse_args()
    global STATS
    STATS = args.stats
    ok = True
    for f in args.files:
        try:
            ok &= check_file(f, args.cases, args.seed, args.lenient_angles)
        except Exception:  # noqa: BLE001
            traceback.print_exc()
            print(f"{Path(f).name}: FAIL (crashed the checker)")
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
