# The ufunc objects. NumPy wants one C function per (ufunc, dtype) with its loop signature. Each entry below
# fixes the storage type; the variant comes in through the loop's `data` pointer type (a tag of _variants.pxi), so `fwd_f[VTanh]` is
# the float32 tanh loop. (NumPy passes data as void*; the tag pointers are never dereferenced.)

from numpy cimport PyUFuncGenericFunction, NPY_FLOAT, NPY_DOUBLE, NPY_FLOAT16 as NPY_HALF

cdef extern from "numpy/ufuncobject.h":
    object PyUFunc_FromFuncAndData(PyUFuncGenericFunction*, void**, char*, int, int, int, int,
                                   const char*, const char*, int)
    int PyUFunc_RegisterLoopForType(cnp.ufunc, int, PyUFuncGenericFunction, const int*, void*) except -1
    int PyUFunc_None

ctypedef npy_intp* ip
ctypedef PyUFuncGenericFunction G

cdef void fwd_e(char** a, ip d, ip s, variant* v) noexcept nogil: fwd_loop(a, d, s, <Half*>0, v)
cdef void fwd_f(char** a, ip d, ip s, variant* v) noexcept nogil: fwd_loop(a, d, s, <float*>0, v)
cdef void fwd_d(char** a, ip d, ip s, variant* v) noexcept nogil: fwd_loop(a, d, s, <double*>0, v)
cdef void fwd_b(char** a, ip d, ip s, variant* v) noexcept nogil: fwd_loop(a, d, s, <BFloat*>0, v)
cdef void grad_e(char** a, ip d, ip s, variant* v) noexcept nogil: grad_loop(a, d, s, <Half*>0, v)
cdef void grad_f(char** a, ip d, ip s, variant* v) noexcept nogil: grad_loop(a, d, s, <float*>0, v)
cdef void grad_d(char** a, ip d, ip s, variant* v) noexcept nogil: grad_loop(a, d, s, <double*>0, v)
cdef void grad_b(char** a, ip d, ip s, variant* v) noexcept nogil: grad_loop(a, d, s, <BFloat*>0, v)

# NumPy keeps these pointers (it copies neither the loop tables nor the type codes): module-level storage.
cdef G _funcs[6][3]
_funcs[0][:] = [<G>fwd_e[VNone], <G>fwd_f[VNone], <G>fwd_d[VNone]]
_funcs[1][:] = [<G>fwd_e[VTanh], <G>fwd_f[VTanh], <G>fwd_d[VTanh]]
_funcs[2][:] = [<G>fwd_e[VSigmoid], <G>fwd_f[VSigmoid], <G>fwd_d[VSigmoid]]
_funcs[3][:] = [<G>grad_e[VNone], <G>grad_f[VNone], <G>grad_d[VNone]]
_funcs[4][:] = [<G>grad_e[VTanh], <G>grad_f[VTanh], <G>grad_d[VTanh]]
_funcs[5][:] = [<G>grad_e[VSigmoid], <G>grad_f[VSigmoid], <G>grad_d[VSigmoid]]
cdef G _bf16_funcs[6]
_bf16_funcs[:] = [<G>fwd_b[VNone], <G>fwd_b[VTanh], <G>fwd_b[VSigmoid],
                  <G>grad_b[VNone], <G>grad_b[VTanh], <G>grad_b[VSigmoid]]
cdef void* _data[3]
_data[:] = [NULL, NULL, NULL]
cdef char _types_fwd[6]
_types_fwd[:] = [NPY_HALF, NPY_HALF, NPY_FLOAT, NPY_FLOAT, NPY_DOUBLE, NPY_DOUBLE]
cdef char _types_grad[9]
_types_grad[:] = [NPY_HALF, NPY_HALF, NPY_HALF, NPY_FLOAT, NPY_FLOAT, NPY_FLOAT, NPY_DOUBLE, NPY_DOUBLE,
                  NPY_DOUBLE]

