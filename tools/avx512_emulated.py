#!/usr/bin/env python3
"""The AVX-512 float32 kernels' bits on a machine without AVX-512: the nine entry points of
fastgelu/src/fg_f32_kernels.h compiled for the AVX-512 code path (32-entry tables, scalef, compress, scatter)
with SIMDe's portable AVX-512 intrinsics (apt-get install libsimde-dev) in place of the instructions, saved
before a change and compared after it, as tools/bits_f32.py does for the builds this machine runs:

  python tools/avx512_emulated.py --stride 61 --save before.npz         # at the commit before
  python tools/avx512_emulated.py --stride 61 --compare before.npz      # after: exit status 1 on a difference

Every STRIDE-th float32 input through each form's forward, gradient (dy = 1, and dy from a fixed permutation
of the inputs) and gated forward (u likewise; its lost lanes and tiny flag too).  The emulation computes each
intrinsic to its specification but not always to the hardware's last bit (SIMDe's scalef flushes some
subnormal results; vrcp14ps is taken as 1/d, well inside its 2^-14), so the bits are the emulation's: they
prove a change left the AVX-512 kernels' arithmetic alone, not what an AVX-512 CPU prints (for that:
tools/sweep_f32.py on one).
"""
import argparse
import ctypes
import hashlib
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "..", "fastgelu", "src")
sys.path.insert(0, HERE)
from fit_gelu_f32 import entry_points  # noqa: E402

# the forms of FG_F32_FORMS (fg_f32_fns.h): fg_f_<form>_block
FORMS = [fn[len("fg_f_"):-len("_block")] for fn in entry_points(SRC) if not fn.endswith("_grad_block")]
FLAGS = ["-O2", "-mavx2", "-mfma", "-fPIC", "-shared", "-Werror=implicit-function-declaration", "-Wno-psabi"]

# SIMDe 0.7.4 (Debian 12) has no vrcp14ps, scatter, vpcmpltd mask, masked loads and stores: given here, the
# masked ones lane by lane so that they read and write no byte a lane masks off
SHIM = r"""
#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>
static inline simde__m512 fg_emu_rcp14(simde__m512 d) {
    simde__m512_private r = simde__m512_to_private(d);
    for (int i = 0; i < 16; i++) r.f32[i] = 1.0f / r.f32[i];
    return simde__m512_from_private(r);
}
static inline void fg_emu_scatter(float* y, simde__mmask16 k, simde__m512i idx, simde__m512 v, int scale) {
    simde__m512i_private ip = simde__m512i_to_private(idx);
    simde__m512_private vp = simde__m512_to_private(v);
    for (int i = 0; i < 16; i++)
        if (k >> i & 1) *(float*)((char*)y + (ptrdiff_t)ip.i32[i] * scale) = vp.f32[i];
}
static inline simde__m512 fg_emu_maskz_loadu(simde__mmask16 k, const float* p) {
    simde__m512_private r;
    for (int i = 0; i < 16; i++) r.f32[i] = (k >> i & 1) ? p[i] : 0.0f;
    return simde__m512_from_private(r);
}
static inline void fg_emu_mask_storeu(float* p, simde__mmask16 k, simde__m512 v) {
    simde__m512_private r = simde__m512_to_private(v);
    for (int i = 0; i < 16; i++)
        if (k >> i & 1) p[i] = r.f32[i];
}
#define _mm512_rcp14_ps fg_emu_rcp14
#define _mm512_mask_i32scatter_ps(y, k, idx, v, s) fg_emu_scatter(y, k, idx, v, s)
#define _mm512_cmplt_epi32_mask(a, b) simde_mm512_cmpgt_epi32_mask(b, a)
#define _mm512_maskz_loadu_ps(k, p) fg_emu_maskz_loadu(k, p)
#define _mm512_mask_storeu_ps(p, k, v) fg_emu_mask_storeu(p, k, v)
#define __AVX512F__ 1                     /* fg_simd.h's choice: the AVX-512 header, on SIMDe */
#define FG_F32_FWD 1
#include "fg_fp.h"
#include "fg_f32_kernels.h"
#if !FG_F32_SIMD || !FG_F_TAB32
#error not the AVX-512 code path
#endif
"""


