"""The float32-arithmetic exact GELU kernels of fastgelu/_gelu_exact.pxi ("float32 kernels"), compiled alone
from the .pxi's C text (the docstring of the `cdef extern from *` block that defines GX_F32_SIMD) with $CC,
so that they can be checked and timed without building the package:

  python tools/sweep_f32.py --module gelu_f32_kernel --only gelu,gelu_grad              # AVX-512
  GX_KERNEL_ISA=avx2 python tools/sweep_f32.py --module gelu_f32_kernel --only gelu,gelu_grad

The package's AVX-512 and AVX2 builds run exactly these kernels for every float32 input, so the package
sweep checks the same functions; this is the quick loop for changing them (one sweep of all 2^32 inputs:
~30 s per function on 2 cores).
"""
import ctypes
import hashlib
import os
import subprocess
import tempfile
import textwrap

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
FLAGS = {"avx512": ["-mavx512f", "-mavx512bw", "-mavx512vl", "-mavx512dq", "-mavx2", "-mfma"],
         "avx2": ["-mavx2", "-mfma"]}


def kernel_source():
    src = open(os.path.join(HERE, "..", "fastgelu", "_gelu_exact.pxi")).read()
    i = src.index("#define GX_F32_SIMD 1")
    b = src.rindex('"""', 0, i) + 3
    e = src.index('"""', i)
    return "#define FASTGELU_F32_FWD 1\n" + textwrap.dedent(src[b:e]) + (
        "\nvoid gelu_all(const float* x, float* y, long n) { gx_f_gelu_block(x, y, n); }\n"
        "void gelu_grad_all(const float* x, const float* dy, float* y, long n) "
        "{ gx_f_gelu_grad_block(x, dy, y, n); }\n")


def build(isa):
    code = kernel_source()
    tag = hashlib.sha1((isa + code).encode()).hexdigest()[:12]
    lib = os.path.join(tempfile.gettempdir(), f"fastgelu_f32_kernel_{isa}_{tag}.so")
    if not os.path.exists(lib):
        with tempfile.TemporaryDirectory() as tmp:
            c = os.path.join(tmp, "k.c")
            with open(c, "w") as f:
                f.write(code)
            out = os.path.join(tmp, "k.so")
            cc = os.environ.get("CC", "cc").split()
            subprocess.run(cc + ["-O2", "-fPIC", "-shared", c, "-o", out] + FLAGS[isa], check=True)
            os.replace(out, lib)          # atomic: sweep workers may build at once
    return lib


_lib = ctypes.CDLL(build(os.environ.get("GX_KERNEL_ISA", "avx512")))
_lib.gelu_all.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_long]
_lib.gelu_grad_all.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_long]


def gelu(x):
    x = np.ascontiguousarray(x, np.float32)
    y = np.empty_like(x)
    _lib.gelu_all(x.ctypes.data, y.ctypes.data, x.size)
    return y


def gelu_grad(x, dy):
    x = np.ascontiguousarray(x, np.float32)
    dy = np.ascontiguousarray(np.broadcast_to(dy, x.shape), np.float32)
    y = np.empty_like(x)
    _lib.gelu_grad_all(x.ctypes.data, dy.ctypes.data, y.ctypes.data, x.size)
    return y
