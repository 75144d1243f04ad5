#!/usr/bin/env python3
"""Check fastgelu's float32 functions on EVERY float32 input (all 2^32 bit patterns) against float64 references.

  python tools/sweep_f32.py                       # all six ufuncs of fastgelu.ufuncs, the build this CPU selects
  python tools/sweep_f32.py --only gelu,gelu_grad # some of them
  python tools/sweep_f32.py --isa avx2 --stride 16  # another build, on every 16th input
  python tools/sweep_f32.py --module harness      # functions named gelu, gelu_grad, ... from another module
  python tools/sweep_f32.py --gated               # the gated ufuncs: every 64th gate against 16 (up, dy) pairs
  python tools/sweep_f32.py --record              # also put the maxima into docs/data/accuracy.csv

Gated functions (gelu_mul, gelu_tanh_mul, gelu_sigmoid_mul and their _grad): each gate checked is paired
with every (up, dy) of GATED_FACTORS -- +-0, subnormals, 1, huge, +-inf, NaN -- and judged against the exact
product (f(gate) * up; the gradient's dgate = dy * up * f'(gate) as GELU' is judged, times |dy * up|, and
dup = dy * f(gate)), limit 3 ULP (issue 31). --stride applies to the gates (default 64 with --gated: 2^30
evaluations per function, a quarter of --stride 16's).

Errors are in ULPs as defined in fastgelu/_reference.py (gradients with dy = 1, counted in ULPs of the larger
of their two terms). The references are that file's formulas compiled from tools/sweep_ref.c (one pass in C,
where NumPy+SciPy take several; `--ref numpy` uses _reference.py itself). Prints per function: max ULP with the
worst input (value and bits), how many inputs exceed 1 and 2 ULP, and the IEEE special cases. Exit status 1 if
any function exceeds 2 ULP or fails a special case. The inputs are processed in chunks of 2^24 bit patterns
by --procs worker processes (spawned, not forked: GNU libgomp's thread pool does not survive fork).
"""
import argparse
import ctypes
import importlib
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _reference as R  # noqa: E402
import accuracy_data  # noqa: E402

CHUNK_BITS = 24
_func = None
_cref = None

GATED = ("gelu_mul", "gelu_tanh_mul", "gelu_sigmoid_mul", "gelu_mul_grad", "gelu_tanh_mul_grad",
         "gelu_sigmoid_mul_grad")
_F32_MAX = float(np.finfo(np.float32).max)
# (up, dy) pairs every gate meets: zeros, subnormals, 1, ordinary, huge (products that overflow float32 while
# GELU(gate) * up need not), +-inf and NaN
GATED_FACTORS = np.array([
    (0.0, 1.0), (-0.0, -2.5), (1e-45, 3e38), (-1e-40, 1e10), (1.0, 1.0), (-1.0, 0.5), (0.7, -3.0),
    (_F32_MAX, 1.0), (-_F32_MAX, 7.0), (1e30, 1e10), (-1e20, -1e-30), (np.inf, 1.0), (-np.inf, 2.0),
    (np.nan, 1.0), (2.5, np.inf), (1e-30, 0.0)], dtype=np.float32)


def build_c_reference(folder):
    """Compile tools/sweep_ref.c into a shared library in `folder`; its path."""
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sweep_ref.c")
    lib = os.path.join(folder, "sweep_ref.so")
    cc = os.environ.get("CC", "cc")
    subprocess.run([cc, "-O2", "-ffp-contract=off", "-fPIC", "-shared", src, "-o", lib, "-lm"], check=True)
    return lib


def load_c_reference(path):
    lib = ctypes.CDLL(path)
    ptr = ctypes.c_void_p
    lib.sweep_chunk.argtypes = [ctypes.c_int, ptr, ptr, ctypes.c_int64, ptr]
    lib.sweep_chunk.restype = None
    lib.ref_values.argtypes = [ctypes.c_int, ptr, ctypes.c_int64, ptr, ptr]
    lib.ref_values.restype = None
    lib.sweep_product.argtypes = [ctypes.c_int, ptr, ptr, ptr, ctypes.c_int64, ptr, ctypes.c_int64, ptr]
    lib.sweep_product.restype = None
    return lib


