# The exact form's block functions, the entry of every caller: float32 goes to the SIMD kernels where the
# build has them (src/fg_gelu_f32.h); otherwise, and for float64, the input runs chunk by chunk, through a
# tile-sized local copy when it shares memory with the output.

cdef inline void _gx_fwd_chunk(const real* xb, real* y, _GxDefer* p, _GxDefer64* q) noexcept nogil:
    cdef int j
    cdef unsigned int far
    if real is float:
        far = fg_far_mask32(xb)
        if fg_popcount32(far) <= _GX_PATCH_MAX:
            for j in range(_GX_CHUNK):
                y[j] = <float>_gx_fwd_central32(xb[j])
            while far:
                j = fg_ctz32(far)
                if _gx_defer(p, xb[j], 0, y + j):
                    _gx_fwd_flush(p)
                far &= far - 1
        else:
            for j in range(_GX_CHUNK):
                y[j] = <float>_gx_fwd_full32(xb[j])
    else:
        _gx_fwd64_chunk(xb, y, q)

cdef inline void _gx_grad_chunk(const real* xb, const real* db, real* y, _GxDefer* p,
                                _GxDefer64* q) noexcept nogil:
    # the full path goes through a local buffer and is multiplied by dy in a second loop: a select that
    # feeds a multiply can be threaded into a branch (the style note of _fp.pxi)
    cdef double gb[_GX_CHUNK]
    cdef int j
    cdef unsigned int far
    if real is float:
        far = fg_far_mask32(xb)
        if fg_popcount32(far) <= _GX_PATCH_MAX:   # no selects here: one fused loop
            for j in range(_GX_CHUNK):
                y[j] = <float>(<double>db[j] * _gx_grad_central32(xb[j]))
            while far:
                j = fg_ctz32(far)
                if _gx_defer(p, xb[j], db[j], y + j):
                    _gx_grad_flush(p)
                far &= far - 1
        else:
            for j in range(_GX_CHUNK):
                gb[j] = _gx_grad_full32(xb[j])
            for j in range(_GX_CHUNK):
                y[j] = <float>(<double>db[j] * gb[j])
    else:
        _gx_grad64_chunk(xb, db, y, q)

cdef inline bint _gx_apart(const real* a, real* y, Py_ssize_t n) noexcept nogil:
    # no shared memory: chunks are computed straight from the input.  Otherwise (in place, or a shifted
    # overlap NumPy let through) the input is copied a tile at a time first, which spares gcc a runtime alias
    # check that sends exact aliasing to its scalar fallback.  Deferred lanes keep their own input copy, and
    # a deferred store lands below every address a later chunk reads (NumPy only lets through
    # output-behind overlaps).
    return a + n <= <const real*>y or <const real*>y + n <= a

cdef inline Py_ssize_t _gx_tile_len(Py_ssize_t left) noexcept nogil:
    # whole chunks, at most a tile
    return _GX_TILE if left >= _GX_TILE else left - left % _GX_CHUNK

cdef inline void gelu_none_block(const real* x, real* y, Py_ssize_t n) noexcept nogil:
    cdef real xb[_GX_CHUNK]
    cdef real yb[_GX_CHUNK]
    cdef _GxDefer p
    cdef _GxDefer64 q
    cdef Py_ssize_t i = 0, j, m
    cdef real tile[_GX_TILE]
    cdef Py_ssize_t t
    if real is float:
        if FG_F32_SIMD:
            fg_f_gelu_block(x, y, n)
            return
        _gx_defer_init(&p)
    else:
        _gx_defer64_init(&q)
    if _gx_apart(x, y, n):
        while i + _GX_CHUNK <= n:
            _gx_fwd_chunk(x + i, y + i, &p, &q)
            i += _GX_CHUNK
    while i + _GX_CHUNK <= n:                     # otherwise whole chunks through a local copy, a tile at a time
        m = _gx_tile_len(n - i)
        for j in range(m):
            tile[j] = x[i + j]
        t = 0
        while t < m:
            _gx_fwd_chunk(tile + t, y + i + t, &p, &q)
            t += _GX_CHUNK
        i += m
    m = n - i
    if m:                                         # ragged end: padded chunk, copied back once complete
        for j in range(_GX_CHUNK):
            xb[j] = x[i + j] if j < m else 0
        _gx_fwd_chunk(xb, yb, &p, &q)
    if real is float:
        if p.k:
            _gx_fwd_flush(&p)
    else:
        _gx_fwd64_finish(&q)
    for j in range(m):
        y[i + j] = yb[j]

cdef inline void gelu_none_grad_block(const real* x, const real* dy, real* y, Py_ssize_t n) noexcept nogil:
    cdef real xb[_GX_CHUNK]
    cdef real db[_GX_CHUNK]
    cdef real yb[_GX_CHUNK]
    cdef _GxDefer p
    cdef _GxDefer64 q
    cdef Py_ssize_t i = 0, j, m
    cdef real tile[_GX_TILE]
    cdef real dtile[_GX_TILE]
    cdef Py_ssize_t t
    if real is float:
        if FG_F32_SIMD:
            fg_f_gelu_grad_block(x, dy, y, n)
            return
        _gx_defer_init(&p)
    else:
        _gx_defer64_init(&q)
    if _gx_apart(x, y, n) and _gx_apart(dy, y, n):
        while i + _GX_CHUNK <= n:
            _gx_grad_chunk(x + i, dy + i, y + i, &p, &q)
            i += _GX_CHUNK
    while i + _GX_CHUNK <= n:
        m = _gx_tile_len(n - i)
        for j in range(m):
            tile[j] = x[i + j]
            dtile[j] = dy[i + j]
        t = 0
        while t < m:
            _gx_grad_chunk(tile + t, dtile + t, y + i + t, &p, &q)
            t += _GX_CHUNK
        i += m
    m = n - i
    if m:
        for j in range(_GX_CHUNK):
            xb[j] = x[i + j] if j < m else 0
            db[j] = dy[i + j] if j < m else 0
        _gx_grad_chunk(xb, db, yb, &p, &q)
    if real is float:
        if p.k:
            _gx_grad_flush(&p)
    else:
        _gx_grad64_finish(&q)
    for j in range(m):
        y[i + j] = yb[j]

cdef inline Py_ssize_t gelu_none_mul_block32(const float* g, const float* u, float* y, Py_ssize_t n, Py_ssize_t* lost,
                                             int* tiny, int* carry) noexcept nogil:
    return fg_f_gelu_mul_block(g, u, y, n, lost, tiny, carry)
