"""Brute-force checker for t5.py written from the spec (the stub's docstrings) alone.

Usage: python check_against_spec.py FILE.py [FILE.py ...]      (exit status 1 if any file disagrees)

Oracle: exact integer arithmetic. For E <= n < max_distance the log offset k = floor(ln(n/E) / ln(M/E) * (N-E))
is the largest k with (n/E)^(N-E) >= (M/E)^k, i.e. n^(N-E) * E^k >= M^k * E^(N-E), all Python ints (no rounding).
Where equality holds (the logarithm lands EXACTLY on a bucket edge) the spec accepts float32 or float64
evaluation, which can round to either side: both E+k and E+k-1 are accepted there, nothing else.
Everywhere else buckets must match exactly (they are integers: tolerance 0). The bias is a pure lookup
(no arithmetic on table values), so it must equal table[bucket, h] bit for bit (tolerance 0).
"""
from __future__ import annotations

import functools
import importlib.util
import math
import random
import sys
import traceback

import torch

torch.set_num_threads(1)
INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)


def load(path):
    spec = importlib.util.spec_from_file_location(f"cand_{abs(hash(path))}", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def params(bidir, nb):
    N = nb // 2 if bidir else nb
    return N, N // 2


def valid(bidir, nb, M):
    N, E = params(bidir, nb)
    return E >= 1 and M > E


@functools.lru_cache(maxsize=None)
def log_offset(n, N, E, M):
    """(k, on_edge) for E <= n < M, exact."""
    D = N - E
    lhs_base = n**D

    def reaches(k):
        return lhs_base * E**k >= M**k * E**D

    k = max(0, min(D, int(math.floor(math.log(n / E) / math.log(M / E) * D))))
    while k < D and reaches(k + 1):
        k += 1
    while k > 0 and not reaches(k):
        k -= 1
    edge = k >= 1 and lhs_base * E**k == M**k * E**D
    return k, edge


@functools.lru_cache(maxsize=None)
def oracle(r, bidir, nb, M):
    """(exact bucket, alternative accepted bucket) for relative position r."""
    N, E = params(bidir, nb)
    if bidir:
        off, n = (N if r > 0 else 0), abs(r)
    else:
        off, n = 0, max(-r, 0)
    if n < E:
        return off + n, off + n
    if n >= M:  # "every distance from max_distance on shares the last bucket" (the formula agrees: k >= N - E)
        return off + N - 1, off + N - 1
    k, edge = log_offset(n, N, E, M)
    b = min(E + k, N - 1)
    alt = min(E + k - 1, N - 1) if edge else b
    return off + b, off + alt


def oracle_tensors(values, bidir, nb, M):
    flat = values.reshape(-1).tolist()
    ex = [oracle(v, bidir, nb, M) for v in flat]
    a = torch.tensor([e[0] for e in ex], dtype=torch.int64).reshape(values.shape)
    b = torch.tensor([e[1] for e in ex], dtype=torch.int64).reshape(values.shape)
    return a, b


def float32_hf(values, bidir, nb, M):
    """Mesh TF / HF evaluation in float32 (informational only)."""
    N, E = params(bidir, nb)
    rp = values.clamp(-M, M)
    if bidir:
        off = (rp > 0).long() * N
        n = rp.abs()
    else:
        off = torch.zeros_like(rp)
        n = (-rp).clamp(min=0)
    large = E + (torch.log(n.clamp(min=E).float() / E) / math.log(M / E) * (N - E)).long()
    large = large.clamp(max=N - 1)
    return off + torch.where(n < E, n, large)


def layouts(vals, rng):
    """The same values in several memory layouts (contiguous, transposed, strided, 3-D permuted)."""
    n = vals.numel()
    yield "1d", vals.clone()
    big = torch.empty(2 * n, dtype=torch.int64)
    big[::2] = vals
    yield "strided", big[::2]
    for a in (2, 3, 5):
        if n % a == 0 and n >= a:
            yield f"transposed({a})", vals.reshape(n // a, a).t().contiguous().t()
            break
    if n % 6 == 0 and n >= 6:
        yield "3d-permuted", vals.reshape(n // 6, 2, 3).permute(2, 0, 1).contiguous().permute(1, 2, 0)


NBS = [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 16, 17, 31, 32, 33, 64, 65, 100, 257, 1000]


def m_choices(E, rng):
    ms = {E + 1, E + 2, 2 * E, 2 * E + 1, 128, 16 * E, 64 * E, rng.randint(E + 1, 5000), 100_003, 2**31 - 1, 2**40 + 7}
    return sorted(m for m in ms if m > E)


def position_values(bidir, nb, M, rng):
    N, E = params(bidir, nb)
    if M <= 300:
        vals = list(range(-(M + 5), M + 6))
    else:
        vals = list(range(-2 * E - 3, 2 * E + 4)) if E < 300 else []
        for _ in range(300):
            mag = int(math.exp(rng.uniform(0, math.log(M * 4))))
            vals.append(rng.choice((-1, 1)) * mag)
        for x in (E - 1, E, E + 1, M - 2, M - 1, M, M + 1, 2 * M):
            vals += [x, -x]
        # the exact bucket edges below M (found from the exact offsets of the log region, small M only)
    vals += [INT64_MAX, -INT64_MAX, 10**12, -(10**12), 0]
    return torch.tensor(vals, dtype=torch.int64)


def edge_positions(bidir, nb, M):
    """Every n < M exactly on an edge (only searched for M <= 20000)."""
    N, E = params(bidir, nb)
    if M > 20000:
        return []
    return [n for n in range(E, M) if log_offset(n, N, E, M)[1]]


class Result:
    def __init__(self):
        self.fail = {}
        self.count = 0

    def bad(self, cat, msg):
        self.fail.setdefault(cat, []).append(msg)


def check_bucket_call(mod, res, values, bidir, nb, M, label, kwargs_style):
    before = values.clone()
    stride_before = values.stride()
    res.count += 1
    try:
        if kwargs_style == 0:
            out = mod.t5_relative_bucket(values, bidir, nb, M)
        elif kwargs_style == 1:
            out = mod.t5_relative_bucket(values, bidirectional=bidir, num_buckets=nb, max_distance=M)
        else:  # defaults when they match
            out = mod.t5_relative_bucket(values) if (bidir, nb, M) == (True, 32, 128) else mod.t5_relative_bucket(
                values, max_distance=M, num_buckets=nb, bidirectional=bidir)
    except Exception as e:  # noqa: BLE001
        res.bad("bucket raises", f"{label}: {type(e).__name__}: {e}")
        return
    if not torch.equal(values, before) or values.stride() != stride_before:
        res.bad("input modified", f"{label}: relative_position changed by the call")
    if not isinstance(out, torch.Tensor) or out.dtype != torch.int64 or out.shape != before.shape:
        res.bad("bucket dtype/shape", f"{label}: got {getattr(out, 'dtype', type(out))} {tuple(getattr(out, 'shape', ()))}")
        return
    exact, alt = oracle_tensors(before, bidir, nb, M)
    ok = (out == exact) | (out == alt)
    if not bool(ok.all()):
        idx = (~ok).nonzero()[0].tolist()
        r = before[tuple(idx)].item()
        res.bad("bucket value", f"{label}: t5_relative_bucket(tensor([{r}]), bidirectional={bidir}, num_buckets={nb}, "
                f"max_distance={M}) -> {out[tuple(idx)].item()}, spec {exact[tuple(idx)].item()}"
                + (f" (or {alt[tuple(idx)].item()})" if alt[tuple(idx)] != exact[tuple(idx)] else ""))
    if out.numel() and (out.min() < 0 or out.max() > nb - 1):
        res.bad("bucket range", f"{label}: bucket outside 0..{nb - 1}")


def run_buckets(mod, res, rng, stats):
    for bidir in (True, False):
        for nb in NBS:
            N, E = params(bidir, nb)
            if E < 1:
                continue
            for M in m_choices(E, rng):
                vals = position_values(bidir, nb, M, rng)
                edges = edge_positions(bidir, nb, M)
                if edges:
                    vals = torch.cat([vals, torch.tensor(edges + [-e for e in edges], dtype=torch.int64)])
                vals = vals[torch.randperm(vals.numel(), generator=torch.Generator().manual_seed(rng.randint(0, 10**9)))]
                for li, (lname, v) in enumerate(layouts(vals, rng)):
                    check_bucket_call(mod, res, v, bidir, nb, M, f"bidir={bidir} nb={nb} M={M} {lname}", li % 3)
                # monotone in distance, each direction (spec rule), small M only
                if M <= 3000:
                    n = torch.arange(0, M + 4)
                    for sign in ((1, -1) if bidir else (-1,)):
                        try:
                            b = mod.t5_relative_bucket(sign * n, bidir, nb, M)
                            if bool((b[1:] < b[:-1]).any()):
                                res.bad("monotone", f"bidir={bidir} nb={nb} M={M} sign={sign}")
                        except Exception as e:  # noqa: BLE001
                            res.bad("bucket raises", f"monotone bidir={bidir} nb={nb} M={M}: {e}")
                if stats is not None:
                    exact, alt = oracle_tensors(vals, bidir, nb, M)
                    f32 = float32_hf(vals, bidir, nb, M)
                    on_edge = alt != exact
                    stats["f32_edge_diff"] += int(((f32 != exact) & on_edge).sum())
                    stats["edges"] += int(on_edge.sum())
                    nonedge = (f32 != exact) & ~on_edge
                    if bool(nonedge.any()):
                        i = nonedge.nonzero()[0, 0]
                        stats["f32_nonedge"].append((bidir, nb, M, vals[i].item(), f32[i].item(), exact[i].item()))
    # shapes: 0-d, empty, the public defaults
    for label, t in (("0-d", torch.tensor(-20)), ("empty", torch.empty(0, dtype=torch.int64)),
                     ("empty-2d", torch.empty(3, 0, dtype=torch.int64)),
                     ("defaults", torch.arange(-300, 301).reshape(601, 1))):
        check_bucket_call(mod, res, t, True, 32, 128, label, 2)


def make_table(nb, H, dtype, layout, gen):
    base = torch.randn(nb, H, generator=gen, dtype=torch.float64)
    if layout == "contiguous":
        t = base.to(dtype)
    elif layout == "transposed":
        t = base.t().contiguous().to(dtype).t()
    else:  # strided columns
        wide = torch.zeros(nb, 2 * H, dtype=dtype)
        wide[:, ::2] = base.to(dtype)
        t = wide[:, ::2]
    return t


def run_bias(mod, res, rng, extra):
    gen = torch.Generator().manual_seed(1234)
    lens = [1, 2, 3, 5, 8, 17, 40]
    dtypes = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
    n = 0
    for bidir in (True, False):
        for nb in [2, 3, 4, 5, 7, 8, 9, 16, 17, 32, 33, 64]:
            N, E = params(bidir, nb)
            if E < 1:
                continue
            for M in sorted({E + 1, 2 * E, 16 * E, 128, rng.randint(E + 1, 60)} - {m for m in range(0, E + 1)}):
                for _ in range(2):
                    Tq, Tk = rng.choice(lens), rng.choice(lens)
                    H = rng.choice([1, 2, 3, 8])
                    dtype = dtypes[n % 4]
                    layout = ("contiguous", "transposed", "strided")[(n // 4) % 3]
                    n += 1
                    table = make_table(nb, H, dtype, layout, gen)
                    before = table.clone()
                    label = f"bias(table[{nb},{H}] {dtype} {layout}, {Tq}, {Tk}, bidirectional={bidir}, max_distance={M})"
                    res.count += 1
                    try:
                        if (bidir, M) == (True, 128) and n % 2:
                            out = mod.t5_relative_bias(table, Tq, Tk)
                        elif n % 2:
                            out = mod.t5_relative_bias(table, Tq, Tk, bidir, M)
                        else:
                            out = mod.t5_relative_bias(table, query_len=Tq, key_len=Tk, max_distance=M, bidirectional=bidir)
                    except Exception as e:  # noqa: BLE001
                        res.bad("bias raises", f"{label}: {type(e).__name__}: {e}")
                        continue
                    if not torch.equal(table, before):
                        res.bad("input modified", f"{label}: table changed")
                    if out.shape != (H, Tq, Tk) or out.dtype != dtype:
                        res.bad("bias dtype/shape", f"{label}: got {out.dtype} {tuple(out.shape)}")
                        continue
                    rel = torch.arange(Tk)[None, :] - torch.arange(Tq)[:, None]
                    ex, alt = oracle_tensors(rel, bidir, nb, M)
                    want, want2 = before[ex].permute(2, 0, 1), before[alt].permute(2, 0, 1)
                    ok = (out == want) | (out == want2)
                    if not bool(ok.all()):
                        h, i, j = (~ok).nonzero()[0].tolist()
                        res.bad("bias value", f"{label}: bias[{h},{i},{j}] (j-i={j - i}) = {out[h, i, j].item()}, "
                                f"spec table[{ex[i, j].item()},{h}] = {want[h, i, j].item()}")
    # informational extras (not spec promises): zero lengths, autograd, INT64_MIN
    try:
        t = torch.randn(32, 4)
        o = mod.t5_relative_bias(t, 0, 5)
        extra.append(f"Tq=0 -> shape {tuple(o.shape)}")
    except Exception as e:  # noqa: BLE001
        extra.append(f"Tq=0 raises {type(e).__name__}")
    try:
        t = torch.randn(32, 4, requires_grad=True)
        mod.t5_relative_bias(t, 3, 4).sum().backward()
        extra.append("grad flows" if t.grad is not None and t.grad.abs().sum() > 0 else "no grad")
    except Exception as e:  # noqa: BLE001
        extra.append(f"autograd raises {type(e).__name__}")
    try:
        o = mod.t5_relative_bucket(torch.tensor([INT64_MIN, INT64_MIN]), True, 32, 128).tolist()
        o2 = mod.t5_relative_bucket(torch.tensor([INT64_MIN]), False, 32, 128).tolist()
        extra.append(f"INT64_MIN -> {o[0]} (bidir, oracle 15), {o2[0]} (causal, oracle 31)")
    except Exception as e:  # noqa: BLE001
        extra.append(f"INT64_MIN raises {type(e).__name__}")


def main(paths):
    any_bad = False
    stats = {"f32_edge_diff": 0, "edges": 0, "f32_nonedge": []}
    for pi, path in enumerate(paths):
        rng = random.Random(20240)
        torch.manual_seed(0)
        res = Result()
        extra = []
        try:
            mod = load(path)
            run_buckets(mod, res, rng, stats if pi == 0 else None)
            run_bias(mod, res, rng, extra)
        except Exception:  # noqa: BLE001
            res.bad("crash", traceback.format_exc(limit=3))
        status = "AGREES" if not res.fail else "DISAGREES"
        any_bad |= bool(res.fail)
        print(f"{path}: {status} ({res.count} calls) | info: {'; '.join(extra)}")
        for cat, msgs in res.fail.items():
            print(f"   [{cat}] x{len(msgs)}: {msgs[0]}")
    if stats["edges"]:
        print(f"info: {stats['edges']} exact-edge positions tested; the float32 (Mesh TF) evaluation rounds below "
              f"at {stats['f32_edge_diff']} of them; float32 differs off-edge at {len(stats['f32_nonedge'])} configs"
              + (f", e.g. (bidir, nb, M, r, f32, exact) = {stats['f32_nonedge'][:3]}" if stats["f32_nonedge"] else ""))
    return 1 if any_bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
