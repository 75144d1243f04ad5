# The ufunc objects. NumPy needs one C function per (ufunc, dtype) with its exact loop signature; each is
# a one-line entry into the fused loop, which fixes variant and dtype at compile time.

from numpy cimport PyUFuncGenericFunction, NPY_FLOAT, NPY_DOUBLE

cdef extern from "numpy/ufuncobject.h":
    object PyUFunc_FromFuncAndData(PyUFuncGenericFunction*, void**, char*, int, int, int, int,
                                   const char*, const char*, int)
    int PyUFunc_None

ctypedef npy_intp* ip

cdef void _gelu_f(char** a, ip d, ip s, void* _) noexcept nogil: fwd_loop(a, d, s, <float*>0, <VNone*>0)
cdef void _gelu_d(char** a, ip d, ip s, void* _) noexcept nogil: fwd_loop(a, d, s, <double*>0, <VNone*>0)
cdef void _tanh_f(char** a, ip d, ip s, void* _) noexcept nogil: fwd_loop(a, d, s, <float*>0, <VTanh*>0)
cdef void _tanh_d(char** a, ip d, ip s, void* _) noexcept nogil: fwd_loop(a, d, s, <double*>0, <VTanh*>0)
cdef void _sigm_f(char** a, ip d, ip s, void* _) noexcept nogil: fwd_loop(a, d, s, <float*>0, <VSigmoid*>0)
cdef void _sigm_d(char** a, ip d, ip s, void* _) noexcept nogil: fwd_loop(a, d, s, <double*>0, <VSigmoid*>0)
cdef void _ggelu_f(char** a, ip d, ip s, void* _) noexcept nogil: grad_loop(a, d, s, <float*>0, <VNone*>0)
cdef void _ggelu_d(char** a, ip d, ip s, void* _) noexcept nogil: grad_loop(a, d, s, <double*>0, <VNone*>0)
cdef void _gtanh_f(char** a, ip d, ip s, void* _) noexcept nogil: grad_loop(a, d, s, <float*>0, <VTanh*>0)
cdef void _gtanh_d(char** a, ip d, ip s, void* _) noexcept nogil: grad_loop(a, d, s, <double*>0, <VTanh*>0)
cdef void _gsigm_f(char** a, ip d, ip s, void* _) noexcept nogil: grad_loop(a, d, s, <float*>0, <VSigmoid*>0)
cdef void _gsigm_d(char** a, ip d, ip s, void* _) noexcept nogil: grad_loop(a, d, s, <double*>0, <VSigmoid*>0)

# NumPy keeps these pointers (it copies neither the loop tables nor the type codes): module-level storage.
cdef PyUFuncGenericFunction _funcs[6][2]
_funcs[0][:] = [<PyUFuncGenericFunction>_gelu_f, <PyUFuncGenericFunction>_gelu_d]
_funcs[1][:] = [<PyUFuncGenericFunction>_tanh_f, <PyUFuncGenericFunction>_tanh_d]
_funcs[2][:] = [<PyUFuncGenericFunction>_sigm_f, <PyUFuncGenericFunction>_sigm_d]
_funcs[3][:] = [<PyUFuncGenericFunction>_ggelu_f, <PyUFuncGenericFunction>_ggelu_d]
_funcs[4][:] = [<PyUFuncGenericFunction>_gtanh_f, <PyUFuncGenericFunction>_gtanh_d]
_funcs[5][:] = [<PyUFuncGenericFunction>_gsigm_f, <PyUFuncGenericFunction>_gsigm_d]
cdef void* _data[2]
_data[:] = [NULL, NULL]
cdef char _types_fwd[4]
_types_fwd[:] = [NPY_FLOAT, NPY_FLOAT, NPY_DOUBLE, NPY_DOUBLE]
cdef char _types_grad[6]
_types_grad[:] = [NPY_FLOAT, NPY_FLOAT, NPY_FLOAT, NPY_DOUBLE, NPY_DOUBLE, NPY_DOUBLE]

# Names and docstrings must outlive the ufuncs too; NumPy stores the char pointers.
_NAMES = (b"gelu", b"gelu_tanh", b"gelu_sigmoid", b"gelu_grad", b"gelu_tanh_grad", b"gelu_sigmoid_grad")
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
            _funcs[i], _data, types, 2, nin, 1, PyUFunc_None,
            <const char*>_NAMES[i], <const char*>_DOCS[i], 0)
    return made


UFUNCS = _make_ufuncs()
