"""Brute-force check of t5 submissions against the spec in exercises/t5.py (written from the docstring only).

    python tests/corpus/batch6/check_against_spec.py FILE... [--n 300] [--seed 6] [--public]

reference_bucket() is the spec's formula, one distance at a time, in exact arithmetic (Decimal, 60 digits):
bucket = n for n < E, else min(E + floor(ln(n/E) / ln(max_distance/E) * (N - E)), N - 1). Where the exact value
lands ON a bucket edge (an integer), the spec accepts float32 or float64, which may round either way, so both
floor(v) and floor(v) - 1 are accepted there (except at n = E: ln 1 = 0 in every format), except from max_distance on, where the rule "every distance from
max_distance on shares the last bucket" leaves only N - 1. Everywhere else exactly one bucket is accepted.
"""

from __future__ import annotations

import argparse
import copy
import decimal
import functools
import importlib.util
import math
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

decimal.getcontext().prec = 60
ROOT = Path(__file__).resolve().parents[3]


@functools.cache
def accepted_in_direction(n: int, per_direction: int, max_distance: int) -> frozenset:
    """the buckets 0 .. N - 1 the spec accepts for distance n >= 0 in one direction (N buckets)."""
    exact = per_direction // 2
    if n < exact:
        return frozenset({n})
    if n >= max_distance:
        return frozenset({per_direction - 1})
    D = decimal.Decimal
    v = (D(n) / D(exact)).ln() / (D(max_distance) / D(exact)).ln() * (per_direction - exact)
    k = int(v.to_integral_value(rounding=decimal.ROUND_FLOOR))
    options = {k}
    if v > 0 and abs(v - v.to_integral_value()) < D("1e-45"):  # on an edge (not n = E, where ln 1 = 0 exactly)
        options = {int(v.to_integral_value()), int(v.to_integral_value()) - 1}
    return frozenset(min(exact + o, per_direction - 1) for o in options)


def accepted(rp: int, bidirectional: bool, num_buckets: int, max_distance: int) -> frozenset:
    if bidirectional:
        per = num_buckets // 2
        base = per if rp > 0 else 0
        return frozenset(base + b for b in accepted_in_direction(abs(rp), per, max_distance))
    return accepted_in_direction(max(-rp, 0), num_buckets, max_distance)


def reference_bucket(rp, bidirectional=True, num_buckets=32, max_distance=128) -> int:
    """one spec bucket (the exact-arithmetic one; at an edge, the upper choice)."""
    return max(accepted(rp, bidirectional, num_buckets, max_distance))


