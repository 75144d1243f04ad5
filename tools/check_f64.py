#!/usr/bin/env python3
"""Check the float64 kernels against mpmath (50 digits) on >= 1e5 sample inputs per function.

  python tools/check_f64.py                        # the six ufuncs of fastgelu.ufuncs
  python tools/check_f64.py --only gelu,gelu_grad --module harness -n 200000
  python tools/check_f64.py --record               # also put the maxima into docs/data/accuracy.csv

Samples (fastgelu/_reference.py dense_sample plus extras): specials, +-0, subnormals, randn, dense near 0,
the dip at -0.7518, [-40, -30] (where an inexact x^2/2 alone costs > 1000 ulp), the negative tail down
to underflow (~ -38.6), tiny |x| and huge |x|. Prints max ULP and the worst input per function; exit
status 1 if any exceeds 4 ULP or fails an IEEE special case. mpmath runs in --procs worker processes.
"""
import argparse
import importlib
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _reference as R  # noqa: E402
import accuracy_data  # noqa: E402


def samples(n, seed=0):
    rng = np.random.default_rng(seed)
    extra = [
        rng.uniform(-40.0, -30.0, n // 8),
        rng.uniform(-39.0, -37.0, n // 32),          # subnormal results
        rng.uniform(-8.0, 8.0, n // 8),
        rng.uniform(-1.05, 1.05, n // 16),           # piece boundaries at 1, 2, 4
        rng.uniform(1.9, 2.1, n // 32) * np.sign(rng.standard_normal(n // 32)),
        rng.uniform(3.9, 4.1, n // 32) * np.sign(rng.standard_normal(n // 32)),
        np.sign(rng.standard_normal(n // 32)) * 10.0 ** rng.uniform(-300, -1, n // 32),
    ]
    return np.concatenate([R.dense_sample(np.float64, n, seed)] + extra)


def _ref_chunk(args):
    name, x = args
    return R.ref_mp(name, x, dps=50)


def check(module, name, n, procs, limit=4.0):
    import multiprocessing as mp

    t0 = time.time()
    f = getattr(importlib.import_module(module), name)
    x = samples(n)
    with np.errstate(all="ignore"):
        y = f(x, np.ones_like(x)) if name.endswith("_grad") else f(x)
    parts = np.array_split(x, 8 * procs)
    with mp.get_context("spawn").Pool(procs) as pool:
        res = pool.map(_ref_chunk, [(name, p) for p in parts])
    ref = np.concatenate([r[0] for r in res])
    scale = np.concatenate([r[1] for r in res])
    err = R.ulp_error(y, ref, scale, np.float64)
    i = int(np.argmax(err))
    bad = R.special_failures_one(name, f, np.float64)
    print(f"{name:18s} max {err[i]:.3f} ulp at x={x[i]!r} (got {y[i]!r}, want {ref[i]!r}); "
          f">2 ulp: {(err > 2).sum()}, >4 ulp: {(err > 4).sum()} of {len(x)}; "
          f"specials {'ok' if not bad else 'FAIL'} [{time.time() - t0:.0f}s]", flush=True)
    for msg in bad:
        print("    special:", msg)
    return err[i] <= limit and not bad, float(err[i]), repr(float(x[i]))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--module", default="fastgelu.ufuncs", help="module holding the functions")
    ap.add_argument("--only", default=",".join(R.NAMES), help="comma-separated function names")
    ap.add_argument("-n", type=int, default=100_000, help="size of the base sample (total is ~1.5x)")
    ap.add_argument("--procs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--record", nargs="?", const=str(accuracy_data.DEFAULT), metavar="CSV",
                    help="put each function's maximum into CSV (default docs/data/accuracy.csv); only for the "
                    "default sample of fastgelu's ufuncs")
    args = ap.parse_args()
    if args.record and (args.n != 100_000 or args.module != "fastgelu.ufuncs"):
        ap.error("--record takes the default check of fastgelu's ufuncs only (the default -n and --module)")
    ok = True
    rows = []
    for name in args.only.split(","):
        passed, err, worst = check(args.module, name.strip(), args.n, args.procs)
        ok &= passed
        rows.append({"function": name.strip(), "dtype": "float64", "check": "mpmath", "bound": 4,
                     "max_ulp": f"{err:.3f}", "worst": worst})
    print("PASS: all within 4 ulp" if ok else "FAIL")
    if args.record and ok:
        import fastgelu
        accuracy_data.record([r | {"build": fastgelu.get_config()["isa"]} for r in rows], args.record)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
