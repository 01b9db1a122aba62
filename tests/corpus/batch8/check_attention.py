"""Brute-force checker for attention(q, k, v, bias=None) -> (out, weights), written from the stub's docstring only.

Usage:  python check_against_spec.py FILE.py [FILE.py ...]   (or a folder: every *.py in it)

Oracle: numpy extended precision (np.longdouble, 64-bit mantissa on x86) evaluation of
    weights = softmax(q k^T / sqrt(D) + bias)  over the last axis (max-shifted, -inf -> exactly 0)
    out     = weights v
on the exact float values of the inputs. Rows whose keys are all -inf are "not graded" (skipped).

Tolerance (first-order forward-error bound, u = unit roundoff of q's dtype, safety factor 2):
    A_ij  = |q_i|.|k_j| / sqrt(D) + |bias_ij|                  (magnitude that is summed into a logit)
    E_ij  = 2 * ((D + 4) u A_ij + 2 u |s_ij - max_l s_il|)     (error of one logit, incl. the max shift)
    |log w_ij error| <= E_ij + sum_l w_il E_il                 (softmax: log w_j = s_j - logsumexp s)
    tol_w = w (expm1(E_ij + Ebar_i) + 2 (Tk + 8) u) + 4 tiny
    tol_out = sum_j tol_w_ij |v_jc| + 2 (Tk + 4) u sum_j w_ij |v_jc| + 4 tiny
Any NaN / inf in a graded row fails.  A float32 implementation that computes everything in float32 stays
inside this bound (dot products: gamma_D; exp/sum/div: (Tk + few) u); bugs are off by O(1) or NaN.

Strict checks (the spec's promises):  values vs oracle, exact 0 weight under a -inf bias entry, output
shapes [..., Tq, Dv] / [..., Tq, Tk], dtype == q.dtype (float32 and float64), device == q.device, inputs
not modified (bitwise), non-contiguous inputs, aliasing q is k is v, every bias shape that broadcasts to
[..., Tq, Tk] (0-d, 1-d, [Tq, 1], [1, Tk], size-1 leading axes, expanded/transposed views), -inf masks
(random, causal, padding, all-but-one), HF-style finite -1e9 / finfo.min masks, large logits (exact
integer logits up to 1e5 in float32 and 1e12 in float64, and rows of very different magnitude),
permutation equivariance.
Informational checks (spec unclear, listed as ambiguities, never counted as failures): see INFO_CASES.
"""

from __future__ import annotations

import importlib.util
import math
import sys
import traceback
from pathlib import Path

import numpy as np
import torch

torch.set_num_threads(1)
LD = np.longdouble
DTYPES = (torch.float32, torch.float64)


# ----------------------------------------------------------------------------------------------- oracle
def _ld(t: torch.Tensor) -> np.ndarray:
    return t.detach().to(torch.float64).cpu().numpy().astype(LD)


def oracle(q, k, v, bias):
    """Extended-precision reference. Returns (out, w, tol_out, tol_w, graded_rows, masked) as numpy."""
    dt = q.dtype
    u = LD(torch.finfo(dt).eps) / 2
    tiny = LD(torch.finfo(dt).tiny)
    D, Tq, Tk = q.shape[-1], q.shape[-2], k.shape[-2]
    lead = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    qn = np.broadcast_to(_ld(q), (*lead, Tq, D))
    kn = np.broadcast_to(_ld(k), (*lead, Tk, D))
    vn = np.broadcast_to(_ld(v), (*lead, Tk, v.shape[-1]))
    scale = LD(1) / np.sqrt(LD(D))
    s = np.einsum("...qd,...kd->...qk", qn, kn) * scale
    A = np.einsum("...qd,...kd->...qk", np.abs(qn), np.abs(kn)) * scale
    if bias is not None:
        bn = np.broadcast_to(_ld(bias), (*lead, Tq, Tk))
        assert not np.isnan(bn).any() and not (bn == np.inf).any()
        masked = bn == -np.inf
        s = s + bn
        A = A + np.where(masked, 0, np.abs(np.where(masked, 0, bn)))
    else:
        masked = np.zeros(s.shape, dtype=bool)
    graded = ~masked.all(axis=-1)  # [..., Tq]
    s_f = np.where(masked, -np.inf, s)
    m = np.where(graded, np.max(np.where(masked, -np.inf, s_f), axis=-1, initial=-np.inf), 0)[..., None]
    with np.errstate(invalid="ignore", over="ignore"):
        e = np.where(masked, LD(0), np.exp(np.where(masked, 0, s_f - m)))
        tot = e.sum(axis=-1, keepdims=True)
        w = np.where(graded[..., None], e / np.where(tot == 0, 1, tot), 0)
    E = 2 * ((D + 4) * u * A + 2 * u * np.abs(np.where(masked, 0, s_f - m)))
    E = np.where(masked, 0, E)
    Ebar = (w * E).sum(axis=-1, keepdims=True)
    tol_w = w * (np.expm1(np.minimum(E + Ebar, 60)) + 2 * (Tk + 8) * u) + 4 * tiny
    out = np.einsum("...qk,...kd->...qd", w, vn)
    absv = np.abs(vn)
    tol_out = (
        np.einsum("...qk,...kd->...qd", tol_w, absv)
        + 2 * (Tk + 4) * u * np.einsum("...qk,...kd->...qd", w, absv)
        + 4 * tiny
    )
    return out, w, tol_out, tol_w, graded, masked


