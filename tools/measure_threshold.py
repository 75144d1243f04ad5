"""Measure where threads start to pay: time each float32 ufunc at sizes around the parallel threshold, on
the calling thread only and with the OpenMP team, in one process (run it on a quiet machine).

    python tools/measure_threshold.py

The threshold is PARALLEL_MIN in fastgelu/_threads_policy.pxi (the tuning hook _parallel_min() sets it at run time).
"""
import numpy as np

import fastgelu
from fastgelu.bench.speed import inputs, median_time

SIZES = (4096, 8192, 16384, 24576, 32768, 49152, 65536, 131072)


def main():
    k = fastgelu.ufuncs._kernels
    default = k._parallel_min()
    print(f"{fastgelu.get_num_threads()} threads; threshold now {default:,} elements")
    print(f"{'function':<14}" + "".join(f"{n:>9,}" for n in SIZES) + "   (ratio 1 thread / team; > 1: team wins)")
    try:
        for name in ("gelu", "gelu_tanh", "gelu_sigmoid", "gelu_grad"):
            uf = getattr(fastgelu.ufuncs, name)
            cells = []
            for n in SIZES:
                x, dy = inputs(n, np.float32)
                o = np.empty_like(x)
                args = (x, dy) if name.endswith("grad") else (x,)
                k._parallel_min(1 << 40)
                serial = median_time(lambda: uf(*args, out=o), rounds=9)
                k._parallel_min(2)
                team = median_time(lambda: uf(*args, out=o), rounds=9)
                cells.append(serial / team)
            print(f"{name:<14}" + "".join(f"{c:>9.2f}" for c in cells))
    finally:
        k._parallel_min(default)


if __name__ == "__main__":
    main()
