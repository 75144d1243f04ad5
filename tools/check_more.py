#!/usr/bin/env python3
"""The accuracy checks beside the float32 sweep and the float64 mpmath check:

  python tools/check_more.py half       # float16 and bfloat16: the six functions on all 65,536 inputs each
  python tools/check_more.py dy         # the three float32 gradients times a random dy (40M inputs each)
  python tools/check_more.py half dy --record   # both, maxima into docs/data/accuracy.csv

half: every finite 16-bit input, judged in ULPs of the 16-bit result (gradients with dy = 1); the forwards
must be correctly rounded (0.5 ULP), the gradients within 1 ULP. dy: x uniform in [-12, 12] and dy = +-[1, 2)
* 2^k with k uniform in [-20, 20), judged against the float64 reference times dy in ULPs of the larger of the
gradient's two terms times |dy| (as tests/test_values.py does); bound 5 ULP (dy * GELU'(x) is GELU'(x)'s
error, up to 2 ULP of a scale whose ULP may be half that of the product's, plus the product's rounding).
The build is the one this CPU selects, or FASTGELU_ISA's. Exit status 1 beyond a bound.
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _reference as R  # noqa: E402
import accuracy_data  # noqa: E402

DY_N, DY_CHUNK = 40_000_000, 1 << 21


def check_half(uf):
    """Rows for float16 and bfloat16 (bfloat16 only with ml_dtypes installed)."""
    dtypes = [np.dtype(np.float16)]
    if uf.BFLOAT16 is not None:
        dtypes.append(np.dtype(uf.BFLOAT16))
    rows = []
    for dtype in dtypes:
        x = np.arange(1 << 16, dtype=np.uint16).view(dtype)
        with np.errstate(invalid="ignore"):     # signaling NaN patterns
            x = x[np.isfinite(x.astype(np.float32))]
        for name in R.NAMES:
            f = getattr(uf, name)
            y = f(x, np.ones_like(x)) if name.endswith("_grad") else f(x)
            ref, scale = R.ref64(name, x.astype(np.float64))
            err = R.ulp_error(y, ref, scale, dtype)
            i = int(np.argmax(err))
            bound = 1 if name.endswith("_grad") else 0.5
            print(f"{dtype.name:9s} {name:18s} max {err[i]:.3f} ulp at x={float(x[i])!r} (bound {bound})")
            rows.append({"function": name, "dtype": dtype.name, "check": "all16", "bound": bound,
                         "max_ulp": f"{err[i]:.3f}", "worst": repr(float(x[i])), "ok": err[i] <= bound + 1e-9})
    return rows


def check_dy(uf, seed=0):
    """Rows for the three float32 gradients with a random dy."""
    rows = []
    for name in R.NAMES[3:]:
        f = getattr(uf, name)
        rng = np.random.default_rng(seed)
        worst = (-1.0, 0.0, 0.0)
        for start in range(0, DY_N, DY_CHUNK):
            n = min(DY_CHUNK, DY_N - start)
            x = rng.uniform(-12, 12, n).astype(np.float32)
            dy = (rng.uniform(1, 2, n) * rng.choice([-1.0, 1.0], n) * 2.0 ** rng.integers(-20, 20, n)).astype(
                np.float32)
            ref, scale = R.ref64(name, x.astype(np.float64))
            d = dy.astype(np.float64)
            err = R.ulp_error(f(x, dy), ref * d, scale * np.abs(d), np.float32)
            i = int(np.argmax(err))
            if err[i] > worst[0]:
                worst = (float(err[i]), float(x[i]), float(dy[i]))
        e, xw, dw = worst
        print(f"float32   {name:18s} max {e:.3f} ulp at x={xw!r}, dy={dw!r} (bound 5)")
        rows.append({"function": name, "dtype": "float32", "check": "dy", "bound": 5, "max_ulp": f"{e:.3f}",
                     "worst": f"{xw!r} (dy={dw!r})", "ok": e <= 5})
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("checks", nargs="+", choices=("half", "dy"))
    ap.add_argument("--record", nargs="?", const=str(accuracy_data.DEFAULT), metavar="CSV",
                    help="put each maximum into CSV (default docs/data/accuracy.csv)")
    args = ap.parse_args()
    from fastgelu import get_config, ufuncs
    print(f"fastgelu {get_config()['isa']} build")
    rows = []
    for c in dict.fromkeys(args.checks):
        rows += check_half(ufuncs) if c == "half" else check_dy(ufuncs)
    ok = all(r.pop("ok") for r in rows)
    print("PASS" if ok else "FAIL")
    if args.record and ok:
        accuracy_data.record([r | {"build": get_config()["isa"]} for r in rows], args.record)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
