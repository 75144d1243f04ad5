# The one parallel region of the kernels: a call of any kind (forward, gradient, gated, bias) cut into one
# contiguous piece per thread, on the threads the policy (_threads_policy.pxi) gives it, each piece in
# fastgelu's FP environment; then the call's report to the policy. Small calls stay on the calling thread.

from cython.parallel cimport prange


cdef inline npy_intp piece_len(npy_intp n, int nt) noexcept nogil:
    # whole 64-element groups per thread so that pieces of contiguous data start on cache-line boundaries
    return (((n + nt - 1) // nt) + 63) & ~(<npy_intp>63)


cdef enum:
    RUN_FWD = 0         # args x, y
    RUN_GRAD = 1        # args x, dy, y
    RUN_GM_FWD = 2      # args gate, up, y
    RUN_GM_GRAD = 3     # args gate, up, dy, d_gate, d_up
    RUN_BIAS = 4        # args x, bias, dy (unused), y; C-contiguous, bias along rows of `width`
    RUN_BIAS_GRAD = 5   # args x, bias, dy, y; steps[2]: dy's (its element size, or 0 for one dy for all)


cdef inline void piece_at(int op, char** args, const npy_intp* steps, npy_intp start, npy_intp count,
                          npy_intp width, stored* r, variant* v) noexcept nogil:
    """Elements [start, start + count) of a call: one thread's share, in fastgelu's FP environment."""
    cdef char* p[5]
    cdef int j
    cdef fg_fpstate env
    fg_fp_enter(&env)
    if op == RUN_FWD:
        fwd_piece(args[0] + start * steps[0], args[1] + start * steps[1], steps[0], steps[1], count, r, v)
    elif op == RUN_GRAD:
        grad_piece(args[0] + start * steps[0], args[1] + start * steps[1], args[2] + start * steps[2],
                   steps[0], steps[1], steps[2], count, r, v)
    elif op == RUN_GM_FWD:
        gm_fwd_piece(args[0] + start * steps[0], args[1] + start * steps[1], args[2] + start * steps[2],
                     steps[0], steps[1], steps[2], count, r, v)
    elif op == RUN_GM_GRAD:
        for j in range(5):
            p[j] = args[j] + start * steps[j]
        gm_grad_piece(p, steps, count, r, v)
    else:
        bias_piece(args[0], args[1], args[2], args[3], start, count, width, steps[2], r, v, op == RUN_BIAS_GRAD)
    fg_fp_leave(&env)


cdef inline bint run_overlaps(int op, char** args, const npy_intp* steps, npy_intp n) noexcept nogil:
    """An input sharing memory with an output other than by being it: such a call runs on one thread."""
    if op == RUN_FWD:
        return any_overlaps(args, steps, 1, 2, n)
    if op == RUN_GRAD:
        return any_overlaps(args, steps, 2, 3, n)
    if op == RUN_GM_FWD:
        return any_overlaps(args, steps, 2, 3, n)
    if op == RUN_GM_GRAD:
        return any_overlaps(args, steps, 3, 5, n)
    return False        # the bias path: its caller (_api._fused_bias_ok) passes an out that is x, dy or apart


cdef inline void run(int op, char** args, const npy_intp* steps, npy_intp n, npy_intp width,
                     stored* r, variant* v) noexcept nogil:
    """A whole call: on the threads the policy gives it (threads_for), one piece each, then its report to the
    policy (team_report).  The kernels' only parallel region."""
    cdef npy_intp per, start, k
    cdef fg_team team
    cdef int nt = threads_for(n, &team)
    if nt > 1 and run_overlaps(op, args, steps, n):
        nt = 1
    if nt == 1:
        piece_at(op, args, steps, 0, n, width, r, v)
        return
    per = piece_len(n, nt)
    fg_team_begin(&team, nt)
    for k in prange(nt, num_threads=nt, schedule='static'):
        fg_team_start(&team, k)
        start = k * per
        if start < n:
            piece_at(op, args, steps, start, per if n - start > per else n - start, width, r, v)
            fg_team_done(&team, k)
    team_report(&team)


cdef inline void fwd_loop(char** args, const npy_intp* dims, const npy_intp* steps,
                          stored* r, variant* v) noexcept nogil:
    run(RUN_FWD, args, steps, dims[0], 0, r, v)


cdef inline void grad_loop(char** args, const npy_intp* dims, const npy_intp* steps,
                           stored* r, variant* v) noexcept nogil:
    run(RUN_GRAD, args, steps, dims[0], 0, r, v)


cdef inline void gm_fwd_loop(char** args, const npy_intp* dims, const npy_intp* steps,
                             stored* r, variant* v) noexcept nogil:
    run(RUN_GM_FWD, args, steps, dims[0], 0, r, v)


cdef inline void gm_grad_loop(char** args, const npy_intp* dims, const npy_intp* steps,
                              stored* r, variant* v) noexcept nogil:
    run(RUN_GM_GRAD, args, steps, dims[0], 0, r, v)