# --------------------------------------------------------------------------------------------- compare
class Mismatch(Exception):
    pass


def check_call(fn, q, k, v, bias, what: str):
    """Call fn, compare to the oracle; raise Mismatch with a description on any broken promise."""
    saved = [t.clone() for t in (q, k, v)] + ([bias.clone()] if bias is not None else [])
    ref_out, ref_w, tol_out, tol_w, graded, masked = oracle(q, k, v, bias)
    try:
        res = fn(q, k, v, bias) if bias is not None else fn(q, k, v)
    except Exception as exc:  # noqa: BLE001
        raise Mismatch(f"{what}: raised {type(exc).__name__}: {str(exc).splitlines()[0][:160]}") from None
    after = [q, k, v] + ([bias] if bias is not None else [])
    for name, a, b in zip(("q", "k", "v", "bias"), saved, after):
        if not torch.equal(a, b):
            raise Mismatch(f"{what}: input {name} was modified in place")
    if not (isinstance(res, tuple) and len(res) == 2):
        raise Mismatch(f"{what}: did not return a 2-tuple")
    out, w = res
    Tq, Tk, Dv = q.shape[-2], k.shape[-2], v.shape[-1]
    lead = tuple(torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2]))
    for name, t, shape in (("out", out, (*lead, Tq, Dv)), ("weights", w, (*lead, Tq, Tk))):
        if not isinstance(t, torch.Tensor):
            raise Mismatch(f"{what}: {name} is not a tensor")
        if tuple(t.shape) != shape:
            raise Mismatch(f"{what}: {name} shape {tuple(t.shape)} != {shape}")
        if t.dtype != q.dtype:
            raise Mismatch(f"{what}: {name} dtype {t.dtype} != q.dtype {q.dtype}")
        if t.device != q.device:
            raise Mismatch(f"{what}: {name} device {t.device} != {q.device}")
    wn, on = _ld(w), _ld(out)
    g = np.broadcast_to(graded[..., None], wn.shape)
    go = np.broadcast_to(graded[..., None], on.shape)
    bad_w = g & ~(np.abs(wn - ref_w) <= tol_w)  # NaN -> bad
    bad_o = go & ~(np.abs(on - ref_out) <= tol_out)
    if bad_w.any():
        i = tuple(int(j) for j in np.argwhere(bad_w)[0])
        raise Mismatch(f"{what}: weights{list(i)} = {float(wn[i])!r} but spec gives {float(ref_w[i])!r} (tol {float(tol_w[i]):.3g})")
    if bad_o.any():
        i = tuple(int(j) for j in np.argwhere(bad_o)[0])
        raise Mismatch(f"{what}: out{list(i)} = {float(on[i])!r} but spec gives {float(ref_out[i])!r} (tol {float(tol_out[i]):.3g})")
    hid = g & masked & (wn != 0)
    if hid.any():
        i = tuple(int(j) for j in np.argwhere(hid)[0])
        raise Mismatch(f"{what}: weights{list(i)} = {float(wn[i])!r} under a -inf bias entry, spec says exactly 0")
    return out, w


