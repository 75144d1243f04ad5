"""The bits of every ufunc on float64, float16 and bfloat16 inputs (float32 has tools/bits_f32.py), saved by
one build and compared by another: a digest per (ufunc, dtype, layout), so a refactoring of the Cython layers
can be shown to change nothing.

  FASTGELU_ISA=avx2 python tools/bits_dtypes.py --save before-avx2.json
  FASTGELU_ISA=avx2 python tools/bits_dtypes.py --compare before-avx2.json     # exit 1 on any change

Inputs: float64 on every 2^44-th bit pattern (every sign, exponent and many significands) and randn*1,
randn*3, U(-40, 40) samples; float16 and bfloat16 on all 65,536 patterns. dy and up are a fixed permutation
of the inputs. Each function runs on contiguous arrays, on strided views (the buffered path) and, for the
plain functions, with a fused bias along the last axis."""
import argparse
import hashlib
import json
import sys

import numpy as np

import fastgelu
from fastgelu import ufuncs

PLAIN = ["gelu", "gelu_tanh", "gelu_sigmoid"]


def inputs(dtype):
    rng = np.random.default_rng(11)
    if np.dtype(dtype).itemsize == 2:
        x = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(dtype)
    else:
        bits = np.arange(0, 1 << 20, dtype=np.uint64) << np.uint64(44)
        x = np.concatenate([bits.view(np.float64), rng.standard_normal(1 << 18), 3 * rng.standard_normal(1 << 18),
                            rng.uniform(-40, 40, 1 << 18)])
    return x, rng.permutation(x)


def digest(*arrays):
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).view(np.uint8).tobytes())
    return h.hexdigest()[:24]


def compute(dtype):
    x, p = inputs(dtype)
    width = 64
    n = len(x) - len(x) % width
    out = {}
    with np.errstate(all="ignore"):
        for name in PLAIN:
            f, g = getattr(ufuncs, name), getattr(ufuncs, name + "_grad")
            m, mg = getattr(ufuncs, name + "_mul"), getattr(ufuncs, name + "_mul_grad")
            out[f"{name} contiguous"] = digest(f(x), g(x, p), m(x, p), *mg(x, p, p[::-1]))
            out[f"{name} strided"] = digest(f(x[::3]), g(x[::3], p[::3]), m(x[::3], p[::3]),
                                            *mg(x[::3], p[::3], p[::-3]))
            form = "none" if name == "gelu" else name[5:]
            x2, b = x[:n].reshape(-1, width), p[:width].copy()
            out[f"{name} bias"] = digest(fastgelu.gelu(x2, form, bias=b),
                                         fastgelu.gelu_grad(x2, p[:n].reshape(-1, width), form, bias=b))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    what = ap.add_mutually_exclusive_group(required=True)
    what.add_argument("--save", metavar="FILE")
    what.add_argument("--compare", metavar="FILE")
    a = ap.parse_args(argv)
    dtypes = [np.float64, np.float16] + ([ufuncs.BFLOAT16] if ufuncs.BFLOAT16 is not None else [])
    now = {f"{np.dtype(d).name} {k}": v for d in dtypes for k, v in compute(d).items()}
    print(f"{len(now)} digests, {ufuncs.ISA} build")
    if a.save:
        with open(a.save, "w") as f:
            json.dump(now, f, indent=1)
        return 0
    with open(a.compare) as f:
        before = json.load(f)
    changed = sorted(k for k in before.keys() | now.keys() if before.get(k) != now.get(k))
    for k in changed:
        print(f"CHANGED: {k}")
    print("same bits" if not changed else f"{len(changed)} of {len(now)} changed")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
