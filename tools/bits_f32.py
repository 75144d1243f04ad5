"""The six float32 functions' bits on every STRIDE-th float32 input (gradients with dy = 1 and with dy from a
fixed permutation of the inputs), saved by one build and compared by another:

  FASTGELU_ISA=avx2 python tools/bits_f32.py --stride 257 --save avx2.npz     # x86-64, the AVX2 build
  python tools/bits_f32.py --stride 257 --compare avx2.npz                     # aarch64: NEON against it

The NEON kernels are the AVX2 kernels' math on the same primitives and 8-entry tables, with x86's min/max
semantics, so they give the same bits, with one exception the comparison allows: the tanh and sigmoid
gradients form a result as q*dy + t*dy, q a quotient and t its small correction, whose split follows the
reciprocal estimate (vrcpps against vrecpe and Newton steps); their sum is the same but where t*dy underflows
(|y| below ~2^-100: gradients of x < -10 (tanh) or -54 (sigmoid), or a tiny dy) its lost bits are not, so
the last bit may differ there.  Both builds' errors are reported where they differ.  Exit status 1 on any
other difference (NaN payloads aside)."""
import argparse
import sys

import numpy as np

import fastgelu
from fastgelu import ufuncs
from fastgelu._reference import ref64, ulp_error

FWD = ["gelu", "gelu_tanh", "gelu_sigmoid"]
GRAD = ["gelu_grad", "gelu_tanh_grad", "gelu_sigmoid_grad"]
SPLIT_OK = {"gelu_tanh_grad", "gelu_sigmoid_grad"}
TINY_RESULT = 2.0 ** -100


def inputs(stride):
    x = np.arange(0, 2**32, stride, dtype=np.uint64).astype(np.uint32).view(np.float32)
    return x, np.random.default_rng(7).permutation(x)


def compute(x, dy):
    out = {}
    with np.errstate(all="ignore"):
        for n in FWD:
            out[n] = getattr(ufuncs, n)(x)
        for n in GRAD:
            out[n] = getattr(ufuncs, n)(x, np.ones_like(x))
            out[n + "+dy"] = getattr(ufuncs, n)(x, dy)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--stride", type=int, default=4099)
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--save")
    g.add_argument("--compare")
    a = ap.parse_args()
    x, dy = inputs(a.stride)
    out = compute(x, dy)
    label = f"{fastgelu.get_config()['isa']} build, float32 {fastgelu.get_config()['float32']}"
    if a.save:
        np.savez(a.save, label=label, **{k: v.view(np.uint32) for k, v in out.items()})
        print(f"{label}: {x.size} inputs a function, saved to {a.save}")
        return 0
    ref = np.load(a.compare)
    print(f"{label} against {ref['label']}: {x.size} inputs a function")
    bad = False
    for k, y in out.items():
        r = ref[k].view(np.float32)
        diff = np.flatnonzero((y.view(np.uint32) != ref[k]) & ~(np.isnan(y) & np.isnan(r)))
        name = k.split("+")[0]
        big = np.abs(y[diff]) >= TINY_RESULT
        allowed = name in SPLIT_OK and not big.any()
        line = f"  {k:22s} differing: {diff.size}"
        if diff.size:
            v, scale = ref64(name, x[diff])
            if k.endswith("+dy"):
                d = dy[diff].astype(np.float64)
                v, scale = v * d, scale * np.abs(d)
            line += (f" (results {'all' if not big.any() else 'NOT all'} below 2^-100; max ulp here "
                     f"{ulp_error(y[diff], v, scale, np.float32).max():.3f} against "
                     f"{ulp_error(r[diff], v, scale, np.float32).max():.3f})")
        print(line + ("" if not diff.size or allowed else "  <-- FAIL"))
        bad |= bool(diff.size) and not allowed
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