# Names and docstrings must outlive the ufuncs too; NumPy stores the char pointers.
_NAMES = tuple(ufunc_name(v, k).encode() for k in ("", "_grad") for v in VARIANTS)   # rows of _funcs
_DOCS = (
    b"gelu(x, /, out=None, *, where=True, ...)\n\nExact GELU, x*Phi(x), Phi the standard normal CDF.",
    b"gelu_tanh(x, /, out=None, *, where=True, ...)\n\n"
    b"Tanh approximation 0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715*x**3))).",
    b"gelu_sigmoid(x, /, out=None, *, where=True, ...)\n\nSigmoid approximation x*sigmoid(1.702*x).",
    b"gelu_grad(x, dy, /, out=None, *, where=True, ...)\n\ndy * (Phi(x) + x*phi(x)), the gradient of gelu.",
    b"gelu_tanh_grad(x, dy, /, out=None, *, where=True, ...)\n\ndy times the derivative of gelu_tanh.",
    b"gelu_sigmoid_grad(x, dy, /, out=None, *, where=True, ...)\n\ndy times the derivative of gelu_sigmoid.",
)


def _make_ufuncs():
    cdef int i, nin
    cdef char* types
    made = {}
    for i in range(6):
        nin = 1 if i < 3 else 2
        types = &_types_fwd[0] if nin == 1 else &_types_grad[0]
        made[_NAMES[i].decode()] = PyUFunc_FromFuncAndData(
            _funcs[i], _data, types, 3, nin, 1, PyUFunc_None,
            <const char*>_NAMES[i], <const char*>_DOCS[i], 0)
    return made


UFUNCS = _make_ufuncs()


def _double_to_bf16_bits(y):
    """float64 -> bfloat16 bits, rounded once to nearest-even: first to float32 rounding to odd (truncate,
    then set the last bit if anything was dropped), which the second rounding cannot turn into a double
    rounding error; NaN stays NaN."""
    import numpy as np
    with np.errstate(all="ignore"):
        f = y.astype(np.float32)
        over = np.abs(f.astype(np.float64)) > np.abs(y)             # rounded away from zero: step back
        f = np.where(over & np.isfinite(y), np.nextafter(f, np.float32(0)), f)
        u = f.view(np.uint32).copy()
        inexact = (f.astype(np.float64) != y) & np.isfinite(y)
        u[inexact] |= 1
        nan = np.isnan(y)
        r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
        r[nan] = ((u[nan] >> 16) | 0x40).astype(np.uint16)
    return r


def _fill_fwd16_tables():
    """The 16-bit forward tables (_storage.pxi): every input through the float64 kernel, rounded once."""
    import numpy as np
    cdef int vi, i
    cdef unsigned short[::1] col
    bits = np.arange(1 << 16, dtype=np.uint32)
    with np.errstate(all="ignore"):  # signalling NaN patterns raise "invalid" when widened
        x_half = bits.astype(np.uint16).view(np.float16).astype(np.float64)
        x_bf16 = (bits << 16).view(np.float32).astype(np.float64)
    for vi, v in enumerate(VARIANTS):
        name = ufunc_name(v)
        with np.errstate(all="ignore"):
            tabs = (UFUNCS[name](x_half).astype(np.float16).view(np.uint16),
                    _double_to_bf16_bits(UFUNCS[name](x_bf16)))
        for k in range(2):
            col = np.ascontiguousarray(tabs[k])
            for i in range(1 << 16):
                _fwd16_table[vi][k][i] = col[i]


_fill_fwd16_tables()


def _register_bfloat16(int typenum):
    """Add bfloat16 loops (ml_dtypes' type number) to the twelve ufuncs."""
    cdef int types[3]
    cdef int i
    types[:] = [typenum, typenum, typenum]
    for i, name in enumerate(_NAMES):
        PyUFunc_RegisterLoopForType(UFUNCS[name.decode()], typenum, _bf16_funcs[i], types, NULL)
    _register_bfloat16_gated(typenum)


# ---- gated ufuncs: gelu_mul (gate, up) and gelu_mul_grad (gate, up, dy) -> (dgate, dup) --------------------

cdef void gm_fwd_e(char** a, ip d, ip s, variant* v) noexcept nogil: gm_fwd_loop(a, d, s, <Half*>0, v)
cdef void gm_fwd_f(char** a, ip d, ip s, variant* v) noexcept nogil: gm_fwd_loop(a, d, s, <float*>0, v)
cdef void gm_fwd_d(char** a, ip d, ip s, variant* v) noexcept nogil: gm_fwd_loop(a, d, s, <double*>0, v)
cdef void gm_fwd_b(char** a, ip d, ip s, variant* v) noexcept nogil: gm_fwd_loop(a, d, s, <BFloat*>0, v)
cdef void gm_grad_e(char** a, ip d, ip s, variant* v) noexcept nogil: gm_grad_loop(a, d, s, <Half*>0, v)
cdef void gm_grad_f(char** a, ip d, ip s, variant* v) noexcept nogil: gm_grad_loop(a, d, s, <float*>0, v)
cdef void gm_grad_d(char** a, ip d, ip s, variant* v) noexcept nogil: gm_grad_loop(a, d, s, <double*>0, v)
cdef void gm_grad_b(char** a, ip d, ip s, variant* v) noexcept nogil: gm_grad_loop(a, d, s, <BFloat*>0, v)

