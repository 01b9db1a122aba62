"""Brute-force checker for rope.py's apply_rope, written from the stub's docstring alone.

    /work/main/.venv/bin/python check_against_spec.py FILE.py [FILE.py ...] [--cases N] [--seed S] [-v]

The oracle is a slow Python loop over (t, i) in float64 with math.cos / math.sin (vectorised only over
the leading axes with numpy): for every token t at position p and every pair i, theta_i = base ** (-2i/D),
    a' = a cos(p theta_i) - b sin(p theta_i),   b' = a sin(p theta_i) + b cos(p theta_i),
for BOTH accepted pairings: interleaved (2i, 2i+1) and half (i, i + D/2). A call is correct when it
matches one of the two; a file must also stick to ONE pairing over all calls (otherwise
<rope(q, m), rope(k, n)> would not be a function of m - n across calls).

Tolerance, element-wise, for an output element of a pair (a, b) with r = hypot(a, b) (a rotation keeps
r, so every error scales with r):
    tol = r * eps_c * (8 + 4 * (3 + |ln base|) * |p| * theta_i)  +  r * eps_out  +  abs_floor
  * eps_c: machine epsilon of the precision the spec lets the angles be computed in: float32 for float16
    and float32 inputs (the spec itself says "compute the angles, cos and sin in float32" for float16),
    float64 for float64 inputs.
  * the |p| theta_i term: theta_i = base ** e is computed with a relative error of about
    (1 + |ln base|) eps (the exponent e = 2i/D is rounded, and d(base**e)/de = ln(base) base**e), and
    the product p * theta adds another eps, so the angle is off by <= (3 + |ln base|) eps |p| theta_i
    radians; a wrong angle by delta moves the rotated pair by r * delta.  Factor 4 is a safety margin.
  * 8 eps_c covers cos / sin evaluation (~1 ulp each) and the two products and the sum (~3 ulps of r).
  * eps_out = 4 * 2**-10 for float16 (the final cast back to float16 is 0.5 ulp; 4 ulps also let a
    file multiply by cos / sin already cast to float16, as Hugging Face does: see README ambiguity),
    0 otherwise; abs_floor = 2**-23 for float16 (subnormal spacing), 0 otherwise.
Any bug that uses a wrong position, frequency, pairing or sign errs by O(r), far above these bounds.

Other promises checked on every call: shape, dtype and device kept; x (and the whole storage behind a
non-contiguous x) and positions bit-for-bit unchanged, including their shape and strides; non-contiguous
x of several kinds; leading axes from none to four; positions None / omitted / positional / keyword,
every integer dtype, non-contiguous positions; base varied; no state leaking between calls; no Python
loop whose length grows with T (counted with sys.settrace); the device kept (x on the 'meta' device,
a stand-in for an accelerator on this CPU-only machine). "Extras" (edge inputs the spec neither
clearly allows nor forbids) are run and reported separately; they never make a file FAIL.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import random
import sys
import traceback
from pathlib import Path

import numpy as np
import torch

torch.set_num_threads(1)

EPS = {torch.float16: 2.0**-23, torch.float32: 2.0**-23, torch.float64: 2.0**-52, torch.bfloat16: 2.0**-23}
EPS_OUT = {torch.float16: 4 * 2.0**-10, torch.float32: 0.0, torch.float64: 0.0, torch.bfloat16: 4 * 2.0**-7}
ABS_FLOOR = {torch.float16: 2.0**-23, torch.float32: 0.0, torch.float64: 0.0, torch.bfloat16: 2.0**-120}
PAIRINGS = ("interleaved", "half")


# ----------------------------------------------------------------------------------------- oracle
def oracle(x64: np.ndarray, pos: list[int], base: float, pairing: str, dtype: torch.dtype):
    """Slow float64 reference and its element-wise tolerance."""
    T, D = x64.shape[-2], x64.shape[-1]
    h = D // 2
    out = np.array(x64, dtype=np.float64, copy=True)
    tol = np.zeros_like(out)
    eps_c, eps_out, floor = EPS[dtype], EPS_OUT[dtype], ABS_FLOOR[dtype]
    lnb = abs(math.log(base))
    for t in range(T):
        p = int(pos[t])
        for i in range(h):
            theta = float(base) ** (-2.0 * i / D)
            ang = p * theta
            c, s = math.cos(ang), math.sin(ang)
            ia, ib = (2 * i, 2 * i + 1) if pairing == "interleaved" else (i, i + h)
            a = x64[..., t, ia]
            b = x64[..., t, ib]
            out[..., t, ia] = a * c - b * s
            out[..., t, ib] = a * s + b * c
            r = np.hypot(a, b)
            tl = r * eps_c * (8 + 4 * (3 + lnb) * abs(p) * theta) + r * eps_out + floor
            tol[..., t, ia] = tl
            tol[..., t, ib] = tl
    return out, tol


# ----------------------------------------------------------------------------------------- loading
_counter = [0]


def load(path: str):
    _counter[0] += 1
    name = f"rope_under_check_{_counter[0]}"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


# ----------------------------------------------------------------------------------------- inputs
LAYOUTS = ("contig", "transpose_TD", "transpose_lead", "slice_D_step2", "offset_D", "slice_T", "expand")


def make_x(lead, T, D, dtype, layout, scale, gen, device="cpu"):
    """Returns (x, owner): owner is the full tensor whose storage x views (to check nothing is written)."""
    def rnd(*shape):
        return (torch.randn(*shape, generator=gen, dtype=torch.float64) * scale).to(dtype).to(device)

    lead = tuple(lead)
    if layout == "contig":
        own = rnd(*lead, T, D)
        return own, own
    if layout == "transpose_TD":
        own = rnd(*lead, D, T)
        return own.transpose(-1, -2), own
    if layout == "transpose_lead":
        if not lead:
            return make_x(lead, T, D, dtype, "transpose_TD", scale, gen, device)
        own = rnd(*lead[:-1], T, lead[-1], D)
        return own.transpose(-3, -2), own
    if layout == "slice_D_step2":
        own = rnd(*lead, T, 2 * D)
        return own[..., ::2], own
    if layout == "offset_D":
        own = rnd(*lead, T, D + 1)
        return own[..., 1:], own
    if layout == "slice_T":
        own = rnd(*lead, 2 * T, D)
        return own[..., ::2, :], own
    if layout == "expand":
        if not lead:
            return make_x(lead, T, D, dtype, "slice_T", scale, gen, device)
        own = rnd(*([1] * len(lead)), T, D)
        return own.expand(*lead, T, D), own
    raise ValueError(layout)


class Case:
    """One call: everything needed to rebuild it and print it."""

    def __init__(self, *, lead=(), T=3, D=4, dtype=torch.float32, layout="contig", scale=1.0, pos=None,
                 pos_dtype=torch.int64, pos_noncontig=False, base=None, style="kw", seed=0, values=None,
                 label=""):
        self.__dict__.update(locals())
        del self.__dict__["self"]

    def build(self, device="cpu"):
        gen = torch.Generator().manual_seed(self.seed)
        if self.values is not None:
            own = torch.tensor(self.values, dtype=self.dtype, device=device)
            x = own
        else:
            x, own = make_x(self.lead, self.T, self.D, self.dtype, self.layout, self.scale, gen, device)
        positions = None
        pos_owner = None
        if self.pos is not None:
            if self.pos_noncontig:
                big = torch.zeros(2 * len(self.pos), dtype=self.pos_dtype)
                big[::2] = torch.tensor(self.pos, dtype=self.pos_dtype)
                pos_owner = big.to(device)
                positions = pos_owner[::2]
            else:
                pos_owner = torch.tensor(self.pos, dtype=self.pos_dtype, device=device)
                positions = pos_owner
        return x, own, positions, pos_owner

    def call(self, f, x, positions):
        b = self.base
        if self.style == "positional":
            return f(x, positions) if b is None else f(x, positions, b)
        if self.style == "omit":  # leave out every argument that has its default
            kw = {}
            if positions is not None:
                kw["positions"] = positions
            if b is not None:
                kw["base"] = b
            return f(x, **kw)
        # "kw": everything by keyword, positions=None spelled out
        kw = {"positions": positions}
        if b is not None:
            kw["base"] = b
        return f(x, **kw)

    def positions_list(self):
        return list(range(self.T)) if self.pos is None else list(self.pos)

    def base_value(self):
        return 10000.0 if self.base is None else self.base

    def describe(self):
        if self.values is not None:
            xs = f"torch.tensor({self.values}, dtype={self.dtype})"
        else:
            xs = f"x{tuple(self.lead) + (self.T, self.D)} {str(self.dtype).replace('torch.', '')} layout={self.layout}"
        ps = "" if self.pos is None else f", positions=torch.tensor({self.pos}, dtype={self.pos_dtype})" + (
            " [non-contiguous]" if self.pos_noncontig else "")
        bs = "" if self.base is None else f", base={self.base!r}"
        return f"apply_rope({xs}{ps}{bs})  [call style {self.style}]"


# ----------------------------------------------------------------------------------------- one call
def run_case(f, case: Case):
    """Returns (ok, set_of_pairings_matched, message, ratio)."""
    x, own, positions, pos_owner = case.build()
    own_before = own.clone()
    x_shape, x_stride = tuple(x.shape), x.stride()
    x_before = x.clone()
    if positions is not None:
        p_before, p_shape, p_stride, p_dtype = pos_owner.clone(), tuple(positions.shape), positions.stride(), positions.dtype
    try:
        out = case.call(f, x, positions)
    except Exception as e:  # noqa: BLE001
        return False, set(), f"raised {type(e).__name__}: {str(e).splitlines()[0][:200]}", math.inf
    problems = []
    if tuple(x.shape) != x_shape or x.stride() != x_stride:
        problems.append(f"x's shape/strides changed in place: {x_shape}{x_stride} -> {tuple(x.shape)}{x.stride()}")
    elif not torch.equal(x, x_before) or not torch.equal(own, own_before):
        problems.append("x (or the storage it views) was modified in place")
    if positions is not None:
        if tuple(positions.shape) != p_shape or positions.stride() != p_stride or positions.dtype != p_dtype:
            problems.append(f"positions' shape/strides/dtype changed in place: {p_shape} -> {tuple(positions.shape)}")
        elif not torch.equal(pos_owner, p_before):
            problems.append("positions were modified in place")
    if not isinstance(out, torch.Tensor):
        return False, set(), f"returned {type(out).__name__}, not a tensor", math.inf
    if tuple(out.shape) != x_shape:
        problems.append(f"shape {tuple(out.shape)} != x's {x_shape}")
    if out.dtype != case.dtype:
        problems.append(f"dtype {out.dtype} != x's {case.dtype}")
    if out.device != x.device:
        problems.append(f"device {out.device} != x's {x.device}")
    if problems:
        return False, set(), "; ".join(problems), math.inf
    x64 = x_before.to(torch.float64).numpy()
    got = out.detach().to(torch.float64).numpy()
    matched, ratios, best_ratio, best_msg = set(), {}, math.inf, ""
    for pairing in PAIRINGS:
        ref, tol = oracle(x64, case.positions_list(), case.base_value(), pairing, case.dtype)
        err = np.abs(got - ref)
        bad = ~(err <= tol)  # NaN counts as bad
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.where(tol > 0, err / np.where(tol > 0, tol, 1.0), np.where(err > 0, np.inf, 0.0))
        ratio = float(r.max()) if r.size and not np.isnan(got).any() else (0.0 if not r.size else math.inf)
        ratios[pairing] = ratio
        if not bad.any():
            matched.add(pairing)
        elif ratio < best_ratio or not best_msg:
            best_ratio = ratio
            k = np.unravel_index(np.argmax(np.where(bad, err - tol, -np.inf)), err.shape)
            best_msg = (f"vs {pairing} pairing: at index {tuple(int(v) for v in k)} spec says {ref[k]:.6g}, "
                        f"got {got[k]:.6g} (|err| {err[k]:.3g} > tol {tol[k]:.3g}); {int(bad.sum())} bad elements")
    if matched:
        return True, matched, "", min(ratios[p] for p in matched)
    return False, set(), best_msg, best_ratio


# ----------------------------------------------------------------------------------------- case lists
def probe_cases():
    """Small hand-made probes, simplest first: the first one a file fails is its minimal repro."""
    P = []
    P.append(Case(values=[[1.0, 0.0], [1.0, 0.0]], label="default positions, D=2"))
    P.append(Case(values=[[1.0, 0.0]], pos=[5], label="explicit positions"))
    P.append(Case(values=[[1.0, 0.0]], pos=[5], pos_dtype=torch.int32, label="int32 positions"))
    P.append(Case(values=[[1.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]], base=10.0, label="base"))
    P.append(Case(values=[[0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 1.0, 0.0]], base=10.0, label="base, pair 1"))
    P.append(Case(values=[[0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 1.0, 0.0]], base=100.0, style="positional", label="base positional"))
    P.append(Case(values=[[1.0, 0.0]], pos=[2049], dtype=torch.float16, label="float16, position 2049"))
    P.append(Case(values=[[1.0, 0.0]], pos=[3], dtype=torch.float16, label="float16 small position"))
    P.append(Case(values=[[1.0, 0.0]], pos=[100000], dtype=torch.float64, label="float64 large position"))
    for layout in LAYOUTS:
        P.append(Case(lead=(2,), T=2, D=4, layout=layout, label=f"layout {layout}"))
    P.append(Case(lead=(2, 3), T=2, D=4, layout="transpose_lead", label="transposed [B,T,H,D] -> [B,H,T,D]"))
    P.append(Case(lead=(), T=1, D=4, layout="offset_D", label="odd storage offset, T = 1 (looks contiguous)"))
    P.append(Case(lead=(3,), T=1, D=4, layout="offset_D", dtype=torch.float64, label="odd storage offset, T = 1, float64"))
    P.append(Case(lead=(), T=2, D=6, label="D/2 odd"))
    P.append(Case(lead=(2,), T=3, D=4, pos=[7, 0, 7], pos_noncontig=True, label="non-contiguous positions"))
    return P


def random_cases(n, seed):
    rng = random.Random(seed)
    leads = [(), (3,), (2, 3), (2, 1, 3), (1, 2, 2, 2), (4,), (1,)]
    Ts = [1, 2, 3, 5, 8, 17]
    Ds = [2, 4, 6, 8, 10, 12, 16, 32, 64, 128]
    bases = [None, None, None, 10000.0, 500000.0, 1e6, 10.0, 2.0, 1.0, 100.0, 3.5]
    dtypes = [torch.float16, torch.float32, torch.float64]
    pos_dtypes = [torch.int64, torch.int32, torch.int16, torch.uint8, torch.int8]
    cases = []
    for k in range(n):
        dtype = rng.choice(dtypes)
        lead = rng.choice(leads)
        T = rng.choice(Ts)
        D = rng.choice(Ds if k % 5 else Ds[:6])
        if math.prod(lead) * T * D > 4000:
            D = 16
        pos_mode = rng.choice(["none", "none", "arange", "perm", "rand_small", "rand_large", "dups", "shift"])
        pos_dtype = rng.choice(pos_dtypes)
        hi = {torch.int64: 200000, torch.int32: 200000, torch.int16: 32767, torch.uint8: 255, torch.int8: 127}[pos_dtype]
        if dtype == torch.float16:
            hi = min(hi, 65000)
        if pos_mode == "none":
            pos = None
        elif pos_mode == "arange":
            pos = list(range(T))
        elif pos_mode == "perm":
            pos = rng.sample(range(max(T, 1)), T)
        elif pos_mode == "rand_small":
            pos = [rng.randint(0, min(hi, 64)) for _ in range(T)]
        elif pos_mode == "rand_large":
            pos = [rng.randint(0, hi) for _ in range(T)]
        elif pos_mode == "dups":
            v = rng.randint(0, min(hi, 5000))
            pos = [v] * T
        else:  # "shift": a decode window starting deep in the sequence
            start = rng.randint(0, max(0, min(hi, 9000) - T))
            pos = list(range(start, start + T))
        layout = rng.choice(LAYOUTS + ("contig", "contig"))
        scale = rng.choice([1.0, 1.0, 1e-3, 30.0] if dtype == torch.float16 else [1.0, 1.0, 1e-3, 1e3])
        base = rng.choice(bases)
        style = rng.choice(["kw", "positional", "omit"])
        cases.append(Case(lead=lead, T=T, D=D, dtype=dtype, layout=layout, scale=scale, pos=pos,
                          pos_dtype=pos_dtype, pos_noncontig=(pos is not None and rng.random() < 0.2),
                          base=base, style=style, seed=seed * 100003 + k, label="random"))
    return cases


def extra_cases():
    """Inputs the spec neither clearly allows nor forbids: reported, never failing a file."""
    E = []
    E.append(Case(values=[[1.0, 0.0], [1.0, 0.0]], pos=[-1, -3], label="negative positions"))
    E.append(Case(lead=(2,), T=4, D=8, pos=[-5, 0, 5, -100], dtype=torch.float64, label="negative positions f64"))
    E.append(Case(lead=(2,), T=0, D=4, label="T = 0 (empty sequence)"))
    E.append(Case(lead=(2,), T=0, D=4, pos=[], label="T = 0 with positions=[]"))
    E.append(Case(lead=(0, 3), T=4, D=4, label="empty batch (B = 0)"))
    E.append(Case(values=[[1.0, 0.0, 0.0, 1.0], [1.0, 0.0, 0.0, 1.0]], base=10000, label="int base"))
    E.append(Case(lead=(2,), T=3, D=4, dtype=torch.bfloat16, pos=[0, 300, 5000], label="bfloat16 input"))
    return E


# ----------------------------------------------------------------------------------------- special checks
def check_meta(f):
    """Device kept: x on 'meta' (no data; only device/shape/dtype can be checked)."""
    msgs = []
    for dtype in (torch.float16, torch.float32, torch.float64):
        for positions in (None, torch.arange(3, device="meta")):
            x = torch.empty(2, 3, 8, dtype=dtype, device="meta")
            try:
                out = f(x, positions)
            except Exception as e:  # noqa: BLE001
                msgs.append(f"{dtype}, positions={'None' if positions is None else 'meta tensor'}: raised "
                            f"{type(e).__name__}: {str(e).splitlines()[0][:160]}")
                continue
            if out.device.type != "meta" or out.shape != x.shape or out.dtype != dtype:
                msgs.append(f"{dtype}: got device {out.device}, shape {tuple(out.shape)}, dtype {out.dtype}")
    return msgs


def count_lines(f, path, T):
    fname = str(Path(path).resolve())
    n = [0]

    def tracer(frame, event, arg):
        if str(Path(frame.f_code.co_filename).resolve()) != fname:
            return None
        if event == "line":
            n[0] += 1
        return tracer

    x = torch.randn(2, T, 8)
    sys.settrace(tracer)
    try:
        f(x)
        f(x, torch.arange(T))
    finally:
        sys.settrace(None)
    return n[0]


def check_state_leak(path):
    """A call with a non-default base / positions must not change a later call (fresh module per pair)."""
    msgs = []
    seq = [
        (Case(values=[[0.3, -1.0, 2.0, 0.5]] * 3, base=10.0), Case(values=[[0.3, -1.0, 2.0, 0.5]] * 3)),
        (Case(values=[[0.3, -1.0, 2.0, 0.5]] * 3), Case(values=[[0.3, -1.0, 2.0, 0.5]] * 3, base=10.0)),
        (Case(values=[[0.3, -1.0, 2.0, 0.5]] * 3, pos=[9, 8, 7]), Case(values=[[0.3, -1.0, 2.0, 0.5]] * 3)),
        (Case(values=[[0.3, -1.0, 2.0, 0.5]] * 3, dtype=torch.float64), Case(values=[[0.3, -1.0, 2.0, 0.5]] * 3, dtype=torch.float32, base=7.0)),
    ]
    for first, second in seq:
        f = load(path).apply_rope
        run_case(f, first)
        ok, _, msg, _ = run_case(f, second)
        if not ok:
            msgs.append(f"after {first.describe()}: {second.describe()} -> {msg}")
    return msgs


# ----------------------------------------------------------------------------------------- driver
def check_file(path, n_cases, seed, verbose):
    print(f"=== {path}")
    try:
        mod = load(path)
        f = mod.apply_rope
    except Exception:  # noqa: BLE001
        print("  FAIL: cannot import apply_rope\n" + traceback.format_exc(limit=2))
        return False
    failures, pairing_sets, worst = [], [], {}
    cases = probe_cases() + random_cases(n_cases, seed)
    for case in cases:
        ok, matched, msg, ratio = run_case(f, case)
        if ok:
            key = str(case.dtype).replace("torch.", "")
            worst[key] = max(worst.get(key, 0.0), ratio)
            if case.D >= 4:
                pairing_sets.append((matched, case))
        else:
            failures.append((case, msg))
    common = set(PAIRINGS)
    for matched, _ in pairing_sets:
        common &= matched
    inconsistent = pairing_sets and not common
    meta = check_meta(f)
    leak = check_state_leak(path)
    try:
        n_small, n_big = count_lines(f, path, 4), count_lines(f, path, 64)
        loop_msg = "" if n_small == n_big else f"traced lines grow with T: {n_small} at T=4, {n_big} at T=64"
    except Exception as e:  # noqa: BLE001
        loop_msg = f"loop check raised {type(e).__name__}: {e}"
    ok = not failures and not inconsistent and not meta and not leak and not loop_msg
    pairing = "/".join(sorted(common)) if common else "INCONSISTENT"
    print(f"  {'PASS' if ok else 'FAIL'}: {len(cases) - len(failures)}/{len(cases)} value/promise cases ok; "
          f"pairing {pairing}; worst err/tol on passing cases: "
          + ", ".join(f"{k} {v:.3g}" for k, v in sorted(worst.items())))
    print(f"  device (meta): {'ok' if not meta else 'FAIL'}; state leak: {'ok' if not leak else 'FAIL'}; "
          f"no loop over T: {'ok' if not loop_msg else 'FAIL'}")
    for m in meta[: 3 if verbose else 1]:
        print(f"    meta: {m}")
    for m in leak[: 3 if verbose else 1]:
        print(f"    leak: {m}")
    if loop_msg:
        print(f"    loop: {loop_msg}")
    if failures:
        case, msg = failures[0]
        print(f"  first failing case ({case.label}): {case.describe()}\n    -> {msg}")
        for case, msg in failures[1: 6 if verbose else 1]:
            print(f"  also ({case.label}): {case.describe()}\n    -> {msg}")
    extras = []
    for case in extra_cases():
        eok, _, emsg, _ = run_case(f, case)
        extras.append(f"{case.label}: {'ok' if eok else 'NOT ok (' + emsg[:120] + ')'}")
    print("  extras (not graded): " + "; ".join(extras))
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    results = {p: check_file(p, a.cases, a.seed, a.verbose) for p in a.files}
    print("\nSUMMARY")
    for p, ok in results.items():
        print(f"  {'PASS' if ok else 'FAIL'}  {p}")


if __name__ == "__main__":
    main()
