# NumPy inner loops and the threading policy.
#
# A loop gets (args, dimensions, steps) from NumPy's iterator. Contiguous runs go to the variant's block
# function (where the vectorized fast paths live); anything strided goes element by element through the
# scalar function. Large calls are cut into one contiguous piece per OpenMP thread; small ones stay on the
# calling thread because waking the team costs more than the work (see PARALLEL_MIN).
#
# Variant and dtype are chosen at compile time: `variant` is a fused type over empty tag structs, so each
# (variant, dtype) pair is its own specialization with the math inlined, yet the loop is written once.

from cython.parallel cimport prange

cdef extern from *:
    """
    #include <fenv.h>
    #ifdef _OPENMP
    #include <omp.h>
    #define FASTGELU_OPENMP 1
    #else
    #define FASTGELU_OPENMP 0
    static inline int omp_get_max_threads(void) { return 1; }
    static inline void omp_set_num_threads(int n) { (void)n; }
    #endif
    """
    const int FASTGELU_OPENMP
    int omp_get_max_threads() nogil
    void omp_set_num_threads(int) nogil
    ctypedef struct fexcept_t:
        pass
    int FE_ALL_EXCEPT
    int fegetexceptflag(fexcept_t*, int) nogil
    int fesetexceptflag(const fexcept_t*, int) nogil

cdef struct VNone:
    char _unused
cdef struct VTanh:
    char _unused
cdef struct VSigmoid:
    char _unused

ctypedef fused variant:
    VNone
    VTanh
    VSigmoid


cdef inline real fwd(real x, variant* v) noexcept nogil:
    if variant is VNone:
        return gelu_none(x)
    elif variant is VTanh:
        return gelu_tanh(x)
    else:
        return gelu_sigmoid(x)

cdef inline real grad(real x, real dy, variant* v) noexcept nogil:
    if variant is VNone:
        return gelu_none_grad(x, dy)
    elif variant is VTanh:
        return gelu_tanh_grad(x, dy)
    else:
        return gelu_sigmoid_grad(x, dy)

cdef inline void fwd_block(const real* x, real* y, npy_intp n, variant* v) noexcept nogil:
    if variant is VNone:
        gelu_none_block(x, y, n)
    elif variant is VTanh:
        gelu_tanh_block(x, y, n)
    else:
        gelu_sigmoid_block(x, y, n)

cdef inline void grad_block(const real* x, const real* dy, real* y, npy_intp n, variant* v) noexcept nogil:
    if variant is VNone:
        gelu_none_grad_block(x, dy, y, n)
    elif variant is VTanh:
        gelu_tanh_grad_block(x, dy, y, n)
    else:
        gelu_sigmoid_grad_block(x, dy, y, n)


# ---- threading policy (the only place that decides how many threads a call uses) -------------------------

# Below this many elements a call runs on the calling thread: waking the OpenMP team costs a few
# microseconds, as much as computing ~30K elements. Measured with benches/ (see README, "Threads").
cdef npy_intp PARALLEL_MIN = 32768
cdef int _user_threads = 0        # set_num_threads(); 0 = follow OpenMP (OMP_NUM_THREADS, threadpoolctl)
cdef bint _forked_child = False   # GNU libgomp's pool does not survive fork(): a child runs serially


cdef inline int threads_for(npy_intp n) noexcept nogil:
    if n < PARALLEL_MIN or _forked_child:
        return 1
    cdef int nt = omp_get_max_threads()
    if 0 < _user_threads < nt:
        nt = _user_threads
    # every thread gets at least half the threshold, so a call just above it does not pay for a team
    cdef npy_intp cap = n // (PARALLEL_MIN // 2)
    if nt > cap:
        nt = <int>cap
    return nt if nt > 1 else 1


def _set_threads(int n):
    """Thread cap for this kernel module (0 = follow OpenMP); see fastgelu.set_num_threads."""
    global _user_threads
    _user_threads = n
    if n > 0:
        omp_set_num_threads(n)


