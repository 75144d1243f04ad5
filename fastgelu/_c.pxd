# Every C header of src/ declared once for Cython, in src/'s terms; _kernels.pxi cimports it all.
# The blocks keep the include order the kernels were built with (each header also includes what it needs).
# Constants are C macros declared `const`, so gcc folds them into the vector code (a module-level Cython
# `cdef double` is a mutable global that stores through a double* may alias). Some get a short Cython
# alias ("_SHIFTER" for FG_SHIFTER): the names the math in _fp.pxi, _gelu_exact.pxi and _gelu_sigmoid.pxi
# is written with.

# ---- fg_fp.h: bit casts, FMA and error-free products, selects; exp's constants (tools/fit_fp.py) ---------
cdef extern from "fg_fp.h":
    const int FG_HAVE_FMA
    long long fg_f64_bits(double x) noexcept nogil
    double fg_f64_from_bits(long long i) noexcept nogil
    double fg_two_prod_err(double a, double b, double p) noexcept nogil
    double fg_fma(double a, double b, double c) noexcept nogil
    double sel "fg_sel"(bint c, double a, double b) noexcept nogil
    float fg_fmaf(float a, float b, float c) noexcept nogil
    unsigned int fg_f32_bits(float x) noexcept nogil
    float fg_f32_from_bits(unsigned int i) noexcept nogil
    float sel32 "fg_sel32"(bint c, float a, float b) noexcept nogil

    const double _SHIFTER "FG_SHIFTER"
    const double _SHIFTER_BIAS "FG_SHIFTER_BIAS"
    const double _INV_LN2 "FG_INV_LN2"
    const double _LN2 "FG_LN2"
    const double _LN2_HI "FG_LN2_HI"
    const double _LN2_LO "FG_LN2_LO"
    const double _EQ0 "FG_EQ0", _EQ1 "FG_EQ1", _EQ2 "FG_EQ2", _EQ3 "FG_EQ3", _EQ4 "FG_EQ4"
    const double _EQ5 "FG_EQ5", _EQ6 "FG_EQ6", _EQ7 "FG_EQ7", _EQ8 "FG_EQ8", _EQ9 "FG_EQ9"
    const double _FQ0 "FG_FQ0", _FQ1 "FG_FQ1", _FQ2 "FG_FQ2", _FQ3 "FG_FQ3", _FQ4 "FG_FQ4"

# ---- fg_exact.h: the exact form's float64 constants and piece boundaries -----------------------------------
cdef extern from "fg_exact.h":
    const double FG_INV_SQRT2PI_HI
    const double FG_INV_SQRT2PI_LO
    const double FG_SQRT2_OVER_PI_HI
    const double FG_SQRT2_OVER_PI_LO
    const double FG_SCALE_DN
    const double FG_CENTRAL
    const double FG_CENTRAL_GRAD

# ---- fg_lanes.h: lane masks and the float64 lane queue ----------------------------------------------------
cdef extern from "fg_lanes.h":
    int fg_ctz32(unsigned int m) noexcept nogil
    int fg_popcount32(unsigned int m) noexcept nogil
    unsigned int fg_far_mask32(const float* x) noexcept nogil
    unsigned int fg_far_mask64(const double* x, double lim) noexcept nogil
    const bint FG_QUEUE64_VEC
    int fg_queue64(double* xq, double** yq, int k, const double* x, double* y, unsigned int mask) noexcept nogil

# ---- fg_f32_kernels.h: the float32 kernels on SIMD vectors ------------------------------------------------
cdef extern from "fg_f32_kernels.h":
    # Compiled in when FG_F32_FWD is defined (setup.py does unless FASTGELU_F32_FWD=0 at build time) in
    # a build with SIMD primitives (fg_simd.h); FG_F32_SIMD says whether this build has them.
    const bint FG_F32_SIMD
    # The entry points, fg_f_<name>_block, _grad_block, _mul_block of each form: _forms.pxi, rendered from
    # _lists.py's F32_KERNELS.

