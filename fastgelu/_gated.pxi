# ---- gated GELU: GELU(gate)*up and its gradient ------------------------------------------------------------
#
# gelu_mul(gate, up) = GELU(gate)*up;  gelu_mul_grad(gate, up, dy) = (dy*up*GELU'(gate), dy*GELU(gate)).
# A chunk's GELU(gate) comes from the variant's block function and is multiplied by up; the gradient's first
# output is the variant's gradient block with dy*up as its dy. So the error is the block function's plus one
# rounding (float16/bfloat16: computed in float32, rounded once to 16 bits at the end). Where the rounded
# GELU(gate) has lost its relative accuracy the product would magnify that: a float32 GELU(gate) that is
# subnormal or zero from a nonzero gate (gate < ~-13 for the exact form) while |up| is as large as 1e38. Those
# lanes (rare: found by one summary per chunk) are gathered and take GELU(gate) from one float64 block call
# and the product in double, rounded once. float64 has nothing wider: a GELU(gate) that underflowed to 0 from
# a finite gate stands for a tiny number of the gate's sign, so an infinite up gives +-inf there (the exact
# product's, not NaN); a subnormal GELU(gate) (gate < ~-37.6) times a huge up keeps the absolute error of that
# subnormal (docs/gated.md). dy*up that overflows from finite factors is redone the same way (float32: in
# double; float64: dy*GELU'(gate) first, then up), and so is an infinite dy*up whose gradient block gave NaN
# (GELU'(gate) underflowed: the exact product is -dy*up). Where the outputs hold no input (nor each other),
# the block functions write them and the products are formed in place (a stack buffer between cost a pass;
# the float32 SIMD forms (all three) form GELU(gate)*up and the gradient's dy*GELU(gate) as they store, without a
# pass of their own); a chunk with lanes to redo finds them again from its inputs, still whole. Otherwise
# everything lands in stack buffers before any output is written (but for a forward chunk without such lanes,
# whose products go to the output once its gates are read), so out=gate / out=up (exact aliasing) and the
# output-behind-input overlaps NumPy lets through read every input before it is overwritten.

from libc.math cimport copysign, fabsf as _gm_fabsf
from libc.string cimport memcpy as _gm_memcpy

cdef extern from "<float.h>":
    const float FLT_MIN
    const float FLT_MAX
    const double DBL_MAX

cdef enum:
    GM_CHUNK = 1024   # elements per chunk: ~150 KiB of stack for the gradient (loads, buffers, fix-up lists)


cdef inline double gm_prod(double g, double f, double u) noexcept nogil:
    """f*u with f = GELU(g); f == 0 from a finite nonzero g is a tiny number of g's sign: an infinite u gives
    +-u."""
    if f == 0 and g != 0 and fabs(g) != INFINITY and fabs(u) == INFINITY:
        return u if g > 0 else -u
    return f * u


cdef inline bint gm_lost(real g, real f) noexcept nogil:
    # float32: GELU(g) below the normal range from a nonzero g; float64: underflowed to 0
    if real is float:
        return (_gm_fabsf(f) < FLT_MIN) & (g != 0)
    else:
        return (f == 0) & (g != 0)


cdef inline bint gm_overflow(real a, real b, real p) noexcept nogil:
    # p = a*b is not finite while a and b are
    if real is float:
        return (not (_gm_fabsf(p) <= FLT_MAX)) & (_gm_fabsf(a) <= FLT_MAX) & (_gm_fabsf(b) <= FLT_MAX)
    else:
        return (not (fabs(p) <= DBL_MAX)) & (fabs(a) <= DBL_MAX) & (fabs(b) <= DBL_MAX)


