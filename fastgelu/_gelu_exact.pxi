# PLACEHOLDER written by the lead (libm, not the final accuracy/speed); the exact-GELU helper replaces this file.
from libc.math cimport erfc, exp

cdef inline real gelu_none(real x) noexcept nogil:
    cdef double d = x
    return <real>(d * 0.5 * erfc(-d * 0.7071067811865476))

cdef inline real gelu_none_grad(real x, real dy) noexcept nogil:
    cdef double d = x
    return <real>(dy * (0.5 * erfc(-d * 0.7071067811865476) + d * 0.3989422804014327 * exp(-0.5 * d * d)))

cdef inline void gelu_none_block(const real* x, real* y, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        y[i] = gelu_none(x[i])

cdef inline void gelu_none_grad_block(const real* x, const real* dy, real* y, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        y[i] = gelu_none_grad(x[i], dy[i])
