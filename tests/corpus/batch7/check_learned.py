#!/usr/bin/env python
"""Brute-force checker for learned.py (LearnedPositionalEmbedding), written from the stub's docstring only.

usage: python check_against_spec.py FILE.py [FILE.py ...]     (exit status 1 if any file fails)

What the spec promises, and how each promise is checked here:
  P1  signature: __init__(max_len, d_model), forward(x); positional and keyword construction.
  P2  exactly one parameter, an nn.Parameter of shape [max_len, d_model], trainable (requires_grad),
      finite starting values, not a buffer; separate instances own separate tables.
  P3  out = x + table[:T], shape [B, T, d_model], row t of the table added at position t.
      Oracle: a Python loop in float64 over every (b, t, j), rounded once to x's dtype.
      Tolerance: ZERO. Each output element is one IEEE addition of two numbers of the same dtype;
      for float32 the float64 sum rounded to float32 equals the correctly rounded float32 sum
      (double rounding is harmless for + since 53 >= 2*24 + 2), for float64 it is the float64 sum itself.
      So any correct implementation (slice, gather, one-hot matmul whose other terms are exact zeros,
      float64 intermediates) is bit-identical up to the sign of zero (torch.equal treats -0 == +0).
  P4  trainable: gradients flow. d(sum(g*out))/dx == g exactly; d/dtable rows t < T == sum_b g[b, t]
      (tolerance: B summands, |err| <= B * eps * sum_b |g|, eps of the dtype; rows >= T get exactly 0).
  P5  T > max_len raises ValueError or IndexError whose message names both T and max_len (as whole
      numbers), from an explicit check: also on the meta device (where a bare lookup does not raise)
      and under python -O (no assert). T == max_len must NOT raise.
  P6  x not modified in place (values and x._version); non-contiguous x (transposed, strided, expanded,
      storage offset) gives the same answer.
  P7  .to(torch.float64): the table stays the one registered parameter, becomes float64, output float64.
      .to(device): run on the meta device; every helper tensor with >= 1 dimension that the forward pass
      touches must be on x's device (checked with a TorchDispatchMode spy; 0-dim CPU scalars are legal
      next to any device in PyTorch). Output on x's device.
  P8  the forward pass reads the current table (values changed after a first call are used).
Soft (reported as WARN, not failures; see README ambiguities): T == 0 or B == 0 inputs, extra helper
buffers, mixed dtypes (float32 x with a float64 module), float16/bfloat16.
"""

from __future__ import annotations

import importlib.util
import inspect
import random
import re
import subprocess
import sys
import textwrap
import traceback
from pathlib import Path

import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

torch.set_num_threads(1)

DTYPES = (torch.float32, torch.float64)


class Fail(Exception):
    pass


def load(path: str):
    name = f"checked_{Path(path).stem}_{random.randrange(10**9)}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def the_param(m: nn.Module) -> nn.Parameter:
    params = list(m.parameters())
    if len(params) != 1:
        raise Fail(f"expected exactly 1 parameter, found {len(params)}: {[n for n, _ in m.named_parameters()]}")
    return params[0]


def random_values(shape, dtype, gen) -> torch.Tensor:
    """Values of varied sign and magnitude (1e-6 .. 1e4) with some exact zeros and integers."""
    base = torch.randn(shape, generator=gen, dtype=torch.float64)
    scale = 10.0 ** torch.randint(-6, 5, shape, generator=gen).to(torch.float64)
    vals = base * scale
    mask = torch.rand(shape, generator=gen) < 0.05
    vals[mask] = 0.0
    mask = torch.rand(shape, generator=gen) < 0.05
    vals[mask] = torch.randint(-3, 4, (int(mask.sum()),), generator=gen).to(torch.float64)
    return vals.to(dtype)