cdef inline bint gm_nan_of_inf(real g, real w, real r) noexcept nogil:
    # r = w*GELU'(g) came out NaN from an infinite w and a finite g: GELU'(g) underflowed (g far negative),
    # while the exact value is a tiny negative number, so the product is -w
    if real is float:
        return (r != r) & (_gm_fabsf(w) == INFINITY) & (_gm_fabsf(g) <= FLT_MAX)
    else:
        return (r != r) & (fabs(w) == INFINITY) & (fabs(g) <= DBL_MAX)


cdef inline bint gm_maybe_lost(const real* f, npy_intp m) noexcept nogil:
    # whether any GELU(gate) of the chunk may have lost its accuracy (gm_lost without the gate: a zero from a
    # zero gate too), in one pass over the results alone that vectorizes; gm_count_lost only where it says so
    cdef npy_intp i
    cdef int k = 0
    for i in range(m):
        if real is float:
            k |= _gm_fabsf(f[i]) < FLT_MIN
        else:
            k |= f[i] == 0
    return k


cdef inline bint gm_maybe_bad(const real* f, const real* w, const real* r, npy_intp m) noexcept nogil:
    # the gradient's: any lane that gm_lost, gm_overflow or gm_nan_of_inf may hold, from the chunk's GELU(gate),
    # dy*up and gradient alone (a superset: also zeros from zero gates, products of infinite factors, NaN
    # inputs)
    cdef npy_intp i
    cdef int k = 0
    for i in range(m):
        if real is float:
            k |= (_gm_fabsf(f[i]) < FLT_MIN) | (not (_gm_fabsf(w[i]) <= FLT_MAX)) | (r[i] != r[i])
        else:
            k |= (f[i] == 0) | (not (fabs(w[i]) <= DBL_MAX)) | (r[i] != r[i])
    return k


cdef inline npy_intp gm_count_lost(const real* g, const real* f, npy_intp m) noexcept nogil:
    cdef npy_intp i, k = 0
    for i in range(m):
        k += gm_lost(g[i], f[i])
    return k


cdef inline npy_intp gm_gather_lost(const real* g, const real* f, npy_intp m, npy_intp* idx,
                                    double* gd) noexcept nogil:
    cdef npy_intp i, k = 0
    for i in range(m):
        if gm_lost(g[i], f[i]):
            idx[k] = i
            gd[k] = g[i]
            k += 1
    return k


cdef inline void gm_fix_lost(const real* g, const real* fac, real* y, const npy_intp* idx, double* gd, double* fd,
                             npy_intp k, variant* v) noexcept nogil:
    """y[i] = GELU(g[i]) * fac[i] for the k lanes idx whose block result lost its relative accuracy (gd: their
    gates): float32 from the float64 block function, in double, rounded once; float64 as gm_prod."""
    cdef npy_intp j
    if real is float:
        fwd_block(gd, fd, k, v)
        for j in range(k):
            y[idx[j]] = <float>gm_prod(gd[j], fd[j], fac[idx[j]])
    else:
        for j in range(k):
            y[idx[j]] = gm_prod(gd[j], copysign(0.0, gd[j]), fac[idx[j]])   # the block's +-0


cdef inline bint gm_apart(const real* a, const real* y, npy_intp m) noexcept nogil:
    return <size_t>(a + m) <= <size_t>y or <size_t>(y + m) <= <size_t>a


cdef inline bint gm_mul_lost(const real* g, const real* u, real* y, npy_intp m) noexcept nogil:
    # y = GELU(g) in, GELU(g)*u out, and whether a lane lost its accuracy (gm_lost): one pass that vectorizes
    cdef npy_intp i
    cdef int k = 0
    for i in range(m):
        k |= gm_lost(g[i], y[i])
        y[i] = y[i] * u[i]
    return k