# ----------------------------------------------------------------------------------------------- cases
def targeted_cases():
    """Small hand-made inputs (each inside the spec's domain), tried first so failures are minimal."""
    f32, f64, inf = torch.float32, torch.float64, math.inf
    T = torch.tensor
    yield "1 query 1 key", T([[0.5]]), T([[2.0]]), T([[3.0]]), None
    yield "D=4, Dv=1 (scale is 1/sqrt(D))", T([[1.0, 1.0, 1.0, 1.0]]), T([[1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0]]), T([[1.0], [0.0]]), None
    yield "bias on 1x1 logits = 1 (bias must not change)", T([[1.0]]), T([[1.0]]), T([[1.0]]), T([[0.0]])
    yield "D=4 zero logits, bias [1, 0]", torch.zeros(1, 4), torch.zeros(2, 4), T([[1.0], [0.0]]), T([[1.0, 0.0]])
    yield "float64 zeros", torch.zeros(1, 1, dtype=f64), torch.zeros(1, 1, dtype=f64), torch.zeros(1, 1, dtype=f64), None
    yield "float64 logits 1000, 0", T([[1000.0]], dtype=f64), T([[1.0], [0.0]], dtype=f64), T([[1.0], [0.0]], dtype=f64), None
    yield "float32 logits 1000, 0", T([[1000.0]]), T([[1.0], [0.0]]), T([[1.0], [0.0]]), None
    yield "rows of different size: logits [1,0] and [200,0]", T([[1.0], [200.0]]), T([[1.0], [0.0]]), T([[1.0], [0.0]]), None
    yield "first 4 of 5 keys masked", torch.zeros(1, 1), torch.zeros(5, 1), T([[0.0], [1.0], [2.0], [3.0], [4.0]]), T([-inf, -inf, -inf, -inf, 0.0])
    q = torch.arange(48.0).reshape(2, 3, 2, 4).div(10).transpose(1, 2)  # [B, T, H, D] -> [B, H, T, D] view
    yield "q as x.view(B,T,H,D).transpose(1,2)", q, q.clone().contiguous(), torch.ones(2, 2, 3, 1), None
    yield "1-d bias [Tk]", T([[1.0, 0.0]]), T([[1.0, 0.0], [0.0, 1.0]]), T([[1.0], [2.0]]), T([0.5, -inf])
    yield "0-d bias", T([[1.0, 0.0]]), T([[1.0, 0.0], [0.0, 1.0]]), T([[1.0], [2.0]]), T(3.0)


def _bias(rng, g, lead, Tq, Tk, dt, kind):
    full = (*lead, Tq, Tk)
    ones_lead = tuple(1 if rng.random() < 0.5 else n for n in lead)
    shapes = {
        "full": full,
        "TqTk": (Tq, Tk),
        "Tk": (Tk,),
        "scalar": (),
        "Tq1": (Tq, 1),
        "ones_lead": (*ones_lead, Tq, Tk),
        "padding": (*ones_lead, 1, Tk),
    }
    if kind == "causal":
        off = Tk - Tq
        b = torch.zeros(Tq, Tk, dtype=dt)
        b.masked_fill_(torch.ones(Tq, Tk, dtype=torch.bool).triu(1 + max(off, 0)), -math.inf)
        return b
    if kind == "hf_min":
        b = torch.zeros(full, dtype=dt)
        b[torch.rand(full, generator=g) < 0.4] = torch.finfo(dt).min
        return b
    if kind == "big_neg":
        b = torch.zeros(full, dtype=dt)
        b[torch.rand(full, generator=g) < 0.4] = -1e9
        return b
    shape = shapes[kind if kind in shapes else rng.choice(list(shapes))]
    b = torch.randn(shape, generator=g, dtype=dt) * rng.choice([0.5, 3.0])
    if rng.random() < 0.6:
        p = rng.choice([0.2, 0.5, 0.8])
        b = b.masked_fill(torch.rand(shape, generator=g) < p, -math.inf)
    return b


def _noncontig(t: torch.Tensor, rng, g) -> torch.Tensor:
    """Same values, different memory layout (transposed / strided / permuted-leading / expanded views)."""
    how = rng.choice(["mT", "step", "lead", "plain"])
    if how == "mT" and t.dim() >= 2:
        return t.mT.contiguous().mT
    if how == "step" and t.dim() >= 1:
        big = torch.empty((*t.shape[:-1], 2 * t.shape[-1]), dtype=t.dtype)
        big[..., ::2] = t
        return big[..., ::2]
    if how == "lead" and t.dim() >= 4:
        return t.transpose(0, -3).contiguous().transpose(0, -3)
    if t.dim() >= 1 and t.shape[0] == 1:
        return t.expand(*t.shape)  # same shape, harmless
    return t


