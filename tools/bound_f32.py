#!/usr/bin/env python3
"""How far the float32 central-table kernels are from their own bound, measured: one core, one process, the
kernels as the package has them ("kernel"), the same kernels built with FG_F_BOUND ("bound": the central form
on every lane, with no tail or tiny lane looked for, so results there are wrong; what the loop would cost if
finding and redoing those lanes were free), and the competitor (PyTorch's GELU and GELU backward for the exact
form, ONNX Runtime's FastGelu for the tanh form), on the same arrays, 256K float32:

  python tools/bound_f32.py --isa avx2          # the AVX2 kernels (PyTorch is held to AVX2 too, its oneDNN
                                                # kernels included: fastgelu.bench.speed.torch_isa_env)
  python tools/bound_f32.py --isa avx512
  python tools/bound_f32.py --isa avx2 --reach 4 5 6 8   # and the kernels with their tail moved out to |x| = R
  python tools/bound_f32.py --isa avx512 --cflags noscatter=-DFG_F_HAS_SCATTER=0   # and a build with more flags

--reach answers what a central form reaching further would buy before one is built: builds with -DFG_F_REACH
move the tail threshold (fastgelu/src/fg_f32_route.h) to each R and keep today's tables (results between the
tables' end and R wrong), so their time is today's central loop with only |x| > R (x < -R) left to the tail.

Timings: single calls, the order of the contenders shuffled every round, so that a slow spell of a shared
machine falls on all of them; each figure is a low percentile (--pct, default 5) of its samples, the
closest this machine gets to each contender's own speed (two builds of identical code agree far more
closely than the medians of batched calls: docs/design/kernels.md).  Ratios above 1: the competitor is
slower.
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = (("gelu", "exact forward", "torch"), ("gelu_grad", "exact gradient", "torch"),
         ("gelu_tanh", "tanh forward", "ort"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--isa", choices=("avx2", "avx512"), default="avx2")
    ap.add_argument("--rounds", type=int, default=150)
    ap.add_argument("--pct", type=float, default=5.0)
    ap.add_argument("-n", type=int, default=1 << 18)
    ap.add_argument("--reach", type=float, nargs="*", default=[], metavar="R",
                    help="also time the kernels with the tail threshold moved to |x| = R (wrong results there)")
    ap.add_argument("--cflags", nargs="*", default=[], metavar="TAG=FLAGS",
                    help="also time the kernels built with these compiler flags (space-separated), as TAG: an A/B "
                         "of a compile-time choice in one process")
    a = ap.parse_args()
    os.environ["GX_KERNEL_ISA"] = a.isa
    sys.path.insert(0, HERE)
    sys.path.insert(0, os.path.join(HERE, ".."))
    import ctypes

    import numpy as np

    import gelu_f32_kernel as gk
    from fastgelu.bench import speed
    speed.torch_isa_env(a.isa, os.environ)         # PyTorch held to the build's ISA, before it is imported
    import fastgelu
    fastgelu.set_num_threads(1)                     # ORT's session takes its thread count from it
    torch = speed._torch()
    opt = ["-O3", "-fno-math-errno"]                # as setup.py builds the package
    libs = {"kernel": ctypes.CDLL(gk.build(a.isa, opt)), "bound": ctypes.CDLL(gk.build(a.isa, opt + ["-DFG_F_BOUND"]))}
    # the builds beside the package's: --reach's tail thresholds, then --cflags' flags
    variants = [(f"reach {r:g}", [f"-DFG_F_REACH={float(r)!r}f"]) for r in a.reach]
    variants += [(tag, flags.split()) for tag, _, flags in (spec.partition("=") for spec in a.cflags)]
    for tag, flags in variants:
        libs[tag] = ctypes.CDLL(gk.build(a.isa, opt + flags))
    extra = [tag for tag, _ in variants]
    rng = np.random.default_rng(0)
    n = a.n
    spreads = {"σ=1": rng.standard_normal(n, dtype=np.float32), "σ=3": 3 * rng.standard_normal(n, dtype=np.float32),
               "U(-8,8)": rng.uniform(-8, 8, n).astype(np.float32)}
    dy = rng.standard_normal(n, dtype=np.float32)
    y = np.empty(n, np.float32)
    print(f"CPU: {speed.cpu_name()}; {a.isa} kernels; torch {getattr(torch, '__version__', 'absent')}; "
          f"one thread, {n} float32, p{a.pct:g} of {a.rounds * 3} single calls\n")
    calls, rows = {}, []
    for fname, label, comp in CASES:
        for sname, x in spreads.items():
            for tag, lib in libs.items():
                f = getattr(lib, fname + "_all")
                if fname == "gelu_grad":
                    f.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_long]
                    calls[fname, sname, tag] = (lambda f=f, x=x: f(x.ctypes.data, dy.ctypes.data, y.ctypes.data, n))
                else:
                    f.argtypes = [ctypes.c_void_p] * 2 + [ctypes.c_long]
                    calls[fname, sname, tag] = (lambda f=f, x=x: f(x.ctypes.data, y.ctypes.data, n))
            if comp == "ort":     # one intra-op thread: no worker pool to spin between its calls
                c, name = speed.ort_fastgelu(x), "ONNX Runtime"
            else:
                c, name = (None if torch is None else
                           speed.torch_call(torch, "none", "fwd" if fname == "gelu" else "grad", x, dy)), "PyTorch"
            if c is not None:
                calls[fname, sname, "competitor"] = c
            rows.append((fname, sname, label + (f" vs {name}" if c is not None else "")))
    # every contender of every row in each round, in a new order each time: the rows share the machine's spells
    p = speed.shuffled_percentiles(calls, a.rounds, n, a.pct)
    print("| function | spread | kernel ns/elem | bound ns/elem | competitor ns/elem | kernel ratio | bound ratio "
          "| the tail handling adds |")
    print("|---|---|---|---|---|---|---|---|")
    for fname, sname, label in rows:
        fig = {t: p[fname, sname, t] for t in ("kernel", "bound", "competitor") if (fname, sname, t) in p}
        cp = fig.get("competitor")
        row = [label, sname, f"{fig['kernel']:.3f}", f"{fig['bound']:.3f}", f"{cp:.3f}" if cp else "-",
               f"{cp / fig['kernel']:.2f}" if cp else "-", f"{cp / fig['bound']:.2f}" if cp else "-",
               f"{fig['kernel'] / fig['bound'] - 1:.0%}"]
        print("| " + " | ".join(row) + " |")
    if extra:
        print("\nThe kernels with the tail moved out (reach R) or built with more flags (ns/elem, and the "
              "competitor's time over it):\n")
        print("| function | spread | kernel | " + " | ".join(extra) + " | bound |")
        print("|---|---|---|" + "---|" * (len(extra) + 1))
        for fname, sname, label in rows:
            cp = p.get((fname, sname, "competitor"))
            cells = [f"{p[fname, sname, t]:.3f}" + (f" ({cp / p[fname, sname, t]:.2f}x)" if cp else "")
                     for t in ["kernel"] + extra + ["bound"]]
            print(f"| {label} | {sname} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