def make_x(B, T, D, dtype, layout, gen) -> torch.Tensor:
    """An input [B, T, D] in the given memory layout."""
    if layout == "contiguous":
        return random_values((B, T, D), dtype, gen)
    if layout == "transposed":  # stored time-major
        return random_values((T, B, D), dtype, gen).transpose(0, 1)
    if layout == "strided":  # every other feature of a wider tensor
        return random_values((B, T, 2 * D), dtype, gen)[:, :, ::2]
    if layout == "expanded":  # stride 0 along the batch
        return random_values((1, T, D), dtype, gen).expand(B, T, D)
    if layout == "offset":  # a slice with a storage offset and a permuted feature/time storage
        return random_values((B + 1, D, T), dtype, gen)[1:].transpose(1, 2)
    raise ValueError(layout)


LAYOUTS = ("contiguous", "transposed", "strided", "expanded", "offset")


def oracle(x: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
    """Slow loop: out[b, t, j] = x[b, t, j] + table[t, j], in float64, rounded once to x's dtype."""
    B, T, D = x.shape
    xs = x.detach().to(torch.float64).tolist()
    ts = table.detach().to(torch.float64).tolist()
    out = [[[xs[b][t][j] + ts[t][j] for j in range(D)] for t in range(T)] for b in range(B)]
    return torch.tensor(out, dtype=x.dtype).reshape(B, T, D)


def numbers_in(msg: str, *values: int) -> bool:
    return all(re.search(rf"(?<!\d){v}(?!\d)", msg) for v in values)


def call(m, x, case):
    """m(x), with any exception turned into a Fail that names the case."""
    try:
        return m(x)
    except Exception as e:  # noqa: BLE001
        raise Fail(f"{case}: raised {type(e).__name__}: {e}") from e


class DeviceSpy(TorchDispatchMode):
    """Records every op touching a tensor (>= 1 dim) that is not on the expected device."""

    def __init__(self, device: torch.device) -> None:
        super().__init__()
        self.device = device
        self.stray: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        for t in tree_flatten((args, kwargs, out))[0]:
            if isinstance(t, torch.Tensor) and t.dim() >= 1 and t.device != self.device:
                self.stray.append(f"{func} touches a {tuple(t.shape)} tensor on {t.device}")
        return out


# ----------------------------------------------------------------------------------------------- checks


def check_signature(cls):
    init = inspect.signature(cls.__init__)
    names = [p for p in init.parameters if p != "self"]
    if names[:2] != ["max_len", "d_model"] or any(
        init.parameters[n].default is not inspect.Parameter.empty for n in names[:2]
    ):
        raise Fail(f"__init__ signature {init}")
    fwd = inspect.signature(cls.forward)
    if [p for p in fwd.parameters if p != "self"][:1] != ["x"]:
        raise Fail(f"forward signature {fwd}")


def check_parameter(cls, gen):
    for max_len, d in [(1, 1), (1, 5), (2, 3), (7, 1), (16, 4), (33, 8), (300, 2), (1024, 3)]:
        for how in ("positional", "keyword"):
            m = cls(max_len, d) if how == "positional" else cls(max_len=max_len, d_model=d)
            p = the_param(m)
            case = f"{how} {cls.__name__}({max_len}, {d})"
            if not isinstance(p, nn.Parameter):
                raise Fail(f"{case}: the parameter is not an nn.Parameter")
            if tuple(p.shape) != (max_len, d):
                raise Fail(f"{case}: parameter shape {tuple(p.shape)}")
            if not p.requires_grad:
                raise Fail(f"{case}: parameter does not require grad")
            if not torch.isfinite(p).all():
                raise Fail(f"{case}: non-finite starting values")
            for name, buf in m.named_buffers():
                if tuple(buf.shape) == (max_len, d):
                    raise Fail(f"{case}: buffer {name!r} has the table's shape (the table must not be a buffer)")
        a, b = cls(5, 3), cls(5, 3)
        pa, pb = the_param(a), the_param(b)
        if pa is pb or pa.data_ptr() == pb.data_ptr():
            raise Fail("two instances share one table")


def set_table(m, gen):
    p = the_param(m)
    with torch.no_grad():
        p.copy_(random_values(tuple(p.shape), p.dtype, gen))
    return p


def value_cases(rng):
    cases = []
    for max_len in (1, 2, 3, 5, 8, 16, 17, 64, 257):
        for d in (1, 2, 3, 4, 7, 16):
            Ts = {1, max_len, max(1, max_len - 1), max(1, max_len // 2), rng.randint(1, max_len)}
            for T in sorted(Ts):
                B = rng.choice((1, 2, 3, 5))
                if B * T * d > 6000:
                    B = 1
                cases.append((max_len, d, B, T, rng.choice(DTYPES), rng.choice(LAYOUTS)))
    # every layout and dtype at least once on a few fixed shapes
    for dtype in DTYPES:
        for layout in LAYOUTS:
            cases.append((6, 5, 3, 4, dtype, layout))
            cases.append((4, 3, 2, 4, dtype, layout))
    return cases


def check_values(cls, gen, rng):
    count = 0
    for max_len, d, B, T, dtype, layout in value_cases(rng):
        m = cls(max_len, d)
        if dtype == torch.float64:
            m = m.to(torch.float64)
        p = set_table(m, gen)
        case = f"{cls.__name__}({max_len}, {d}) [{str(dtype)[6:]}], x {layout} [{B}, {T}, {d}]"
        if p.dtype != dtype:
            raise Fail(f"{case}: after .to({dtype}) the parameter is {p.dtype}")
        if not p.requires_grad or not isinstance(p, nn.Parameter):
            raise Fail(f"{case}: after .to() the table is no longer a trainable nn.Parameter")
        for round_ in (1, 2):  # round 2: new table values, same module (no stale cache)
            if round_ == 2:
                p = set_table(m, gen)
            x = make_x(B, T, d, dtype, layout, gen)
            before, version = x.clone(), x._version
            out = call(m, x, case)
            want = oracle(x, p)
            if not torch.equal(x, before) or x._version != version:
                raise Fail(f"{case}: x was modified in place")
            if tuple(out.shape) != (B, T, d) or out.dtype != dtype or out.device != x.device:
                raise Fail(f"{case}: out {tuple(out.shape)} {out.dtype} {out.device}, want {(B, T, d)} {dtype}")
            if not torch.equal(out.detach(), want):
                diff = (out.detach().double() - want.double()).abs()
                idx = tuple(int(i) for i in (diff == diff.max()).nonzero()[0])
                raise Fail(
                    f"{case} (round {round_}): out{list(idx)} = {out[idx].item()!r}, spec "
                    f"x + table[{idx[1]}] = {want[idx].item()!r} (max |diff| {diff.max().item():.3g})"
                )
            count += 1
    return count


def check_grads(cls, gen, rng):
    for max_len, d, B, T, dtype, layout in [
        (1, 1, 1, 1, torch.float32, "contiguous"),
        (5, 3, 2, 5, torch.float32, "transposed"),
        (9, 4, 3, 4, torch.float64, "strided"),
        (16, 2, 4, 7, torch.float32, "offset"),
        (8, 6, 2, 8, torch.float64, "contiguous"),
        (33, 5, 3, 20, torch.float32, "contiguous"),
    ]:
        m = cls(max_len, d)
        if dtype == torch.float64:
            m = m.to(torch.float64)
        p = set_table(m, gen)
        x = make_x(B, T, d, dtype, layout, gen).detach().requires_grad_(True)
        g = random_values((B, T, d), dtype, gen)
        case = f"{cls.__name__}({max_len}, {d}) [{str(dtype)[6:]}] x [{B}, {T}, {d}]"
        (call(m, x, case) * g).sum().backward()
        if x.grad is None or not torch.equal(x.grad, g):
            raise Fail(f"{case}: d out / d x is not the identity")
        if p.grad is None:
            raise Fail(f"{case}: the table received no gradient (not trainable)")
        want = g.double().sum(0)
        eps = torch.finfo(dtype).eps
        tol = B * eps * g.double().abs().sum(0) + 1e-300
        if not ((p.grad[:T].double() - want).abs() <= tol).all():
            raise Fail(f"{case}: table.grad[:T] != sum over the batch of the upstream gradient")
        if T < max_len and not torch.equal(p.grad[T:], torch.zeros_like(p.grad[T:])):
            raise Fail(f"{case}: rows >= T of the table received a gradient")


def expect_length_error(m, x, T, max_len, where):
    try:
        out = m(x)
    except (ValueError, IndexError) as e:
        if not numbers_in(str(e), T, max_len):
            raise Fail(f"{where}: {type(e).__name__}({str(e)!r}) does not name both T={T} and max_len={max_len}")
        return
    except Exception as e:  # noqa: BLE001
        raise Fail(f"{where}: raised {type(e).__name__}({e}) instead of ValueError/IndexError")
    raise Fail(f"{where}: no error, returned shape {tuple(out.shape)}")


LENGTH_CASES = [(4, 3, 1, 5), (1, 1, 1, 2), (7, 2, 2, 8), (7, 2, 3, 13), (16, 4, 1, 100), (3, 5, 2, 1000), (2, 1, 50, 9)]


def check_length_limit(cls, gen):
    for max_len, d, B, T in LENGTH_CASES:
        for dtype in DTYPES:
            m = cls(max_len, d).to(dtype)
            where = f"{cls.__name__}({max_len}, {d}) [{str(dtype)[6:]}] on cpu, x [{B}, {T}, {d}]"
            expect_length_error(m, random_values((B, T, d), dtype, gen), T, max_len, where)
            m = m.to("meta")
            where = where.replace("on cpu", "on meta")
            expect_length_error(m, torch.empty(B, T, d, dtype=dtype, device="meta"), T, max_len, where)
    # the boundary T == max_len (and a large batch, B > max_len) must not raise
    for max_len, d, B in [(1, 1, 1), (1, 3, 4), (4, 3, 9), (13, 2, 2)]:
        m = cls(max_len, d)
        x = random_values((B, max_len, d), torch.float32, gen)
        try:
            out = m(x)
        except Exception as e:  # noqa: BLE001
            raise Fail(f"{cls.__name__}({max_len}, {d}) with T == max_len, B={B}: raised {type(e).__name__}: {e}")
        if not torch.equal(out.detach(), oracle(x, the_param(m))):
            raise Fail(f"{cls.__name__}({max_len}, {d}) with T == max_len, B={B}: wrong values")


def check_python_O(path):
    code = textwrap.dedent(
        f"""
        import importlib.util, re, sys, torch
        torch.set_num_threads(1)
        spec = importlib.util.spec_from_file_location("m", {str(path)!r})
        mod = importlib.util.module_from_spec(spec); sys.modules["m"] = mod; spec.loader.exec_module(mod)
        for dev in ("cpu", "meta"):
            m = mod.LearnedPositionalEmbedding(7, 3).to(dev)
            try:
                m(torch.zeros(2, 11, 3, device=dev))
            except (ValueError, IndexError) as e:
                if not (re.search(r"(?<!\\d)11(?!\\d)", str(e)) and re.search(r"(?<!\\d)7(?!\\d)", str(e))):
                    print(dev, "message", repr(str(e))); sys.exit(1)
                continue
            except Exception as e:
                print(dev, type(e).__name__, e); sys.exit(1)
            print(dev, "no error"); sys.exit(1)
        """
    )
    r = subprocess.run([sys.executable, "-O", "-c", code], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise Fail(f"under python -O, T=11 > max_len=7: {(r.stdout + r.stderr).strip()[-300:]}")


def check_device(cls, gen):
    meta = torch.device("meta")
    for max_len, d, B, T, dtype, layout in [
        (5, 3, 2, 5, torch.float32, "contiguous"),
        (9, 4, 3, 1, torch.float64, "contiguous"),
        (16, 2, 2, 7, torch.float32, "transposed"),
    ]:
        m = cls(max_len, d).to(dtype).to(meta)
        p = the_param(m)
        case = f"{cls.__name__}({max_len}, {d}).to({str(dtype)[6:]}).to('meta'), x [{B}, {T}, {d}] {layout}"
        if p.device != meta or not isinstance(p, nn.Parameter) or not p.requires_grad:
            raise Fail(f"{case}: the table did not follow .to(device) as a trainable parameter")
        x = torch.empty(B, T, d, dtype=dtype, device=meta)
        if layout == "transposed":
            x = torch.empty(T, B, d, dtype=dtype, device=meta).transpose(0, 1)
        spy = DeviceSpy(meta)
        with spy:
            out = call(m, x, case)
        if spy.stray:
            raise Fail(f"{case}: helper tensor not on x's device: {spy.stray[0]}")
        if out.device != meta or tuple(out.shape) != (B, T, d) or out.dtype != dtype:
            raise Fail(f"{case}: out {tuple(out.shape)} {out.dtype} {out.device}")


def soft_checks(cls, gen) -> list[str]:
    notes = []
    for B, T in ((2, 0), (0, 3), (0, 0)):
        try:
            m = cls(4, 3)
            x = torch.randn(B, T, 3)
            out = m(x)
            ok = tuple(out.shape) == (B, T, 3)
            notes.append(f"B={B}, T={T}: {'ok' if ok else 'shape ' + str(tuple(out.shape))}")
        except Exception as e:  # noqa: BLE001
            notes.append(f"B={B}, T={T}: {type(e).__name__}: {e}")
    m = cls(4, 3)
    bufs = [n for n, _ in m.named_buffers()]
    if bufs:
        notes.append(f"buffers: {bufs}")
    try:
        m64 = cls(4, 3).to(torch.float64)
        notes.append(f"float32 x + float64 module -> {m64(torch.randn(2, 3, 3)).dtype}")
    except Exception as e:  # noqa: BLE001
        notes.append(f"float32 x + float64 module -> {type(e).__name__}")
    for dt in (torch.float16, torch.bfloat16):
        try:
            m = cls(4, 3).to(dt)
            x = torch.randn(2, 3, 3).to(dt)
            out = m(x)
            exact = torch.equal(out, oracle(x, the_param(m)))
            notes.append(f"{str(dt)[6:]}: {out.dtype} {'exact' if exact else 'NOT exact'}")
        except Exception as e:  # noqa: BLE001
            notes.append(f"{str(dt)[6:]}: {type(e).__name__}")
    return notes


def check_file(path: str, seed: int = 0) -> bool:
    gen = torch.Generator().manual_seed(seed)
    rng = random.Random(seed)
    try:
        cls = load(path).LearnedPositionalEmbedding
    except Exception as e:  # noqa: BLE001
        print(f"FAIL {path}: import: {type(e).__name__}: {e}")
        return False
    results = []
    checks = [
        ("P1 signature", lambda: check_signature(cls)),
        ("P2 one trainable parameter", lambda: check_parameter(cls, gen)),
        ("P3/P6/P7/P8 values (exact)", lambda: check_values(cls, gen, rng)),
        ("P4 gradients", lambda: check_grads(cls, gen, rng)),
        ("P5 length limit", lambda: check_length_limit(cls, gen)),
        ("P5 python -O", lambda: check_python_O(Path(path).resolve())),
        ("P7 device (meta)", lambda: check_device(cls, gen)),
    ]
    ok = True
    for name, fn in checks:
        try:
            r = fn()
            results.append(f"  ok   {name}" + (f" ({r} cases)" if isinstance(r, int) else ""))
        except Fail as e:
            ok = False
            results.append(f"  FAIL {name}: {e}")
        except Exception as e:  # noqa: BLE001
            ok = False
            tb = traceback.format_exception_only(type(e), e)[-1].strip()
            results.append(f"  FAIL {name}: crashed: {tb}")
    print(f"{'PASS' if ok else 'FAIL'} {path}")
    print("\n".join(results))
    print("  soft: " + "; ".join(soft_checks(cls, gen)))
    return ok


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    all_ok = True
    for path in argv:
        all_ok &= check_file(path)
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