# ---- fg_xsig.h: the tanh and sigmoid forms' constants (tools/fit_fp.py) ----------------------------------
cdef extern from "fg_xsig.h":
    # double-double constants
    const double _C2_HI "FG_C2_HI"
    const double _C2_LO "FG_C2_LO"
    const double _A_HI "FG_A_HI"
    const double _A_LO "FG_A_LO"
    const double _A3 "FG_A3"
    const double _A3_LO "FG_A3_LO"
    const double _K_HI "FG_K_HI"
    const double _K_LO "FG_K_LO"
    const double _S "FG_S"
    const double _INV_2S "FG_INV_2S"
    # float32 forward: 2^-z with z = |w| log2(e) as a float pair, 2^f = 1 + f*Q(f) on |f| <= 1/2 (relative
    # error 2^-28.5 with these float coefficients)
    const float _K_TANH_HI "FG_K_TANH_HI"
    const float _K_TANH_LO "FG_K_TANH_LO"
    const float _KA_TANH_HI "FG_KA_TANH_HI"
    const float _KA_TANH_LO "FG_KA_TANH_LO"
    const float _K_SIG_HI "FG_K_SIG_HI"
    const float _K_SIG_LO "FG_K_SIG_LO"
    const float _Z_MAX "FG_Z_MAX"
    const float _SHIFTER_F "FG_SHIFTER_F"
    const float _Q0 "FG_Q0", _Q1 "FG_Q1", _Q2 "FG_Q2", _Q3 "FG_Q3", _Q4 "FG_Q4", _Q5 "FG_Q5", _Q6 "FG_Q6"
    const float _ONE_F "FG_ONE_F"
    const float _TWOM64_F "FG_TWOM64_F"

# ---- fg_env.h: OpenMP (or its serial stand-ins) and the FP environment of a piece ----------------------
cdef extern from "fg_env.h":
    const int FG_OPENMP
    int omp_get_max_threads() nogil
    void omp_set_num_threads(int) nogil
    ctypedef struct fg_fpstate:
        pass
    void fg_fp_enter(fg_fpstate*) nogil
    void fg_fp_leave(const fg_fpstate*) nogil

# ---- fg_team.h: a parallel call's clock, the machine's runnable threads, CPU counts ----------------------
cdef extern from "fg_team.h":
    ctypedef struct fg_team:
        long long t0
        int nt
        int want
        int sample
        int runnable
        long long start[256]
        long long end[256]
    long long fg_now_ns() nogil
    int fg_runnable() nogil
    int fg_loadavg_fd_open() nogil
    int fg_load_source(const char*) nogil
    int fg_cpus_usable() nogil
    int fg_cpus_online() nogil
    void fg_team_begin(fg_team*, int) nogil
    void fg_team_start(fg_team*, long long) nogil
    void fg_team_done(fg_team*, long long) nogil

# ---- fg_half.h: float16/bfloat16 conversions (integer code: vectorized on every ISA level) and lookups ---
cdef extern from "fg_half.h":
    float fg_half_to_float(unsigned short) nogil
    unsigned short fg_float_to_half(float) nogil
    void fg_halves_to_floats(const unsigned short*, float*, long) nogil
    void fg_floats_to_halves(const float*, unsigned short*, long) nogil
    float fg_bf16_to_float(unsigned short) nogil
    unsigned short fg_float_to_bf16(float) nogil
    void fg_lookup16(const unsigned short* tab, const unsigned short* inp, unsigned short* out, long n) nogil

# ---- fg_cpu.h: CPU features and the control registers of the FP environment ------------------------------
cdef extern from "fg_cpu.h":
    ctypedef enum fg_cpu_isa:
        FG_CPU_AVX2
        FG_CPU_AVX512
    int fg_cpu_has(fg_cpu_isa) nogil
    unsigned int fg_get_mxcsr() nogil
    void fg_set_mxcsr(unsigned int) nogil
    const int FG_HAVE_MXCSR
    unsigned long long fg_get_fpcr() nogil
    void fg_set_fpcr(unsigned long long) nogil
    const int FG_HAVE_FPCR

# ---- fg_simd.h: the SIMD primitives of the float32 kernels, per instruction set -------------------------
cdef extern from "fg_simd.h":
    const char* FG_F32_SIMD_NAME
    const int FG_F32_REQUESTED