def source():
    code = SHIM
    for f in FORMS:
        code += (f"void {f}_fwd(const float* x, float* y, long n) {{ fg_f_{f}_block(x, y, n); }}\n"
                 f"void {f}_grad(const float* x, const float* dy, float* y, long n) "
                 f"{{ fg_f_{f}_grad_block(x, dy, y, n); }}\n"
                 f"long {f}_mul(const float* x, const float* u, float* y, long n, ptrdiff_t* lost, int* tiny) "
                 f"{{ int carry = 0; return fg_f_{f}_mul_block(x, u, y, n, lost, tiny, &carry); }}\n")
    return code


def build(src=SRC, extra=()):
    """the emulated kernels' library, compiled once per source, headers and flags"""
    code = source()
    for name in sorted(os.listdir(src)):
        if name.endswith(".h"):
            code += f"/* {name}: {hashlib.sha1(open(os.path.join(src, name), 'rb').read()).hexdigest()} */\n"
    cc = os.environ.get("CC", "cc").split() + FLAGS + list(extra)
    tag = hashlib.sha1((code + src + " ".join(cc)).encode()).hexdigest()[:12]
    lib = os.path.join(tempfile.gettempdir(), f"fastgelu_avx512_emulated_{tag}.so")
    if not os.path.exists(lib):
        with tempfile.TemporaryDirectory() as tmp:
            c, out = os.path.join(tmp, "k.c"), os.path.join(tmp, "k.so")
            open(c, "w").write(code)
            subprocess.run(cc + ["-I", src, c, "-o", out, "-lm"], check=True)
            os.replace(out, lib)            # atomic: callers in parallel may build at once
    return lib


def compute(lib, stride):
    """{name: result array} of the nine entry points on every stride-th float32"""
    x = np.arange(0, 2**32, stride, dtype=np.uint64).astype(np.uint32).view(np.float32)
    rng = np.random.default_rng(7)
    dy, u = rng.permutation(x), rng.permutation(x)
    k = ctypes.CDLL(lib)
    P, n = ctypes.c_void_p, ctypes.c_long(x.size)
    out = {}
    for f in FORMS:
        fwd, grad, mul = getattr(k, f + "_fwd"), getattr(k, f + "_grad"), getattr(k, f + "_mul")
        fwd.argtypes, grad.argtypes = [P, P, ctypes.c_long], [P, P, P, ctypes.c_long]
        mul.argtypes, mul.restype = [P, P, P, ctypes.c_long, P, P], ctypes.c_long
        y = np.empty_like(x)
        fwd(x.ctypes.data, y.ctypes.data, n)
        out[f] = y.view(np.uint32)
        for tag, d in (("_grad", np.ones_like(x)), ("_grad+dy", dy)):
            y = np.empty_like(x)
            grad(x.ctypes.data, d.ctypes.data, y.ctypes.data, n)
            out[f + tag] = y.view(np.uint32)
        y, lost, tiny = np.empty_like(x), np.empty(x.size, np.intp), ctypes.c_int(0)
        nl = mul(x.ctypes.data, u.ctypes.data, y.ctypes.data, n, lost.ctypes.data, ctypes.addressof(tiny))
        out[f + "_mul"] = y.view(np.uint32)
        out[f + "_mul lost"] = np.sort(lost[:nl]).astype(np.int64)
        out[f + "_mul tiny"] = np.array([tiny.value])
    return x.size, out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--stride", type=int, default=4099)
    ap.add_argument("--src", default=SRC, help="the headers (default: this checkout's fastgelu/src)")
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--save")
    g.add_argument("--compare")
    a = ap.parse_args(argv)
    size, out = compute(build(a.src), a.stride)
    if a.save:
        np.savez(a.save, stride=a.stride, **out)
        print(f"AVX-512 kernels (emulated): {size} inputs a function, saved to {a.save}")
        return 0
    ref = np.load(a.compare)
    if int(ref["stride"]) != a.stride:
        sys.exit(f"{a.compare} holds stride {int(ref['stride'])}, not {a.stride}")
    print(f"AVX-512 kernels (emulated) against {a.compare}: {size} inputs a function")
    bad = 0
    for name, y in out.items():
        r = ref[name]
        same = y.shape == r.shape and np.array_equal(y, r)
        diff = 0 if same else (int(np.count_nonzero(y != r)) if y.shape == r.shape else abs(y.size - r.size))
        print(f"  {name:20s} {'same' if same else f'DIFFERENT ({diff})  <-- FAIL'}")
        bad += not same
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
