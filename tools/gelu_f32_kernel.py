"""The float32-arithmetic kernels of all six functions, compiled alone with $CC from the package's headers
(fastgelu/src/fg_f32_kernels.h; the exact form: fg_gelu_f32.h, the tanh and sigmoid forms: fg_xsig_f32.h), so
that they can be checked and timed without building the package:

  python tools/sweep_f32.py --module gelu_f32_kernel                                    # AVX-512
  GX_KERNEL_ISA=avx2 python tools/sweep_f32.py --module gelu_f32_kernel --only gelu_tanh

The package's AVX-512 and AVX2 builds run exactly these kernels for every float32 input, so the package
sweep checks the same functions; this is the quick loop for changing them (no package build).
"""
import ctypes
import hashlib
import os
import runpy
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
# the package's own flags per build (fastgelu/_lists.py, read alone: the package need not be built)
FLAGS = runpy.run_path(os.path.join(os.path.dirname(HERE), "fastgelu", "_lists.py"))["ISAS"]


SRC = os.path.join(HERE, "..", "fastgelu", "src")
sys.path.insert(0, HERE)
from fit_gelu_f32 import entry_points  # noqa: E402

# {function: its forward entry point} of each form (FG_F32_FORMS, fg_f32_fns.h); the gradient's is
# <entry>_grad_block
FUNCS = {name: fn for fn, name in entry_points(SRC).items() if not fn.endswith("_grad_block")}
HOOK = os.path.join(HERE, "bound_f32_hook.h")


def kernel_source():
    # -DFG_F_BOUND (tools/bound_f32.py) takes each segment over by tools/bound_f32_hook.h
    code = ('#define FG_F32_FWD 1\n#ifdef FG_F_BOUND\n#include "bound_f32_hook.h"\n#endif\n'
            '#include "fg_fp.h"\n#include "fg_f32_kernels.h"\n')
    paths = [os.path.join(SRC, name) for name in sorted(os.listdir(SRC))] + [HOOK]
    for path in paths:                            # the headers' text, so that a change rebuilds
        code += f"/* {os.path.basename(path)}: {hashlib.sha1(open(path, 'rb').read()).hexdigest()} */\n"
    for name, fn in FUNCS.items():
        grad = fn.replace("_block", "_grad_block")
        code += (f"\nvoid {name}_all(const float* x, float* y, long n) {{ {fn}(x, y, n); }}\n"
                 f"void {name}_grad_all(const float* x, const float* dy, float* y, long n) {{ {grad}(x, dy, y, n); }}\n")
    return code


def lib_path(isa, extra=()):
    """Where build(isa, extra) keeps its library: named by the source, the headers and the flags; (path, code)"""
    code = kernel_source()
    # headers in directories the flags add (-iquote DIR, -I DIR: tools/bound_f32.py --cflags) count too, so
    # that an edited copy of the headers rebuilds under the same flags
    dirs = [extra[k + 1] for k in range(len(extra) - 1) if extra[k] in ("-iquote", "-I")]
    dirs += [f[len(p):] for f in extra for p in ("-iquote", "-I") if f.startswith(p) and len(f) > len(p)]
    for d in dirs:
        for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            if name.endswith(".h"):
                code += f"/* {d}/{name}: {hashlib.sha1(open(os.path.join(d, name), 'rb').read()).hexdigest()} */\n"
    tag = hashlib.sha1((isa + " ".join(FLAGS[isa] + list(extra)) + code).encode()).hexdigest()[:12]
    return os.path.join(tempfile.gettempdir(), f"fastgelu_f32_kernel_{isa}_{tag}.so"), code


def build(isa, extra=()):
    """The kernels' shared library for isa, compiled once per source and flags; extra: more compiler flags
    (tools/bound_f32.py: the package's optimization level, -DFG_F_BOUND for tools/bound_f32_hook.h)"""
    lib, code = lib_path(isa, list(extra))
    if not os.path.exists(lib):
        with tempfile.TemporaryDirectory() as tmp:
            c = os.path.join(tmp, "k.c")
            with open(c, "w") as f:
                f.write(code)
            out = os.path.join(tmp, "k.so")
            cc = os.environ.get("CC", "cc").split()
            subprocess.run(cc + ["-O2", "-fPIC", "-shared", "-I", SRC, "-I", HERE, c, "-o", out, "-lm"] + FLAGS[isa] + list(extra),
                           check=True)
            os.replace(out, lib)          # atomic: sweep workers may build at once
    return lib


# GX_KERNEL_CFLAGS: more compiler flags, e.g. "-iquote DIR" for an edited copy of the headers in DIR
_lib = ctypes.CDLL(build(os.environ.get("GX_KERNEL_ISA", "avx512"), os.environ.get("GX_KERNEL_CFLAGS", "").split()))


def _forward(fn):
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_long]

    def f(x):
        x = np.ascontiguousarray(x, np.float32)
        y = np.empty_like(x)
        fn(x.ctypes.data, y.ctypes.data, x.size)
        return y
    return f


def _gradient(fn):
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_long]

    def g(x, dy):
        x = np.ascontiguousarray(x, np.float32)
        dy = np.ascontiguousarray(np.broadcast_to(dy, x.shape), np.float32)
        y = np.empty_like(x)
        fn(x.ctypes.data, dy.ctypes.data, y.ctypes.data, x.size)
        return y
    return g


for _name in FUNCS:
    globals()[_name] = _forward(getattr(_lib, _name + "_all"))
    globals()[_name + "_grad"] = _gradient(getattr(_lib, _name + "_grad_all"))
