# The body of every kernel module. setup.py compiles it once per ISA of _lists.py through the stubs it
# writes (_kernels_<isa>.pyx) that only `include` this file, so the math and the loops exist once and the
# compiler vectorizes them for each instruction set.
# docs/architecture.md draws the layers and says where to change what. From the bottom:
#   _c.pxd             every C header of src/ declared once (the C: SIMD primitives per ISA, the float32
#                      kernels, constants, lane masks, FP environment, thread clock, 16-bit conversions, CPU)
#   _lists.pxi         generated from _lists.py (_lists.pxi.in): the forms' codes, tags and dispatch; dtype codes
#   _fp.pxi            floating-point primitives (error-free products, exp of a double-double argument)
#   _forms.pxi         generated from _lists.py (_forms.pxi.in): each form's float32 SIMD entry points, and
#                      its family file, which defines its block functions (one interface for every form):
#     _gelu_exact*.pxi   x*Phi(x) and its gradient: the design (_gelu_exact.pxi, which includes the rest),
#                        the polynomials (_coeffs), float32 in double and float64 lane by lane (32, 64),
#                        deferred lanes (_queue32, _queue64) and the block functions (_blocks)
#     _gelu_sigmoid.pxi  the tanh and sigmoid approximations
#   _threads_policy.pxi  how many threads a call uses (load cap, back-off)
#   _threads_hooks.pxi   its Python side: the caps fastgelu._threads sets, its state and test hooks
#   _storage.pxi       the dtypes: codes, loads and stores, the 16-bit forward tables
#   _overlap.pxi       operands that share memory
#   _plain.pxi         one thread's piece of gelu*/gelu*_grad
#   _gated.pxi         one thread's piece of gelu*_mul/gelu*_mul_grad
#   _bias.pxi          one thread's piece of gelu(x + b), and its Python entry (_bias_call)
#   _driver.pxi        the one parallel region: a call cut into pieces across the team
#   _ufuncs.pxi        generated from _lists.py (_ufuncs.pxi.in): the ufunc objects

from fastgelu._c cimport *
cimport numpy as cnp
from numpy cimport npy_intp

cnp.import_array()
cnp.import_ufunc()

ctypedef fused real:
    float
    double

include "_lists.pxi"
include "_fp.pxi"
include "_forms.pxi"
include "_threads_policy.pxi"
include "_threads_hooks.pxi"
include "_storage.pxi"
include "_overlap.pxi"
include "_plain.pxi"
include "_gated.pxi"
include "_bias.pxi"
include "_driver.pxi"
include "_ufuncs.pxi"


# the float32 functions' kernels: float32 arithmetic on SIMD vectors (its instruction set), or "" where float32
# is computed in double (the baseline build, no FMA)
F32_SIMD = (<bytes>FG_F32_SIMD_NAME).decode()
F32_SIMD_REQUESTED = bool(FG_F32_REQUESTED)      # False in a build made with FASTGELU_F32_FWD=0


def cpu_features():
    """ISA levels this CPU and OS can run (asked in the generic module, so no illegal instruction)."""
    return {"generic": True, "avx2": bool(fg_cpu_has(FG_CPU_AVX2)),
            "avx512": bool(fg_cpu_has(FG_CPU_AVX512))}


def _mxcsr(value=None):
    """Test hook: the SSE control/status register of the calling thread (FTZ bit 15, DAZ bit 6, rounding
    bits 13-14, sticky flags bits 0-5); sets it first when `value` is given. None where there is no MXCSR."""
    if not FG_HAVE_MXCSR:
        return None
    if value is not None:
        fg_set_mxcsr(value)
    return fg_get_mxcsr()


def _fpcr(value=None):
    """Test hook: the Arm64 floating-point control register of the calling thread (FZ bit 24, rounding bits
    22-23, DN bit 25, AHP bit 26, FZ16 bit 19); sets it first when `value` is given. None elsewhere."""
    if not FG_HAVE_FPCR:
        return None
    if value is not None:
        fg_set_fpcr(value)
    return fg_get_fpcr()