def random_cases(seed: int, n: int):
    rng = np.random.default_rng(seed)
    g = torch.Generator().manual_seed(seed)
    leads = [(), (1,), (3,), (2, 3), (1, 2, 3), (2, 1, 2, 2)]
    sizes = [1, 2, 3, 4, 5, 7, 8, 9, 16, 33]
    kinds = [None, "full", "TqTk", "Tk", "scalar", "Tq1", "ones_lead", "padding", "causal", "hf_min", "big_neg", "any"]
    for i in range(n):
        dt = DTYPES[i % 2]
        lead = leads[rng.integers(len(leads))]
        Tq, Tk = int(rng.choice(sizes)), int(rng.choice(sizes))
        D, Dv = int(rng.choice([1, 2, 3, 4, 5, 8, 16, 64])), int(rng.choice([1, 2, 3, 5, 8]))
        sc = float(rng.choice([1.0, 0.1, 5.0]))
        q = torch.randn((*lead, Tq, D), generator=g, dtype=dt) * sc
        k = torch.randn((*lead, Tk, D), generator=g, dtype=dt) * sc
        v = torch.randn((*lead, Tk, Dv), generator=g, dtype=dt)
        kind = kinds[rng.integers(len(kinds))]
        bias = None if kind is None else _bias(rng, g, lead, Tq, Tk, dt, kind)
        nc = rng.random() < 0.5
        if nc:
            q, k, v = (_noncontig(t, rng, g) for t in (q, k, v))
            if bias is not None:
                bias = _noncontig(bias, rng, g)
        yield f"random#{i} {dt} lead={lead} Tq={Tq} Tk={Tk} D={D} Dv={Dv} x{sc} bias={kind} noncontig={nc}", q, k, v, bias


def large_logit_cases(seed: int):
    """Exact integer logits (scale 1/sqrt(D) with D in {1, 4, 16} is exact): large but representable."""
    g = torch.Generator().manual_seed(seed)
    for dt, r in ((torch.float32, 300), (torch.float64, 10**6)):
        for D in (1, 4, 16):
            for lead in ((), (2, 3)):
                Tq, Tk = 5, 7
                q = torch.randint(-r, r, (*lead, Tq, D), generator=g).to(dt)
                k = torch.randint(-r, r, (*lead, Tk, D), generator=g).to(dt)
                v = torch.randn((*lead, Tk, 3), generator=g, dtype=dt)
                yield f"large integer logits {dt} D={D} lead={lead} range={r}", q, k, v, None
                # rows whose logits live at very different magnitudes: row i scaled by 40**i
                qs = q * torch.tensor([40.0**j for j in range(Tq)], dtype=dt)[:, None].clamp(max=r).round()
                yield f"rows of different magnitude {dt} D={D} lead={lead}", qs, k, v, None
                b = torch.zeros(Tq, Tk, dtype=dt)
                b[:, ::2] = -math.inf
                yield f"large logits + -inf mask {dt} D={D} lead={lead}", q, k, v, b


def alias_cases(seed: int):
    g = torch.Generator().manual_seed(seed)
    for dt in DTYPES:
        for shape in ((4, 8), (2, 3, 5, 4)):
            x = torch.randn(shape, generator=g, dtype=dt)
            yield f"aliased q is k is v {dt} {shape}", x, x, x, None
            b = torch.zeros(shape[-2], shape[-2], dtype=dt).masked_fill(torch.ones(shape[-2], shape[-2], dtype=torch.bool).triu(1), -math.inf)
            yield f"aliased q is k is v + causal {dt} {shape}", x, x, x, b


def equivariance(fn, seed: int):
    """out(PX,PX,PX) = P out(X,X,X); weights(PX..) = P weights(X..) P^T (tolerance: both oracle tolerances)."""
    g = torch.Generator().manual_seed(seed)
    for dt in DTYPES:
        for shape in ((4, 8), (6, 3), (2, 3, 5, 4), (1, 7)):
            x = torch.randn(shape, generator=g, dtype=dt)
            T = shape[-2]
            perm = torch.randperm(T, generator=g)
            P = torch.eye(T, dtype=dt)[perm]
            px = P @ x
            o1, w1 = check_call(fn, x, x, x, None, f"equivariance {dt} {shape} (X)")
            o2, w2 = check_call(fn, px, px, px, None, f"equivariance {dt} {shape} (PX)")
            _, _, to1, tw1, _, _ = oracle(x, x, x, None)
            _, _, to2, tw2, _, _ = oracle(px, px, px, None)
            eo = np.abs(_ld(o2) - _ld(P @ o1)) <= to2 + _ld(P) @ to1
            ew = np.abs(_ld(w2) - _ld(P @ w1 @ P.T)) <= tw2 + _ld(P) @ tw1 @ _ld(P.T)
            if not (eo.all() and ew.all()):
                raise Mismatch(f"equivariance {dt} {shape}: out(PX) != P out(X) or weights(PX) != P w P^T")


