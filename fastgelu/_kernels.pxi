# The body of every kernel module. setup.py compiles it once per ISA level through tiny stubs
# (_kernels_generic.pyx, _kernels_avx2.pyx, _kernels_avx512.pyx) that only `include` this file, so the
# math and the loops exist once and the compiler vectorizes them for each instruction set.
#
# Layers, from the bottom:
#   _fp.pxi            floating-point primitives (error-free products, exp of a double-double argument)
#   _gelu_exact.pxi    x*Phi(x) and its gradient             -- scalar + contiguous-block functions
#   _gelu_sigmoid.pxi  the tanh and sigmoid approximations   -- same interface
#   _loops.pxi         NumPy inner loops: variant/dtype selection at compile time, threading policy
# and at the end of this file the ufunc objects themselves.

cimport numpy as cnp
from numpy cimport npy_intp

cnp.import_array()
cnp.import_ufunc()

ctypedef fused real:
    float
    double

include "_fp.pxi"
include "_gelu_exact.pxi"
include "_gelu_sigmoid.pxi"
include "_loops.pxi"
include "_ufuncs.pxi"


cdef extern from *:
    """
    #if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
    #include <cpuid.h>
    /* F16C is read from CPUID leaf 1 (ECX bit 29) rather than __builtin_cpu_supports("f16c"): clang < 15
       rejects that feature name. It needs no OS state of its own beyond AVX's, which avx2 checks. */
    static int fastgelu_f16c(void) {
        unsigned int a, b, c, d;
        return __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 29));
    }
    static int fastgelu_cpu_has(int what) {
        __builtin_cpu_init();
        switch (what) {
        case 1: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && fastgelu_f16c();
        case 2: return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")
                    && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")
                    && __builtin_cpu_supports("fma") && fastgelu_f16c();
        }
        return 0;
    }
    #else
    static int fastgelu_cpu_has(int what) { (void)what; return 0; }
    #endif
    """
    int fastgelu_cpu_has(int) nogil


def cpu_features():
    """ISA levels this CPU and OS can run (asked in the generic module, so no illegal instruction)."""
    return {"generic": True, "avx2": bool(fastgelu_cpu_has(1)), "avx512": bool(fastgelu_cpu_has(2))}


cdef extern from *:
    """
    #if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
    static unsigned int fastgelu_get_mxcsr(void) { return __builtin_ia32_stmxcsr(); }
    static void fastgelu_set_mxcsr(unsigned int v) { __builtin_ia32_ldmxcsr(v); }
    #define FASTGELU_HAVE_MXCSR 1
    #else
    static unsigned int fastgelu_get_mxcsr(void) { return 0; }
    static void fastgelu_set_mxcsr(unsigned int v) { (void)v; }
    #define FASTGELU_HAVE_MXCSR 0
    #endif
    """
    unsigned int fastgelu_get_mxcsr() nogil
    void fastgelu_set_mxcsr(unsigned int) nogil
    const int FASTGELU_HAVE_MXCSR


def _mxcsr(value=None):
    """Test hook: the SSE control/status register of the calling thread (FTZ bit 15, DAZ bit 6, rounding
    bits 13-14, sticky flags bits 0-5); sets it first when `value` is given. None where there is no MXCSR."""
    if not FASTGELU_HAVE_MXCSR:
        return None
    if value is not None:
        fastgelu_set_mxcsr(value)
    return fastgelu_get_mxcsr()


cdef extern from *:
    """
    #if defined(__aarch64__) && (defined(__GNUC__) || defined(__clang__))
    #include <stdint.h>
    static uint64_t fastgelu_get_fpcr(void) { uint64_t v; __asm__ __volatile__("mrs %0, fpcr" : "=r"(v)); return v; }
    static void fastgelu_set_fpcr(uint64_t v) { __asm__ __volatile__("msr fpcr, %0" : : "r"(v) : "memory"); }
    #define FASTGELU_HAVE_FPCR 1
    #else
    static unsigned long long fastgelu_get_fpcr(void) { return 0; }
    static void fastgelu_set_fpcr(unsigned long long v) { (void)v; }
    #define FASTGELU_HAVE_FPCR 0
    #endif
    """
    unsigned long long fastgelu_get_fpcr() nogil
    void fastgelu_set_fpcr(unsigned long long) nogil
    const int FASTGELU_HAVE_FPCR


def _fpcr(value=None):
    """Test hook: the Arm64 floating-point control register of the calling thread (FZ bit 24, rounding bits
    22-23, DN bit 25, AHP bit 26, FZ16 bit 19); sets it first when `value` is given. None elsewhere."""
    if not FASTGELU_HAVE_FPCR:
        return None
    if value is not None:
        fastgelu_set_fpcr(value)
    return fastgelu_get_fpcr()
