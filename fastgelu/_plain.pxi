# One thread's piece of the plain functions (gelu*, gelu*_grad): contiguous float32/float64 runs go straight to
# the variant's block function (where the vectorized fast paths live); strided and 16-bit runs are gathered
# into a stack buffer (CHUNK, _storage.pxi) and go through the same block function, so every path gives the
# same bits; a 16-bit forward is a table lookup.


cdef inline void fwd_piece(char* px, char* py, npy_intp sx, npy_intp sy, npy_intp n,
                           stored* r, variant* v) noexcept nogil:
    cdef npy_intp c, m
    cdef float fb[CHUNK]
    cdef double db[CHUNK]
    cdef float fo[CHUNK]          # separate output buffers: in place, a block copies its input first
    cdef double dbo[CHUNK]
    cdef const unsigned short* tab
    if (stored is float or stored is double) and sx == sizeof(stored) and sy == sizeof(stored):
        fwd_block(<const stored*>px, <stored*>py, n, v)
        return
    if stored is Half or stored is BFloat:
        tab = fwd16_table(r, v)
        if sx == 2 and sy == 2:
            fg_lookup16(tab, <const unsigned short*>px, <unsigned short*>py, n)
        else:
            for c in range(n):
                (<unsigned short*>(py + c * sy))[0] = tab[(<const unsigned short*>(px + c * sx))[0]]
        return
    c = 0
    while c < n:
        m = n - c if n - c < CHUNK else CHUNK
        load(px + c * sx, sx, m, r, fb, db)
        if stored is double:
            fwd_block(db, dbo, m, v)
        else:
            fwd_block(fb, fo, m, v)
        store(py + c * sy, sy, m, r, fo, dbo)
        c += CHUNK


cdef inline void grad_piece(char* px, char* pd, char* py, npy_intp sx, npy_intp sd, npy_intp sy,
                            npy_intp n, stored* r, variant* v) noexcept nogil:
    cdef npy_intp c, m
    cdef float fb[CHUNK]
    cdef float fd[CHUNK]
    cdef double db[CHUNK]
    cdef double dd[CHUNK]
    cdef float fo[CHUNK]
    cdef double dbo[CHUNK]
    if depends_on_output(px, sx, py, sy, n) or depends_on_output(pd, sd, py, sy, n):
        # reduce/accumulate: an input is an earlier output, so elements must go one at a time, in order
        for c in range(n):
            grad_piece(px + c * sx, pd + c * sd, py + c * sy, 0, 0, 0, 1, r, v)
        return
    if (stored is float or stored is double) and sx == sizeof(stored) and sy == sizeof(stored) \
            and sd == sizeof(stored):
        grad_block(<const stored*>px, <const stored*>pd, <stored*>py, n, v)
        return
    c = 0
    while c < n:
        m = n - c if n - c < CHUNK else CHUNK
        load(px + c * sx, sx, m, r, fb, db)
        load(pd + c * sd, sd, m, r, fd, dd)
        if stored is double:
            grad_block(db, dd, dbo, m, v)
        else:
            grad_block(fb, fd, fo, m, v)
        store(py + c * sy, sy, m, r, fo, dbo)
        c += CHUNK