def _max_threads():
    """Threads a large call would use now, from the calling thread."""
    return threads_for(PARALLEL_MIN * 1024)


def _after_fork_in_child():
    global _forked_child
    _forked_child = True


import os as _os
_os.register_at_fork(after_in_child=_after_fork_in_child)
OPENMP = bool(FASTGELU_OPENMP)


# ---- loops ------------------------------------------------------------------------------------------------

cdef inline void fwd_piece(char* px, char* py, npy_intp sx, npy_intp sy, npy_intp n,
                           real* r, variant* v) noexcept nogil:
    cdef npy_intp i
    if sx == sizeof(real) and sy == sizeof(real):
        fwd_block(<const real*>px, <real*>py, n, v)
    else:
        for i in range(n):
            (<real*>(py + i * sy))[0] = fwd((<real*>(px + i * sx))[0], v)


cdef inline void grad_piece(char* px, char* pd, char* py, npy_intp sx, npy_intp sd, npy_intp sy,
                            npy_intp n, real* r, variant* v) noexcept nogil:
    cdef npy_intp i, c, m
    cdef real dyconst[512]
    if sx == sizeof(real) and sy == sizeof(real) and sd == sizeof(real):
        grad_block(<const real*>px, <const real*>pd, <real*>py, n, v)
    elif sx == sizeof(real) and sy == sizeof(real) and sd == 0:
        # one dy for all (gelu_grad without grad_output, or a scalar): keep the vectorized block path
        for i in range(512):
            dyconst[i] = (<real*>pd)[0]
        for c in range(0, n, 512):
            m = n - c if n - c < 512 else 512
            grad_block(<const real*>px + c, dyconst, <real*>py + c, m, v)
    else:
        for i in range(n):
            (<real*>(py + i * sy))[0] = grad((<real*>(px + i * sx))[0], (<real*>(pd + i * sd))[0], v)


cdef inline npy_intp piece_len(npy_intp n, int nt) noexcept nogil:
    # whole 64-element groups per thread so that pieces of contiguous data start on cache-line boundaries
    return (((n + nt - 1) // nt) + 63) & ~(<npy_intp>63)


cdef inline void fwd_loop(char** args, const npy_intp* dims, const npy_intp* steps,
                          real* r, variant* v) noexcept nogil:
    cdef npy_intp n = dims[0], sx = steps[0], sy = steps[1], per, start, k
    cdef int nt = threads_for(n)
    cdef fexcept_t flags
    # Lanes computed and then discarded by a select may raise overflow/invalid; underflow in the tail is
    # expected. NumPy turns flags into warnings, so the caller's flags are put back as they were.
    fegetexceptflag(&flags, FE_ALL_EXCEPT)
    if nt == 1:
        fwd_piece(args[0], args[1], sx, sy, n, r, v)
    else:
        per = piece_len(n, nt)
        for k in prange(nt, num_threads=nt, schedule='static'):
            start = k * per
            if start < n:
                fwd_piece(args[0] + start * sx, args[1] + start * sy, sx, sy,
                          per if n - start > per else n - start, r, v)
    fesetexceptflag(&flags, FE_ALL_EXCEPT)


cdef inline void grad_loop(char** args, const npy_intp* dims, const npy_intp* steps,
                           real* r, variant* v) noexcept nogil:
    cdef npy_intp n = dims[0], sx = steps[0], sd = steps[1], sy = steps[2], per, start, k
    cdef int nt = threads_for(n)
    cdef fexcept_t flags
    fegetexceptflag(&flags, FE_ALL_EXCEPT)
    if nt == 1:
        grad_piece(args[0], args[1], args[2], sx, sd, sy, n, r, v)
    else:
        per = piece_len(n, nt)
        for k in prange(nt, num_threads=nt, schedule='static'):
            start = k * per
            if start < n:
                grad_piece(args[0] + start * sx, args[1] + start * sd, args[2] + start * sy, sx, sd, sy,
                           per if n - start > per else n - start, r, v)
    fesetexceptflag(&flags, FE_ALL_EXCEPT)