def load(path: str):
    spec = importlib.util.spec_from_file_location(Path(path).stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def config(rng: random.Random):
    bidirectional = rng.random() < 0.5
    pick = rng.random()
    if pick < 0.25:
        num_buckets = 32
    elif pick < 0.6:
        num_buckets = rng.choice([4, 5, 6, 7, 8, 9, 16, 17, 31, 33, 64, 65, 128, 129]) if bidirectional else rng.choice(
            [2, 3, 4, 5, 7, 8, 16, 17, 31, 32, 33, 64, 128, 129])
    else:
        num_buckets = rng.randint(4 if bidirectional else 2, 300)
    per = num_buckets // 2 if bidirectional else num_buckets
    exact = per // 2
    pick = rng.random()
    if pick < 0.2:
        max_distance = max(128, exact + 1)
    elif pick < 0.45:
        max_distance = exact + rng.randint(1, 4)  # just beyond the exact buckets: buckets skipped
    elif pick < 0.8:
        max_distance = rng.randint(exact + 1, 1000)
    else:
        max_distance = int(math.exp(rng.uniform(math.log(exact + 1), math.log(10 ** 6))))
    max_distance = max(max_distance, exact + 1)
    return bidirectional, num_buckets, max_distance


def positions(rng: random.Random, max_distance: int) -> list[int]:
    span = min(max_distance + 3, 3000)
    values = list(range(-span, span + 1))
    values += [rng.randint(-3 * max_distance, 3 * max_distance) for _ in range(200)]
    values += [max_distance - 1, max_distance, max_distance + 1, -max_distance + 1, -max_distance, -max_distance - 1]
    values += [10 ** 9, -(10 ** 9), 10 ** 15, -(10 ** 15), 2 ** 40 + 1, -(2 ** 40) - 1]
    rng.shuffle(values)
    return values


def check_buckets(module, rng, cfg, problems):
    bidirectional, num_buckets, max_distance = cfg
    values = positions(rng, max_distance)
    shape_pick = rng.random()
    rp = torch.tensor(values, dtype=torch.int64)
    if shape_pick < 0.3 and len(values) % 2 == 0:
        rp = rp.reshape(2, -1).t()  # non-contiguous [L/2, 2]
    elif shape_pick < 0.5:
        rp = rp.reshape(1, -1, 1)
    before = rp.clone()
    args = dict(bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance)
    out = module.t5_relative_bucket(rp, **args)
    if not torch.equal(rp, before):
        problems.append(f"t5_relative_bucket(..., **{args}) modified relative_position")
        rp = before
    if not isinstance(out, torch.Tensor) or out.dtype != torch.int64 or out.shape != rp.shape:
        problems.append(f"{args}: got {type(out).__name__} {getattr(out, 'dtype', None)} {getattr(out, 'shape', None)}")
        return
    for r, b in zip(rp.reshape(-1).tolist(), out.reshape(-1).tolist()):
        ok = accepted(r, bidirectional, num_buckets, max_distance)
        if b not in ok:
            problems.append(f"t5_relative_bucket(tensor([{r}]), **{args}) = {b}, spec: {sorted(ok)}")
            return
    # 0-dim and empty inputs
    out0 = module.t5_relative_bucket(torch.tensor(values[0]), **args)
    if out0.shape != () or out0.item() not in accepted(values[0], bidirectional, num_buckets, max_distance):
        problems.append(f"0-dim input {values[0]} with {args}: got {out0}")
    empty = module.t5_relative_bucket(torch.zeros(0, 3, dtype=torch.int64), **args)
    if empty.shape != (0, 3) or empty.dtype != torch.int64:
        problems.append(f"empty input with {args}: got {empty.shape} {empty.dtype}")


def check_bias(module, rng, problems):
    bidirectional = rng.random() < 0.5
    num_buckets = rng.choice([32, 32, 4, 7, 9, 16, 33, 64]) if bidirectional else rng.choice([32, 2, 3, 8, 17, 64])
    per = num_buckets // 2 if bidirectional else num_buckets
    exact = per // 2
    max_distance = rng.choice([128, exact + 1, exact + 3, rng.randint(exact + 1, 60)])
    n_heads = rng.choice([1, 2, 3, 8])
    tq, tk = rng.randint(1, 40), rng.randint(1, 40)
    if rng.random() < 0.1:
        tq, tk = rng.choice([(1, 1), (1, 60), (60, 1), (0, 5), (5, 0)])
    dtype = rng.choice([torch.float32, torch.float32, torch.float64, torch.bfloat16, torch.float16])
    transposed = rng.random() < 0.4
    if transposed:
        table = torch.randn(n_heads, num_buckets, dtype=torch.float64).to(dtype).t()
    else:
        table = torch.randn(num_buckets, n_heads, dtype=torch.float64).to(dtype)
    before = table.clone()
    args = dict(bidirectional=bidirectional, max_distance=max_distance)
    desc = f"t5_relative_bias(table[{num_buckets}, {n_heads}] {dtype}{' transposed' if transposed else ''}, {tq}, {tk}, **{args})"
    try:
        bias = module.t5_relative_bias(table, tq, tk, **args)
    except Exception as exc:  # noqa: BLE001
        problems.append(f"{desc} raised {type(exc).__name__}: {exc}")
        return
    if not torch.equal(table, before):
        problems.append(f"{desc} modified the table")
    if not isinstance(bias, torch.Tensor) or bias.shape != (n_heads, tq, tk) or bias.dtype != dtype:
        problems.append(f"{desc}: got {getattr(bias, 'shape', None)} {getattr(bias, 'dtype', None)}")
        return
    for i in range(tq):
        for j in range(tk):
            ok = accepted(j - i, bidirectional, num_buckets, max_distance)
            for h in range(n_heads):
                if not any(torch.equal(bias[h, i, j], table[b, h]) for b in ok):
                    problems.append(f"{desc}: bias[{h}, {i}, {j}] = {bias[h, i, j].item()}, spec: table[{sorted(ok)}, {h}]")
                    return


def run_public(path: str) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        ex = Path(tmp) / "exercises"
        ex.mkdir()
        shutil.copy(path, ex / "t5.py")
        shutil.copy(ROOT / "exercises" / "conftest.py", ex / "conftest.py")
        shutil.copy(ROOT / "exercises" / "test_t5.py", ex / "test_t5.py")
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(ex)],
                              cwd=tmp, capture_output=True, text=True)
        return proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-300:]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("files", nargs="+")
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--seed", type=int, default=6)
    parser.add_argument("--public", action="store_true")
    args = parser.parse_args()
    for path in args.files:
        module = load(path)
        rng = random.Random(args.seed)
        problems: list[str] = []
        for _ in range(args.n):
            cfg = config(rng)
            try:
                check_buckets(module, rng, cfg, problems)
            except Exception as exc:  # noqa: BLE001
                problems.append(f"{cfg} raised {type(exc).__name__}: {exc}")
            check_bias(module, rng, problems)
            if len(problems) > 3:
                break
        status = "OK" if not problems else "DISAGREES"
        print(f"{Path(path).name}: {status}" + (f"  [public: {run_public(path)}]" if args.public else ""))
        for p in problems[:3]:
            print("   ", p)


if __name__ == "__main__":
    main()
