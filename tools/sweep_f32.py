#!/usr/bin/env python3
"""Check a fastgelu function on EVERY float32 input (all 2^32 bit patterns) against float64 references.

  python tools/sweep_f32.py                       # all six ufuncs of fastgelu.ufuncs
  python tools/sweep_f32.py --only gelu,gelu_grad # some of them
  python tools/sweep_f32.py --module harness      # functions named gelu, gelu_grad, ... from another module

Errors are in ULPs as defined in fastgelu/_reference.py (gradients with dy = 1, counted in ULPs of the larger
of their two terms). Prints per function: max ULP with the worst input (value and bits), how many inputs
exceed 1 and 2 ULP, and the IEEE special cases. Exit status 1 if any function exceeds 2 ULP or fails a
special case. The 2^32 inputs are processed in chunks of 2^24 by --procs worker processes (spawned, not
forked: GNU libgomp's thread pool does not survive fork).
"""
import argparse
import importlib
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _reference as R  # noqa: E402

CHUNK_BITS = 24
_func = None


def _init(module, name, threads):
    global _func
    os.environ["OMP_NUM_THREADS"] = str(threads)
    _func = getattr(importlib.import_module(module), name)


def _chunk(args):
    name, k = args
    bits = np.arange(k << CHUNK_BITS, (k + 1) << CHUNK_BITS, dtype=np.uint64).astype(np.uint32)
    x = bits.view(np.float32)
    y = _func(x, np.ones_like(x)) if name.endswith("_grad") else _func(x)
    with np.errstate(all="ignore"):
        ref, scale = R.ref64(name, x.astype(np.float64))
    err = R.ulp_error(y, ref, scale, np.float32)
    i = int(np.argmax(err))
    return float(err[i]), int(bits[i]), int((err > 1).sum()), int((err > 2).sum())


def sweep(module, name, procs, threads, limit=2.0):
    import multiprocessing as mp

    t0 = time.time()
    nchunks = 1 << (32 - CHUNK_BITS)
    ctx = mp.get_context("spawn")
    worst = (-1.0, 0)
    n1 = n2 = 0
    with ctx.Pool(procs, initializer=_init, initargs=(module, name, threads)) as pool:
        for e, b, c1, c2 in pool.imap_unordered(_chunk, [(name, k) for k in range(nchunks)]):
            if e > worst[0]:
                worst = (e, b)
            n1 += c1
            n2 += c2
    _init(module, name, threads)
    bad = R.special_failures_one(name, _func, np.float32)
    e, b = worst
    xw = np.array([b], np.uint32).view(np.float32)[0]
    print(f"{name:18s} max {e:.3f} ulp at x={xw!r} (0x{b:08x}); >1 ulp: {n1}, >2 ulp: {n2}; "
          f"specials {'ok' if not bad else 'FAIL'} [{time.time() - t0:.0f}s]", flush=True)
    for msg in bad:
        print("    special:", msg)
    return e <= limit and not bad


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--module", default="fastgelu.ufuncs", help="module holding the functions")
    ap.add_argument("--only", default=",".join(R.NAMES), help="comma-separated function names")
    ap.add_argument("--procs", type=int, default=os.cpu_count() or 1, help="worker processes")
    ap.add_argument("--threads", type=int, default=1, help="OMP_NUM_THREADS inside each worker")
    args = ap.parse_args()
    ok = True
    for name in args.only.split(","):
        ok &= sweep(args.module, name.strip(), args.procs, args.threads)
    print("PASS: every float32 input within 2 ulp" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