cdef inline npy_intp gm_gather_lost_listed(const real* g, npy_intp m, npy_intp* idx, npy_intp k, bint tiny,
                                          real* gc, real* fc, double* gd, variant* v) noexcept nogil:
    # idx[:k], the tail lanes the kernel found lost, and where it met tiny gates, those whose GELU(g) = g/2
    # lost its accuracy (gm_lost: only 0 < |g| < 2^-125 can, so only those are evaluated again): their gates to
    # gd; returns their number. A lane is not both: idx has room
    cdef npy_intp i, c = 0, k0 = k
    if tiny:
        for i in range(m):
            if g[i] != 0 and -2 * FLT_MIN < g[i] < 2 * FLT_MIN:
                idx[k0 + c] = i
                gc[c] = g[i]
                c += 1
        fwd_block(gc, fc, c, v)
        for i in range(c):
            if gm_lost(gc[i], fc[i]):
                idx[k] = idx[k0 + i]
                k += 1
    for i in range(k):
        gd[i] = g[idx[i]]
    return k


cdef inline void gm_mul_fused(const float* g, const float* u, float* y, npy_intp m, variant* v,
                              int* carry) noexcept nogil:
    # y = GELU(g)*u, y apart from g and u, by the float32 central forms, which multiply as they
    # store GELU(g) and list the tail lanes that lost their accuracy; only those lanes are redone. carry: the
    # kernel's state from the piece's previous chunk (its first chunk starts as a call's would)
    cdef float fb[GM_CHUNK]
    cdef float gb[GM_CHUNK]
    cdef npy_intp idx[GM_CHUNK]
    cdef double gd[GM_CHUNK]
    cdef double fd[GM_CHUNK]
    cdef npy_intp k
    cdef int tiny = 0
    gd[0] = 0       # gcc cannot tell that gm_gather_lost_listed fills gd[:k] (a false -Wmaybe-uninitialized)
    k = mul_block32(g, u, y, m, <Py_ssize_t*>idx, &tiny, carry, v)
    if k or tiny:
        k = gm_gather_lost_listed(g, m, idx, k, tiny, gb, fb, gd, v)
        if k:
            gm_fix_lost(g, u, y, idx, gd, fd, k, v)


cdef inline void gm_fwd_chunk(const real* g, const real* u, real* y, npy_intp m, variant* v,
                              int* carry) noexcept nogil:
    cdef real fb[GM_CHUNK]
    cdef npy_intp idx[GM_CHUNK]
    cdef double gd[GM_CHUNK]
    cdef double fd[GM_CHUNK]
    cdef npy_intp i, k
    if gm_apart(g, y, m) and gm_apart(u, y, m):
        # y holds no input: GELU(gate)*u goes there; lost lanes are found again from the gates
        if real is float and FG_F32_SIMD:
            gm_mul_fused(g, u, y, m, v, carry)
            return
        fwd_block(g, y, m, v)
        if gm_mul_lost(g, u, y, m):
            fwd_block(g, fb, m, v)
            k = gm_gather_lost(g, fb, m, idx, gd)
            gm_fix_lost(g, u, y, idx, gd, fd, k, v)
        return
    fwd_block(g, fb, m, v)
    if not (gm_maybe_lost(fb, m) and gm_count_lost(g, fb, m)):
        # straight to y: the gates are all read by now, and u[i] before y[i] is written (y == up, or behind
        # it)
        for i in range(m):
            y[i] = fb[i] * u[i]
        return
    k = gm_gather_lost(g, fb, m, idx, gd)
    for i in range(m):
        fb[i] = fb[i] * u[i]
    gm_fix_lost(g, u, fb, idx, gd, fd, k, v)
    _gm_memcpy(y, fb, m * sizeof(real))


