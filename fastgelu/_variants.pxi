# The variants of GELU, listed once. A variant reaches the kernels three ways, all from this file:
#   - in Python, by its name: VARIANTS[code] (approximate= of the API; fastgelu._api builds on this tuple);
#   - as an int code, V_NONE/V_TANH/V_SIGMOID (a C enum: the index of tables per variant, _bias_call's argument);
#   - at compile time, by a tag type: VNone, VTanh, VSigmoid, empty structs whose NULL pointers select a
#     specialization of a fused function (`variant` here, `xsig` for the tanh/sigmoid family), so each
#     (variant, dtype) pair is its own code with the math inlined, while every loop is written once.

cdef enum:
    V_NONE = 0
    V_TANH = 1
    V_SIGMOID = 2
    V_COUNT = 3

VARIANTS = ("none", "tanh", "sigmoid")       # by V_* code


def ufunc_name(str variant, str suffix=""):
    """The ufunc of `variant`: gelu, gelu_tanh, gelu_sigmoid, then suffix (_grad, _mul, _mul_grad)."""
    return ("gelu" if variant == "none" else "gelu_" + variant) + suffix


cdef struct VNone:
    char _unused
cdef struct VTanh:
    char _unused
cdef struct VSigmoid:
    char _unused

ctypedef fused variant:
    VNone
    VTanh
    VSigmoid


cdef inline int variant_code(variant* v) noexcept nogil:
    if variant is VNone:
        return V_NONE
    elif variant is VTanh:
        return V_TANH
    return V_SIGMOID
