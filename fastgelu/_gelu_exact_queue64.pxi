# The exact form's float64 chunks. A chunk runs the central loop (no exp) for all 32 lanes; its inputs beyond
# the central piece are then queued by piece (_GxDefer64: middle up to |x| = 4, tail beyond) and computed 32
# at a time by that piece's loop alone, which overwrites their central results. Every loop is branch-free
# and vectorized; a queued lane costs a few scalar operations, far less than evaluating every piece for
# every lane and selecting (wide inputs hold all pieces in every chunk; the costs:
# docs/design/cython-kernels.md). Only tail batches pay for the division and the degree-23 polynomial, and
# only those with some |x| > 37 for the clamped, scaled exp. The order of the stores is that of _GxDefer
# (float32): a queued store lands below every address a later chunk reads.

cdef enum:
    _GX_Q64 = 2 * _GX_CHUNK + 8                   # a queue: up to 31 lanes, a chunk's 32 more, a vector's store
    # a forward chunk with this many lanes of one piece or more queues them by fg_queue64 (AVX-512).  Its
    # compress runs on the floating-point pipes that the central loop keeps busy, so it pays only for many
    # lanes; fewer go one at a time on the integer pipes. The gradient and AVX2 (by a permute table) do not
    # use it (why: docs/design/cython-kernels.md)
    _GX_QUEUE64_VEC_MIN = 9

cdef struct _GxDefer64:
    int km, kt                                    # lanes queued: middle, tail
    double xm[_GX_Q64]
    double dm[_GX_Q64]
    double* ym[_GX_Q64]
    double xt[_GX_Q64]
    double dt[_GX_Q64]
    double* yt[_GX_Q64]

cdef inline void _gx_defer64_init(_GxDefer64* q) noexcept nogil:
    q.km = 0
    q.kt = 0

cdef inline void _gx_pad64(double* xq, double* dq, int k, double v) noexcept nogil:
    """Lanes k.. of a last batch hold an input of its piece (v): no lane of a batch leaves the piece."""
    cdef int j
    for j in range(k, _GX_CHUNK):
        xq[j] = v
        dq[j] = 0

cdef inline void _gx_shift64(double* xq, double** yq) noexcept nogil:
    """After a batch of 32: the lanes queued past it (fewer than 32) move to the front.  All 32 places move,
    a fixed count the compiler unrolls, rather than a loop to k - 32."""
    cdef int j
    for j in range(_GX_CHUNK):
        xq[j] = xq[j + _GX_CHUNK]
        yq[j] = yq[j + _GX_CHUNK]

cdef inline void _gx_fwd64_flush_mid(_GxDefer64* q, int n) noexcept nogil:
    """The first 32 middle lanes, results stored for the first n."""
    cdef double r[_GX_CHUNK]
    cdef int j
    for j in range(_GX_CHUNK):
        r[j] = _gx_fwd64_far_normal(q.xm[j], _gx_T64m(fabs(q.xm[j]) - 2.5), _gx_exp_half_sq_normal(q.xm[j]))
    for j in range(n):
        q.ym[j][0] = r[j]

cdef inline void _gx_fwd64_flush_tail(_GxDefer64* q, int n) noexcept nogil:
    cdef double r[_GX_CHUNK]
    cdef int j
    if fg_far_mask64(q.xt, 37.0) == 0:           # nearly always: the unscaled exp suffices
        for j in range(_GX_CHUNK):
            r[j] = _gx_fwd64_far_normal(q.xt[j], _gx_T64t_of(q.xt[j]), _gx_exp_half_sq_normal(q.xt[j]))
    else:
        for j in range(_GX_CHUNK):
            r[j] = _gx_fwd64_far(q.xt[j], _gx_T64t_of(q.xt[j]), _gx_exp_half_sq(q.xt[j]))
    for j in range(n):
        q.yt[j][0] = r[j]

cdef inline void _gx_grad64_flush_mid(_GxDefer64* q, int n) noexcept nogil:
    cdef double g[_GX_CHUNK]
    cdef int j
    for j in range(_GX_CHUNK):
        g[j] = _gx_grad64_far_normal(q.xm[j], _gx_D64m(fabs(q.xm[j]) - 2.5), _gx_exp_half_sq_normal(q.xm[j]))
    for j in range(n):
        q.ym[j][0] = q.dm[j] * g[j]

cdef inline void _gx_grad64_flush_tail(_GxDefer64* q, int n) noexcept nogil:
    cdef double g[_GX_CHUNK]
    cdef int j
    if fg_far_mask64(q.xt, 37.0) == 0:
        for j in range(_GX_CHUNK):
            g[j] = _gx_grad64_far_normal(q.xt[j], _gx_D64t_of(q.xt[j]), _gx_exp_half_sq_normal(q.xt[j]))
    else:
        for j in range(_GX_CHUNK):
            g[j] = _gx_grad64_far(q.xt[j], _gx_D64t_of(q.xt[j]), _gx_exp_half_sq(q.xt[j]))
    for j in range(n):
        q.yt[j][0] = grad_times64(q.dt[j], g[j], q.xt[j])   # GELU' underflows here (x < -38.67)

