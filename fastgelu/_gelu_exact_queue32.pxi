# The baseline build's float32 deferral queue: lanes beyond the central piece met in otherwise central
# chunks, computed 32 at a time by the full path (_gelu_exact32.pxi).

cdef enum:
    # a chunk with at most this many inputs beyond |x| = 3 runs the central loop and defers those lanes
    # (_GxDefer); more go to the vector full path. A flush runs the full path, not the tail piece alone
    # (both choices: docs/design/cython-kernels.md)
    _GX_PATCH_MAX = 16

cdef struct _GxDefer:
    # float32 inputs beyond |x| = 3 met in otherwise central chunks, held until 32 have gathered and then
    # computed as one vector chunk of the full path: the same code on the same values, so the same bits,
    # at 1/32 of a chunk's cost each instead of a scalar evaluation or a whole vector chunk
    int k
    float x[_GX_CHUNK]
    float d[_GX_CHUNK]
    float* y[_GX_CHUNK]

cdef inline void _gx_defer_init(_GxDefer* p) noexcept nogil:
    cdef int j
    p.k = 0
    for j in range(_GX_CHUNK):
        p.x[j] = 4      # a tail input: the unused lanes of a flush compute nothing special
        p.d[j] = 0

cdef inline bint _gx_defer(_GxDefer* p, float x, float d, float* y) noexcept nogil:
    """Queue one lane; True when the queue is full and must be flushed."""
    p.x[p.k] = x
    p.d[p.k] = d
    p.y[p.k] = y
    p.k += 1
    return p.k == _GX_CHUNK

cdef enum:
    _GX_FLUSH_SCALAR = 2    # a final flush of this few lanes runs them one by one rather than as a vector
                            # chunk: buffered pieces (strided, 16-bit) flush at the end of every buffer
                            # (docs/design/cython-kernels.md)

cdef inline void _gx_fwd_flush(_GxDefer* p) noexcept nogil:
    cdef float r[_GX_CHUNK]
    cdef int j
    if p.k <= _GX_FLUSH_SCALAR:
        for j in range(p.k):
            p.y[j][0] = <float>_gx_fwd_full32(p.x[j])
        p.k = 0
        return
    for j in range(_GX_CHUNK):
        r[j] = <float>_gx_fwd_full32(p.x[j])
    for j in range(p.k):
        p.y[j][0] = r[j]
    p.k = 0

cdef inline void _gx_grad_flush(_GxDefer* p) noexcept nogil:
    cdef double g[_GX_CHUNK]
    cdef float r[_GX_CHUNK]
    cdef int j
    if p.k <= _GX_FLUSH_SCALAR:
        for j in range(p.k):
            p.y[j][0] = <float>(<double>p.d[j] * _gx_grad_full32(p.x[j]))
        p.k = 0
        return
    for j in range(_GX_CHUNK):
        g[j] = _gx_grad_full32(p.x[j])
    for j in range(_GX_CHUNK):
        r[j] = <float>(<double>p.d[j] * g[j])
    for j in range(p.k):
        p.y[j][0] = r[j]
    p.k = 0