cdef inline int gm_grad_direct(const real* g, const real* u, const real* dy, real* dg, real* du, npy_intp m,
                               variant* v, int* carry) noexcept nogil:
    # The gradient with outputs that hold no input (nor each other): dy*up to dg and the gradient block in place
    # there, then GELU(gate)*dy to du (float32 SIMD builds: formed as the kernel stores, its lost
    # lanes redone; else GELU(gate) to du, then times dy). Returns 0, or 1 where a GELU(gate) was lost (du's
    # lanes to redo), or 2 where some dy*up is not finite (both outputs to write again). With every dy*up
    # finite a NaN gradient comes from a NaN gate alone, which the buffered path would leave as it is too
    cdef npy_intp i
    cdef int k = 0, lost = 0
    for i in range(m):
        dg[i] = dy[i] * u[i]
        if real is float:
            k |= not (_gm_fabsf(dg[i]) <= FLT_MAX)
        else:
            k |= not (fabs(dg[i]) <= DBL_MAX)
    if k:
        return 2
    grad_block(g, dg, dg, m, v)
    if real is float and FG_F32_SIMD:
        gm_mul_fused(g, dy, du, m, v, carry)
        return 0
    fwd_block(g, du, m, v)
    for i in range(m):
        lost |= gm_lost(g[i], du[i])
        du[i] = du[i] * dy[i]
    return lost


cdef inline void gm_grad_chunk(const real* g, const real* u, const real* dy, real* dg, real* du, npy_intp m,
                               variant* v, int* carry) noexcept nogil:
    cdef real fb[GM_CHUNK]
    cdef real wb[GM_CHUNK]
    cdef real gb[GM_CHUNK]
    cdef npy_intp idx[GM_CHUNK]
    cdef npy_intp oidx[GM_CHUNK]
    cdef double gd[GM_CHUNK]
    cdef double fd[GM_CHUNK]
    cdef double wd[GM_CHUNK]
    cdef npy_intp i, j, k = 0, ko = 0
    cdef int direct
    if gm_apart(g, dg, m) and gm_apart(u, dg, m) and gm_apart(dy, dg, m) and gm_apart(g, du, m) \
            and gm_apart(u, du, m) and gm_apart(dy, du, m) and gm_apart(dg, du, m):
        direct = gm_grad_direct(g, u, dy, dg, du, m, v, carry)
        if direct == 1:     # the inputs are whole: find the lost lanes again
            fwd_block(g, fb, m, v)
            k = gm_gather_lost(g, fb, m, idx, gd)
            gm_fix_lost(g, dy, du, idx, gd, fd, k, v)
        if direct != 2:
            return
    fwd_block(g, fb, m, v)
    wb[0] = 0       # gcc cannot tell that the loop fills wb[:m] (a false -Wmaybe-uninitialized)
    for i in range(m):
        wb[i] = dy[i] * u[i]
    grad_block(g, wb, gb, m, v)
    if gm_maybe_bad(fb, wb, gb, m):
        for i in range(m):
            k += gm_lost(g[i], fb[i]) | gm_overflow(dy[i], u[i], wb[i]) | gm_nan_of_inf(g[i], wb[i], gb[i])
    if k:
        k = gm_gather_lost(g, fb, m, idx, gd)
        for i in range(m):
            if gm_overflow(dy[i], u[i], wb[i]):
                oidx[ko] = i
                ko += 1
            elif gm_nan_of_inf(g[i], wb[i], gb[i]):
                gb[i] = -wb[i]
    for i in range(m):
        fb[i] = fb[i] * dy[i]
    if k:
        gm_fix_lost(g, dy, fb, idx, gd, fd, k, v)
    if ko:
        # dy*up overflowed: float32 through the float64 gradient block with dy*up exact in double; float64
        # as dy*GELU'(gate) first, then times up
        for j in range(ko):
            gd[j] = g[oidx[j]]
            wd[j] = <double>dy[oidx[j]] * <double>u[oidx[j]] if real is float else dy[oidx[j]]
        grad_block(gd, wd, fd, ko, v)
        for j in range(ko):
            if real is float:
                gb[oidx[j]] = <float>fd[j]
            else:
                gb[oidx[j]] = fd[j] * u[oidx[j]]
    _gm_memcpy(dg, gb, m * sizeof(real))
    _gm_memcpy(du, fb, m * sizeof(real))