cdef void _gx_fwd64_many(_GxDefer64* q, const double* x, double* y, unsigned int mask, bint tail) noexcept nogil:
    """Forward, many lanes of one piece (AVX-512): compressed, then a full batch computed and the lanes past
    it moved to the front.  Out of line, so that the common chunks' code stays as it is without it
    (docs/design/cython-kernels.md)."""
    if tail:
        q.kt = fg_queue64(q.xt, q.yt, q.kt, x, y, mask)
        if q.kt >= _GX_CHUNK:
            _gx_fwd64_flush_tail(q, _GX_CHUNK)
            _gx_shift64(q.xt, q.yt)
            q.kt -= _GX_CHUNK
    else:
        q.km = fg_queue64(q.xm, q.ym, q.km, x, y, mask)
        if q.km >= _GX_CHUNK:
            _gx_fwd64_flush_mid(q, _GX_CHUNK)
            _gx_shift64(q.xm, q.ym)
            q.km -= _GX_CHUNK

cdef inline void _gx_defer64(_GxDefer64* q, const double* x, const double* d, double* y, unsigned int mid,
                             unsigned int tail, bint grad) noexcept nogil:
    """Queue lanes (bit masks) of the middle and the tail piece, computing each full batch of 32: one lane at a
    time, a batch computed when the queue holds 32 exactly, or many forward lanes at once (_gx_fwd64_many: a
    loop over them mispredicts its exit in most chunks).  The counts live in locals: through q, every store
    would reload them."""
    cdef int j, k
    if not grad and FG_QUEUE64_VEC and fg_popcount32(mid) >= _GX_QUEUE64_VEC_MIN:
        _gx_fwd64_many(q, x, y, mid, False)
    else:
        k = q.km
        while mid:
            j = fg_ctz32(mid)
            q.xm[k] = x[j]
            if grad:
                q.dm[k] = d[j]
            q.ym[k] = y + j
            k += 1
            if k == _GX_CHUNK:
                if grad:
                    _gx_grad64_flush_mid(q, _GX_CHUNK)
                else:
                    _gx_fwd64_flush_mid(q, _GX_CHUNK)
                k = 0
            mid &= mid - 1
        q.km = k
    if not grad and FG_QUEUE64_VEC and fg_popcount32(tail) >= _GX_QUEUE64_VEC_MIN:
        _gx_fwd64_many(q, x, y, tail, True)
    else:
        k = q.kt
        while tail:
            j = fg_ctz32(tail)
            q.xt[k] = x[j]
            if grad:
                q.dt[k] = d[j]
            q.yt[k] = y + j
            k += 1
            if k == _GX_CHUNK:
                if grad:
                    _gx_grad64_flush_tail(q, _GX_CHUNK)
                else:
                    _gx_fwd64_flush_tail(q, _GX_CHUNK)
                k = 0
            tail &= tail - 1
        q.kt = k

cdef enum:
    # a chunk without tail inputs and more than this many middle ones evaluates central and middle for
    # every lane and selects rather than queueing them: past this count, the cheaper of the two (the costs:
    # docs/design/cython-kernels.md)
    _GX_QUEUE64_MAX = 20

cdef inline void _gx_fwd64_chunk(const double* x, double* y, _GxDefer64* q) noexcept nogil:
    cdef int j
    cdef unsigned int tail = fg_far_mask64(x, 4.0)
    cdef unsigned int far = fg_far_mask64(x, FG_CENTRAL)
    if tail == 0 and fg_popcount32(far) > _GX_QUEUE64_MAX:
        for j in range(_GX_CHUNK):
            y[j] = sel(fabs(x[j]) <= FG_CENTRAL, _gx_fwd64_central(x[j]),
                       _gx_fwd64_far_normal(x[j], _gx_T64m(fabs(x[j]) - 2.5), _gx_exp_half_sq_normal(x[j])))
        return
    for j in range(_GX_CHUNK):
        y[j] = _gx_fwd64_central(x[j])
    _gx_defer64(q, x, NULL, y, far & ~tail, tail, False)

cdef inline void _gx_grad64_chunk(const double* x, const double* d, double* y, _GxDefer64* q) noexcept nogil:
    cdef double gb[_GX_CHUNK]
    cdef int j
    cdef unsigned int tail = fg_far_mask64(x, 4.0)
    cdef unsigned int far = fg_far_mask64(x, FG_CENTRAL_GRAD)
    if tail == 0 and fg_popcount32(far) > _GX_QUEUE64_MAX:
        for j in range(_GX_CHUNK):
            gb[j] = sel(fabs(x[j]) <= FG_CENTRAL_GRAD, _gx_grad64_central(x[j]),
                        _gx_grad64_far_normal(x[j], _gx_D64m(fabs(x[j]) - 2.5), _gx_exp_half_sq_normal(x[j])))
        for j in range(_GX_CHUNK):
            y[j] = d[j] * gb[j]
        return
    for j in range(_GX_CHUNK):
        y[j] = d[j] * _gx_grad64_central(x[j])
    _gx_defer64(q, x, d, y, far & ~tail, tail, True)

cdef inline void _gx_fwd64_finish(_GxDefer64* q) noexcept nogil:
    if q.km:
        _gx_pad64(q.xm, q.dm, q.km, 2.0)
        _gx_fwd64_flush_mid(q, q.km)
    if q.kt:
        _gx_pad64(q.xt, q.dt, q.kt, 5.0)
        _gx_fwd64_flush_tail(q, q.kt)

cdef inline void _gx_grad64_finish(_GxDefer64* q) noexcept nogil:
    if q.km:
        _gx_pad64(q.xm, q.dm, q.km, 2.0)
        _gx_grad64_flush_mid(q, q.km)
    if q.kt:
        _gx_pad64(q.xt, q.dt, q.kt, 5.0)
        _gx_grad64_flush_tail(q, q.kt)