# -------------------------------------------------------------------------------- informational checks
def info_cases(fn):
    """Behaviour where the spec is unclear: reported, never a failure."""
    res = {}
    T = torch.tensor

    def run(name, f):
        try:
            res[name] = f()
        except Exception as exc:  # noqa: BLE001
            res[name] = f"raises {type(exc).__name__}"

    q, k, v = torch.randn(2, 3), torch.randn(4, 3), torch.randn(4, 2)
    run("float64 bias, float32 q -> dtypes", lambda: tuple(str(t.dtype) for t in fn(q, k, v, torch.zeros(2, 4, dtype=torch.float64))))
    run("float32 bias, float64 q -> dtypes", lambda: tuple(str(t.dtype) for t in fn(q.double(), k.double(), v.double(), torch.zeros(2, 4))))
    run("int64 bias", lambda: str(fn(q, k, v, torch.zeros(2, 4, dtype=torch.long))[1].dtype))
    run("bool bias", lambda: str(fn(q, k, v, torch.ones(2, 4, dtype=torch.bool))[1].dtype))
    run("k,v broadcast over H (k [2,1,4,3], q [2,5,2,3])", lambda: tuple(fn(torch.randn(2, 5, 2, 3), torch.randn(2, 1, 4, 3), torch.randn(2, 1, 4, 2))[0].shape))
    run("bias with more leading axes than q (q 2-D, bias [1,1,2,4])", lambda: tuple(fn(q, k, v, torch.zeros(1, 1, 2, 4))[1].shape))
    run("Tq = 0", lambda: tuple(fn(torch.randn(0, 3), k, v)[0].shape))
    run("leading axis of size 0", lambda: tuple(fn(torch.randn(0, 2, 3), torch.randn(0, 4, 3), torch.randn(0, 4, 2))[0].shape))
    run("Tk = 0", lambda: tuple(fn(q, torch.randn(0, 3), torch.randn(0, 2))[0].shape))
    run("fully masked row -> weights", lambda: fn(q[:1], k, v, T([[-math.inf] * 4]))[1].tolist())

    def grad():
        qq = q.clone().requires_grad_()
        out, w = fn(qq, k, v)
        (out.sum() + w.sum()).backward()
        return "backward ok" if qq.grad is not None and torch.isfinite(qq.grad).all() else "no/invalid grad"

    run("requires_grad q, backward", grad)
    run("contiguous outputs?", lambda: tuple(t.is_contiguous() for t in fn(torch.randn(2, 3, 4, 8), torch.randn(2, 3, 6, 8), torch.randn(2, 3, 6, 5))))
    return res


# --------------------------------------------------------------------------------------------- driver
def load(path: Path):
    spec = importlib.util.spec_from_file_location(f"sub_{path.stem}", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod.attention


def all_cases():
    yield from targeted_cases()
    yield from alias_cases(1)
    yield from large_logit_cases(2)
    yield from random_cases(3, 400)


def check_file(path: Path, info: bool):
    fn = load(path)
    failures, n = [], 0
    for what, q, k, v, bias in all_cases():
        n += 1
        try:
            check_call(fn, q, k, v, bias, what)
        except Mismatch as exc:
            failures.append(str(exc))
    n += 1
    try:
        equivariance(fn, 4)
    except Mismatch as exc:
        failures.append(str(exc))
    print(f"{path.name}: {'PASS' if not failures else 'FAIL'} ({n - len(failures)}/{n} cases agree with the spec)")
    for f in failures[:3]:
        print("    first mismatches:" if f is failures[0] else "                    ", f)
    if info:
        for key, val in info_cases(fn).items():
            print(f"    [info] {key}: {val}")
    return not failures


def main(argv):
    info = "--info" in argv
    paths = []
    for a in (x for x in argv if x != "--info"):
        p = Path(a)
        paths += sorted(p.glob("*.py")) if p.is_dir() else [p]
    ok = {}
    for p in paths:
        try:
            ok[p.name] = check_file(p, info)
        except Exception:  # noqa: BLE001
            traceback.print_exc()
            ok[p.name] = False
    return ok


if __name__ == "__main__":
    main(sys.argv[1:])