cdef inline void gm_fwd_piece(char* pg, char* pu, char* py, npy_intp sg, npy_intp su, npy_intp sy, npy_intp n,
                              stored* r, variant* v) noexcept nogil:
    cdef npy_intp c, m, z = sizeof(stored)
    cdef int carry = 0
    cdef float fg[GM_CHUNK]
    cdef float fu[GM_CHUNK]
    cdef float fo[GM_CHUNK]
    cdef double dg[GM_CHUNK]
    cdef double du[GM_CHUNK]
    cdef double dout[GM_CHUNK]
    if depends_on_output(pg, sg, py, sy, n) or depends_on_output(pu, su, py, sy, n):
        # reduce/accumulate: an input is an earlier output, so elements go one at a time, in order
        for c in range(n):
            gm_fwd_piece(pg + c * sg, pu + c * su, py + c * sy, 0, 0, 0, 1, r, v)
        return
    c = 0
    while c < n:
        m = n - c if n - c < GM_CHUNK else GM_CHUNK
        if (stored is float or stored is double) and sg == z and su == z and sy == z:
            gm_fwd_chunk(<const stored*>(pg + c * z), <const stored*>(pu + c * z), <stored*>(py + c * z), m, v,
                         &carry)
        else:
            load(pg + c * sg, sg, m, r, fg, dg)
            load(pu + c * su, su, m, r, fu, du)
            if stored is double:
                gm_fwd_chunk(dg, du, dout, m, v, &carry)
            else:
                gm_fwd_chunk(fg, fu, fo, m, v, &carry)
            store(py + c * sy, sy, m, r, fo, dout)
        c += GM_CHUNK


cdef inline void gm_grad_piece(char** p, const npy_intp* s, npy_intp n, stored* r, variant* v) noexcept nogil:
    """p, s: gate, up, dy, dgate, dup (pointers and strides)."""
    cdef npy_intp c, m, i, j, z = sizeof(stored)
    cdef int carry = 0
    cdef char* q[5]
    cdef npy_intp zero[5]
    cdef float fg[GM_CHUNK]
    cdef float fu[GM_CHUNK]
    cdef float fd[GM_CHUNK]
    cdef float fo1[GM_CHUNK]
    cdef float fo2[GM_CHUNK]
    cdef double dg[GM_CHUNK]
    cdef double du[GM_CHUNK]
    cdef double dd[GM_CHUNK]
    cdef double do1[GM_CHUNK]
    cdef double do2[GM_CHUNK]
    cdef bint serial = False
    for i in range(3):
        for j in range(3, 5):
            serial = serial or depends_on_output(p[i], s[i], p[j], s[j], n)
    if serial:
        for j in range(5):
            zero[j] = 0
        for c in range(n):
            for j in range(5):
                q[j] = p[j] + c * s[j]
            gm_grad_piece(q, zero, 1, r, v)
        return
    c = 0
    while c < n:
        m = n - c if n - c < GM_CHUNK else GM_CHUNK
        if (stored is float or stored is double) and s[0] == z and s[1] == z and s[2] == z and s[3] == z \
                and s[4] == z:
            gm_grad_chunk(<const stored*>(p[0] + c * z), <const stored*>(p[1] + c * z),
                          <const stored*>(p[2] + c * z), <stored*>(p[3] + c * z), <stored*>(p[4] + c * z), m, v,
                          &carry)
        else:
            load(p[0] + c * s[0], s[0], m, r, fg, dg)
            load(p[1] + c * s[1], s[1], m, r, fu, du)
            load(p[2] + c * s[2], s[2], m, r, fd, dd)
            if stored is double:
                gm_grad_chunk(dg, du, dd, do1, do2, m, v, &carry)
            else:
                gm_grad_chunk(fg, fu, fd, fo1, fo2, m, v, &carry)
            store(p[3] + c * s[3], s[3], m, r, fo1, do1)
            store(p[4] + c * s[4], s[4], m, r, fo2, do2)
        c += GM_CHUNK
