# Where an input shares memory with an output. NumPy copies overlapping operands of a __call__, but lets
# through the overlaps a forward pass in order handles, and reduce/accumulate of the gradient ufuncs chain
# outputs into inputs: such a piece runs element by element, and such a call on one thread.


cdef inline bint depends_on_output(char* pin, npy_intp sin, char* pout, npy_intp sout, npy_intp n) noexcept nogil:
    """Does an input element live where a different element's output goes? Never for __call__ (NumPy
    copies overlapping operands), but reduce and accumulate of the gradient ufuncs chain outputs."""
    if n <= 1:
        return False
    if sout == 0:   # every element writes the same place (reduce): only in order is that meaningful
        return True
    if pin == pout and sin == sout:
        return False
    cdef char* in_lo = pin if sin >= 0 else pin + (n - 1) * sin
    cdef char* in_hi = pin + (n - 1) * sin if sin >= 0 else pin
    cdef char* out_lo = pout if sout >= 0 else pout + (n - 1) * sout
    cdef char* out_hi = pout + (n - 1) * sout if sout >= 0 else pout
    return in_lo <= out_hi + 8 and out_lo <= in_hi + 8


cdef inline bint overlaps(char* pin, npy_intp sin, char* pout, npy_intp sout, npy_intp n) noexcept nogil:
    """An input that is not the output itself but shares memory with it. NumPy lets through only overlaps
    a forward pass handles (output behind the input), which one thread does; split between threads, a
    later piece could overwrite what an earlier one has yet to read."""
    return (pin != pout or sin != sout) and depends_on_output(pin, sin, pout, sout, n)


cdef inline bint any_overlaps(char** args, const npy_intp* steps, int nin, int nargs, npy_intp n) noexcept nogil:
    """Does one of the nin inputs overlap one of the outputs args[nin:nargs]?"""
    cdef int i, j
    for i in range(nin):
        for j in range(nin, nargs):
            if overlaps(args[i], steps[i], args[j], steps[j], n):
                return True
    return False