def _init(module, name, threads, isa, cref):
    global _func, _cref
    os.environ["OMP_NUM_THREADS"] = str(threads)
    if isa:
        os.environ["FASTGELU_ISA"] = isa
    _func = getattr(importlib.import_module(module), name)
    _cref = load_c_reference(cref) if cref else None


def _gated_chunk(name, bits):
    """Every gate of `bits` against every (up, dy) of GATED_FACTORS; (max ULP, bits of the worst gate, factor
    index of the worst, count > 1, count > 2) over all outputs."""
    k = len(GATED_FACTORS)
    gates = np.ascontiguousarray(bits.view(np.float32))
    x = np.repeat(gates, k)
    up = np.tile(GATED_FACTORS[:, 0], len(bits))
    dy = np.tile(GATED_FACTORS[:, 1], len(bits))
    fup, fdy = np.ascontiguousarray(GATED_FACTORS[:, 0]), np.ascontiguousarray(GATED_FACTORS[:, 1])
    base = R.NAMES.index(name.replace("_mul", "").replace("_grad", ""))
    if name.endswith("_grad"):
        dgate, dup = _func(x, up, dy)
        checks = [(base + 3, fdy, fup, dgate), (base, fdy, None, dup)]
    else:
        checks = [(base, fup, None, _func(x, up))]
    worst, at, n1, n2 = -1.0, 0, 0, 0
    out = np.empty(4)
    for f, a, b, y in checks:
        y = np.ascontiguousarray(y, np.float32)
        _cref.sweep_product(f, gates.ctypes.data, a.ctypes.data, None if b is None else b.ctypes.data, k,
                            y.ctypes.data, len(gates), out.ctypes.data)
        if out[0] > worst:
            worst, at = float(out[0]), int(out[1])
        n1 += int(out[2])
        n2 += int(out[3])
    return worst, int(bits[at // k]) | ((at % k) << 32), n1, n2


def _chunk(args):
    name, k, stride = args
    bits = np.arange(k << CHUNK_BITS, (k + 1) << CHUNK_BITS, stride, dtype=np.uint64).astype(np.uint32)
    if name in GATED:
        return _gated_chunk(name, bits)
    x = bits.view(np.float32)
    y = _func(x, np.ones_like(x)) if name.endswith("_grad") else _func(x)
    if _cref is not None:
        out = np.empty(4)
        _cref.sweep_chunk(R.NAMES.index(name), x.ctypes.data, np.ascontiguousarray(y, np.float32).ctypes.data,
                          len(x), out.ctypes.data)
        return float(out[0]), int(bits[int(out[1])]), int(out[2]), int(out[3])
    with np.errstate(all="ignore"):
        ref, scale = R.ref64(name, x.astype(np.float64))
    err = R.ulp_error(y, ref, scale, np.float32)
    i = int(np.argmax(err))
    return float(err[i]), int(bits[i]), int((err > 1).sum()), int((err > 2).sum())


def sweep(module, name, procs, threads, limit=2.0, stride=1, isa=None, cref=None):
    import multiprocessing as mp

    t0 = time.time()
    nchunks = 1 << (32 - CHUNK_BITS)
    ctx = mp.get_context("spawn")
    worst = (-1.0, 0)
    n1 = n2 = 0
    tasks = [(name, k, stride) for k in range(nchunks)]
    with ctx.Pool(procs, initializer=_init, initargs=(module, name, threads, isa, cref)) as pool:
        for e, b, c1, c2 in pool.imap_unordered(_chunk, tasks):
            if e > worst[0]:
                worst = (e, b)
            n1 += c1
            n2 += c2
    _init(module, name, threads, isa, None)
    e, b = worst
    if name in GATED:
        bad = []
        xw = np.array([b & 0xFFFFFFFF], np.uint32).view(np.float32)[0]
        up, dy = GATED_FACTORS[b >> 32]
        where = f"gate={xw!r} (0x{b & 0xFFFFFFFF:08x}), up={up!r}" + (f", dy={dy!r}" if name.endswith("_grad") else "")
    else:
        bad = R.special_failures_one(name, _func, np.float32)
        xw = np.array([b], np.uint32).view(np.float32)[0]
        where = f"x={xw!r} (0x{b:08x})"
    print(f"{name:18s} max {e:.3f} ulp at {where}; >1 ulp: {n1}, >2 ulp: {n2}; "
          f"specials {'ok' if not bad else 'FAIL'} [{time.time() - t0:.0f}s]", flush=True)
    for msg in bad:
        print("    special:", msg)
    # str(), not format(): NumPy formats a float32 scalar as the double it widens to
    worst = str(xw) if name not in GATED else \
        f"gate={xw!s}, up={up!s}" + (f", dy={dy!s}" if name.endswith("_grad") else "")
    return e <= limit and not bad, e, worst


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--module", default="fastgelu.ufuncs", help="module holding the functions")
    ap.add_argument("--only", default=None, help="comma-separated function names (default: the six GELU "
                    "functions, or with --gated the six gated ones)")
    ap.add_argument("--gated", action="store_true", help="sweep the gated functions (limit 3 ULP)")
    ap.add_argument("--procs", type=int, default=os.cpu_count() or 1, help="worker processes")
    ap.add_argument("--threads", type=int, default=1, help="OMP_NUM_THREADS inside each worker")
    ap.add_argument("--isa", default=None, help="FASTGELU_ISA for the workers (avx512, avx2, generic)")
    ap.add_argument("--stride", type=int, default=None,
                    help="check every STRIDE-th bit pattern (default 1: all 2^32; with --gated 64)")
    ap.add_argument("--ref", choices=("c", "numpy"), default="c",
                    help="reference: tools/sweep_ref.c compiled with $CC (default), or _reference.py")
    ap.add_argument("--record", nargs="?", const=str(accuracy_data.DEFAULT), metavar="CSV",
                    help="put each function's maximum into CSV (default docs/data/accuracy.csv); only for the "
                    "full check: all inputs, or every 64th gate with --gated")
    args = ap.parse_args()
    if args.stride is None:
        args.stride = 64 if args.gated else 1
    if args.record and (args.stride != (64 if args.gated else 1) or args.module != "fastgelu.ufuncs"):
        ap.error("--record takes the full check of fastgelu's ufuncs only (the default --stride and --module)")
    if args.only is None:
        args.only = ",".join(GATED if args.gated else R.NAMES)
    if args.isa:
        os.environ["FASTGELU_ISA"] = args.isa
    t0 = time.time()
    ok = True
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        cref = build_c_reference(tmp) if args.ref == "c" else None
        if args.module == "fastgelu.ufuncs":
            import fastgelu
            print(f"fastgelu {fastgelu.get_config()['isa']} build; every {args.stride} of the 2^32 float32 "
                  f"inputs; reference: {args.ref}; {args.procs} processes", flush=True)
        for name in args.only.split(","):
            name = name.strip()
            if name in GATED and cref is None:
                raise SystemExit("the gated functions are judged by the C reference only (--ref c)")
            passed, err, worst = sweep(args.module, name, args.procs, args.threads,
                                       limit=3.0 if name in GATED else 2.0, stride=args.stride, isa=args.isa,
                                       cref=cref)
            ok &= passed
            rows.append({"function": name, "dtype": "float32", "check": "gated" if name in GATED else "all",
                         "bound": 3 if name in GATED else 2, "max_ulp": f"{err:.3f}", "worst": worst})
    what = "every float32 input" if args.stride == 1 else f"every {args.stride}th float32 input"
    if args.gated:
        what = f"every {args.stride}th float32 gate" if args.stride > 1 else "every float32 gate"
        what += f" against {len(GATED_FACTORS)} (up, dy) pairs"
    print(f"PASS: {what} within {3 if args.gated else 2} ulp" if ok else "FAIL", f"[{time.time() - t0:.0f}s]")
    if args.record and ok:
        import fastgelu
        accuracy_data.record([r | {"build": fastgelu.get_config()["isa"]} for r in rows], args.record)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