cdef G _gm_funcs[6][3]
_gm_funcs[0][:] = [<G>gm_fwd_e[VNone], <G>gm_fwd_f[VNone], <G>gm_fwd_d[VNone]]
_gm_funcs[1][:] = [<G>gm_fwd_e[VTanh], <G>gm_fwd_f[VTanh], <G>gm_fwd_d[VTanh]]
_gm_funcs[2][:] = [<G>gm_fwd_e[VSigmoid], <G>gm_fwd_f[VSigmoid], <G>gm_fwd_d[VSigmoid]]
_gm_funcs[3][:] = [<G>gm_grad_e[VNone], <G>gm_grad_f[VNone], <G>gm_grad_d[VNone]]
_gm_funcs[4][:] = [<G>gm_grad_e[VTanh], <G>gm_grad_f[VTanh], <G>gm_grad_d[VTanh]]
_gm_funcs[5][:] = [<G>gm_grad_e[VSigmoid], <G>gm_grad_f[VSigmoid], <G>gm_grad_d[VSigmoid]]
cdef G _gm_bf16_funcs[6]
_gm_bf16_funcs[:] = [<G>gm_fwd_b[VNone], <G>gm_fwd_b[VTanh], <G>gm_fwd_b[VSigmoid],
                     <G>gm_grad_b[VNone], <G>gm_grad_b[VTanh], <G>gm_grad_b[VSigmoid]]
cdef char _gm_types_fwd[9]
_gm_types_fwd[:] = [NPY_HALF] * 3 + [NPY_FLOAT] * 3 + [NPY_DOUBLE] * 3
cdef char _gm_types_grad[15]
_gm_types_grad[:] = [NPY_HALF] * 5 + [NPY_FLOAT] * 5 + [NPY_DOUBLE] * 5

_GM_NAMES = tuple(ufunc_name(v, k).encode() for k in ("_mul", "_mul_grad") for v in VARIANTS)
_GM_DOCS = (
    b"gelu_mul(gate, up, /, out=None, *, where=True, ...)\n\nGated GELU: gelu(gate)*up, exact GELU.",
    b"gelu_tanh_mul(gate, up, /, out=None, *, where=True, ...)\n\nGated GELU: gelu_tanh(gate)*up.",
    b"gelu_sigmoid_mul(gate, up, /, out=None, *, where=True, ...)\n\nGated GELU: gelu_sigmoid(gate)*up.",
    b"gelu_mul_grad(gate, up, dy, /, out1, out2, *, where=True, ...)\n\n"
    b"(dy*up*gelu'(gate), dy*gelu(gate)): the gradients of gelu_mul for its two inputs.",
    b"gelu_tanh_mul_grad(gate, up, dy, /, out1, out2, *, where=True, ...)\n\n"
    b"(dy*up*gelu_tanh'(gate), dy*gelu_tanh(gate)).",
    b"gelu_sigmoid_mul_grad(gate, up, dy, /, out1, out2, *, where=True, ...)\n\n"
    b"(dy*up*gelu_sigmoid'(gate), dy*gelu_sigmoid(gate)).",
)


def _make_gated_ufuncs():
    cdef int i
    made = {}
    for i in range(6):
        made[_GM_NAMES[i].decode()] = PyUFunc_FromFuncAndData(
            _gm_funcs[i], _data, &_gm_types_fwd[0] if i < 3 else &_gm_types_grad[0], 3,
            2 if i < 3 else 3, 1 if i < 3 else 2, PyUFunc_None,
            <const char*>_GM_NAMES[i], <const char*>_GM_DOCS[i], 0)
    return made


UFUNCS.update(_make_gated_ufuncs())


def _register_bfloat16_gated(int typenum):
    cdef int types[5]
    cdef int i
    types[:] = [typenum, typenum, typenum, typenum, typenum]
    for i, name in enumerate(_GM_NAMES):
        PyUFunc_RegisterLoopForType(UFUNCS[name.decode()], typenum, _gm_bf16_funcs[i], types, NULL)
