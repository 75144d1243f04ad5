# Storage types: how each dtype is loaded into the float32/float64 buffers the block functions compute on, and
# stored back (the dtypes' list and codes: _lists.py, as DT_* and DTYPE_CODES in _lists.pxi).


# float16 and bfloat16 are stored as 16 bits and computed in float32, rounded once to nearest-even on the way
# out. Written with integer operations so that gcc vectorizes them on every ISA level (a _Float16 cast is a
# libgcc call without AVX-512-FP16).
cdef struct Half:       # NumPy float16 (IEEE binary16)
    unsigned short bits
cdef struct BFloat:     # ml_dtypes.bfloat16
    unsigned short bits

ctypedef fused stored:
    float
    double
    Half
    BFloat


# Strided, broadcast and 16-bit data are gathered into a stack buffer of this many elements, computed by the
# same block function as contiguous data (so every path gives the same bits), and scattered back.
cdef enum:
    CHUNK = 2048    # not less: the exact double path's deferred lanes are flushed at the end of every buffer
                    # (_gelu_exact_queue32.pxi; docs/design/cython-kernels.md); 72 KiB of stack at most


cdef inline void load(const char* p, npy_intp s, npy_intp m, stored* r, float* fb, double* db) noexcept nogil:
    cdef npy_intp i
    if stored is double:
        for i in range(m):
            db[i] = (<const double*>(p + i * s))[0]
    elif stored is float:
        for i in range(m):
            fb[i] = (<const float*>(p + i * s))[0]
    elif s == sizeof(stored):  # contiguous 16-bit: typed indexing so the conversion vectorizes
        if stored is Half:
            fg_halves_to_floats(<const unsigned short*>p, fb, m)
        else:
            for i in range(m):
                fb[i] = fg_bf16_to_float((<const BFloat*>p)[i].bits)
    else:
        for i in range(m):
            fb[i] = fg_half_to_float((<const Half*>(p + i * s)).bits) if stored is Half else \
                fg_bf16_to_float((<const BFloat*>(p + i * s)).bits)


cdef inline void store(char* p, npy_intp s, npy_intp m, stored* r, const float* fb,
                       const double* db) noexcept nogil:
    cdef npy_intp i
    if stored is double:
        for i in range(m):
            (<double*>(p + i * s))[0] = db[i]
    elif stored is float:
        for i in range(m):
            (<float*>(p + i * s))[0] = fb[i]
    elif s == sizeof(stored):
        if stored is Half:
            fg_floats_to_halves(fb, <unsigned short*>p, m)
        else:
            for i in range(m):
                (<BFloat*>p)[i].bits = fg_float_to_bf16(fb[i])
    else:
        for i in range(m):
            if stored is Half:
                (<Half*>(p + i * s)).bits = fg_float_to_half(fb[i])
            else:
                (<BFloat*>(p + i * s)).bits = fg_float_to_bf16(fb[i])


# ---- 16-bit forward: a table of all 65,536 results ----------------------------------------------------------
#
# A float16/bfloat16 forward result depends on 16 bits of input, so each build fills one table per (variant,
# type) at import (_fill_fwd16_tables in _ufuncs.pxi: the float64 kernel, rounded once to 16 bits, so every
# entry is the correctly rounded result; through float32 a few inputs near a rounding boundary were not);
# a call is then one lookup per element.
# Contiguous runs look up 8 elements into registers before storing any: with loads and stores interleaved
# the compiler must assume a store may change the table or the input, and the lookups serialize. No vector
# gather: gathers are slow on CPUs with Intel's Downfall (GDS) microcode fix (docs/design/cython-kernels.md).

cdef unsigned short _fwd16_table[V_COUNT][2][65536]    # [variant][0 float16, 1 bfloat16][input bits]

cdef inline unsigned short* fwd16_table(stored* r, variant* v) noexcept nogil:
    return _fwd16_table[variant_code(v)][0 if stored is Half else 1]


cdef inline void fwd16_lookup_floats(float* fb, npy_intp m, stored* r, variant* v) noexcept nogil:
    # 16-bit values held as floats (exactly) -> their table results, as floats
    cdef const unsigned short* tab = fwd16_table(r, v)
    cdef npy_intp k
    for k in range(m):
        if stored is Half:
            fb[k] = fg_half_to_float(tab[fg_float_to_half(fb[k])])
        else:
            fb[k] = fg_bf16_to_float(tab[fg_float_to_bf16(fb[k])])

cdef inline float round_to(float f, stored* r) noexcept nogil:
    # x + b is rounded to the storage type first, exactly as NumPy's own x + b would be
    if stored is Half:
        return fg_half_to_float(fg_float_to_half(f))
    elif stored is BFloat:
        return fg_bf16_to_float(fg_float_to_bf16(f))
    return f
