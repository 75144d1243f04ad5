# Fused bias: gelu(x + b) and its gradient in one pass, b along the last axis of C-contiguous arrays, with x + b
# rounded to the storage type first, so the bits are those of gelu(x + b). One thread's piece, its call through
# the driver, and the Python entry fastgelu._api calls (_bias_call).

cdef inline void bias_piece(char* px, char* pb, char* pd, char* py, npy_intp start, npy_intp count,
                            npy_intp width, npy_intp sd, stored* r, variant* v, bint grad) noexcept nogil:
    """Elements [start, start + count) of C-contiguous (rows, width) arrays; bias index = column.
    dy has stride sd: the element size, or 0 for one dy for all."""
    cdef npy_intp i = start, end = start + count, col, m, k, sz = sizeof(stored)
    cdef float fb[CHUNK]
    cdef float fc[CHUNK]
    cdef float fd[CHUNK]
    cdef double db[CHUNK]
    cdef double dc[CHUNK]
    cdef double dd[CHUNK]
    while i < end:
        col = i % width
        m = width - col
        if end - i < m:
            m = end - i
        if m > CHUNK:
            m = CHUNK
        if stored is float:
            # x + b straight from both arrays, and the block writes y itself: a pass less for each of x, b
            # and y (out is x, dy or apart from them: _api._fused_bias_ok)
            for k in range(m):
                fb[k] = (<const float*>(px + i * sz))[k] + (<const float*>(pb + col * sz))[k]
            if grad:
                if sd:
                    grad_block(fb, <const float*>(pd + i * sd), <float*>(py + i * sz), m, v)
                else:
                    load(pd, 0, m, r, fd, dd)
                    grad_block(fb, fd, <float*>(py + i * sz), m, v)
            else:
                fwd_block(fb, <float*>(py + i * sz), m, v)
            i += m
            continue
        load(px + i * sz, sz, m, r, fb, db)
        load(pb + col * sz, sz, m, r, fc, dc)
        if stored is double:
            for k in range(m):
                db[k] = db[k] + dc[k]
        else:
            for k in range(m):
                fb[k] = round_to(fb[k] + fc[k], r)
        if grad:
            load(pd + i * sd, sd, m, r, fd, dd)
            if stored is double:
                grad_block(db, dd, db, m, v)
            else:
                grad_block(fb, fd, fb, m, v)
        elif stored is double:
            fwd_block(db, db, m, v)
        else:
            fwd16_lookup_floats(fb, m, r, v)      # the same table as gelu(x + b) without bias
        store(py + i * sz, sz, m, r, fb, db)
        i += m


cdef inline void bias_run(char* px, char* pb, char* pd, char* py, npy_intp n, npy_intp width,
                          npy_intp sd, stored* r, variant* v, bint grad) noexcept nogil:
    cdef char* args[4]
    cdef npy_intp steps[3]
    args[0], args[1], args[2], args[3] = px, pb, pd, py
    steps[0], steps[1], steps[2] = 0, 0, sd
    if grad:        # op a constant in each call of run (_driver.pxi), as in the ufunc loops
        run(RUN_BIAS_GRAD, args, steps, n, width, r, v)
    else:
        run(RUN_BIAS, args, steps, n, width, r, v)


cdef inline void bias_typed(char* px, char* pb, char* pd, char* py, npy_intp n, npy_intp width,
                            bint dy_scalar, int code, variant* v, bint grad) noexcept nogil:
    if code == DT_FLOAT16:
        bias_run(px, pb, pd, py, n, width, 0 if dy_scalar else 2, <Half*>0, v, grad)
    elif code == DT_FLOAT32:
        bias_run(px, pb, pd, py, n, width, 0 if dy_scalar else 4, <float*>0, v, grad)
    elif code == DT_FLOAT64:
        bias_run(px, pb, pd, py, n, width, 0 if dy_scalar else 8, <double*>0, v, grad)
    else:
        bias_run(px, pb, pd, py, n, width, 0 if dy_scalar else 2, <BFloat*>0, v, grad)


def _bias_call(int vcode, bint grad, int dtype_code, cnp.ndarray x, cnp.ndarray b, dy,
               cnp.ndarray out):
    """gelu(x + b) (or its gradient times dy) for C-contiguous arrays of one dtype that the caller has
    checked: b 1-D of length x.shape[-1], dy (gradient only) shaped like x or 0-d, out shaped like x.
    vcode: V_* (the index in VARIANTS); dtype_code: DTYPE_CODES's."""
    cdef char* px = <char*>cnp.PyArray_DATA(x)
    cdef char* pb = <char*>cnp.PyArray_DATA(b)
    cdef char* pd = <char*>cnp.PyArray_DATA(dy) if grad else NULL
    cdef char* py = <char*>cnp.PyArray_DATA(out)
    cdef npy_intp n = cnp.PyArray_SIZE(x), width = cnp.PyArray_DIM(b, 0)
    cdef bint dy_scalar = grad and cnp.PyArray_NDIM(dy) == 0
    if n == 0:
        return out
    with nogil:
        bias_by_code(px, pb, pd, py, n, width, dy_scalar, dtype_code, vcode, grad)
    return out
