# PLACEHOLDER written by the lead (libm, not the final accuracy/speed); the tanh/sigmoid helper replaces this file.
from libc.math cimport exp as _exp

cdef inline double _sig(double w) noexcept nogil:
    return 1.0 / (1.0 + _exp(-w))

cdef inline real gelu_tanh(real x) noexcept nogil:
    cdef double d = x
    return <real>(d * _sig(2.0 * 0.7978845608028654 * (d + 0.044715 * d * d * d)))

cdef inline real gelu_tanh_grad(real x, real dy) noexcept nogil:
    cdef double d = x
    cdef double s = _sig(2.0 * 0.7978845608028654 * (d + 0.044715 * d * d * d))
    return <real>(dy * (s + d * 2.0 * 0.7978845608028654 * (1 + 3 * 0.044715 * d * d) * s * (1 - s)))

cdef inline real gelu_sigmoid(real x) noexcept nogil:
    cdef double d = x
    return <real>(d * _sig(1.702 * d))

cdef inline real gelu_sigmoid_grad(real x, real dy) noexcept nogil:
    cdef double d = x
    cdef double s = _sig(1.702 * d)
    return <real>(dy * (s + d * 1.702 * s * (1 - s)))

cdef inline void gelu_tanh_block(const real* x, real* y, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        y[i] = gelu_tanh(x[i])

cdef inline void gelu_tanh_grad_block(const real* x, const real* dy, real* y, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        y[i] = gelu_tanh_grad(x[i], dy[i])

cdef inline void gelu_sigmoid_block(const real* x, real* y, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        y[i] = gelu_sigmoid(x[i])

cdef inline void gelu_sigmoid_grad_block(const real* x, const real* dy, real* y, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        y[i] = gelu_sigmoid_grad(x[i], dy[i])
