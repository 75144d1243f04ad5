# NumPy inner loops and the threading policy.
#
# A loop gets (args, dimensions, steps) from NumPy's iterator. Contiguous runs go to the variant's block
# function (where the vectorized fast paths live); strided and 16-bit runs are gathered into a stack buffer
# (CHUNK) and go through the same block function, so every path gives the same bits. Large calls are cut
# into one contiguous piece per OpenMP thread; small ones stay on the calling thread because waking the
# team costs more than the work (see PARALLEL_MIN).
#
# Variant and dtype are chosen at compile time: `variant` is a fused type over empty tag structs, so each
# (variant, dtype) pair is its own specialization with the math inlined, yet the loop is written once.

from cython.parallel cimport prange

cdef extern from "fg_env.h":
    const int FASTGELU_OPENMP
    int omp_get_max_threads() nogil
    void omp_set_num_threads(int) nogil
    ctypedef struct fg_fpstate:
        pass
    void fg_fp_enter(fg_fpstate*) nogil
    void fg_fp_leave(const fg_fpstate*) nogil

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


cdef inline void fwd_block(const real* x, real* y, npy_intp n, variant* v) noexcept nogil:
    if variant is VNone:
        gelu_none_block(x, y, n)
    elif variant is VTanh:
        gelu_tanh_block(x, y, n)
    else:
        gelu_sigmoid_block(x, y, n)

cdef inline void grad_block(const real* x, const real* dy, real* y, npy_intp n, variant* v) noexcept nogil:
    if variant is VNone:
        gelu_none_grad_block(x, dy, y, n)
    elif variant is VTanh:
        gelu_tanh_grad_block(x, dy, y, n)
    else:
        gelu_sigmoid_grad_block(x, dy, y, n)


# ---- threading policy (the only place that decides how many threads a call uses) -------------------------
#
# How many threads a call may use is the smallest of: OpenMP's limit for the calling thread
# (omp_get_max_threads: OMP_NUM_THREADS, threadpoolctl, the affinity mask), fastgelu.set_num_threads, the
# process's CPU budget (affinity mask and cgroup CPU quota, from fastgelu._threads; not applied when
# OMP_NUM_THREADS is set), and two caps that follow the machine (below). Each is a ceiling: nothing here
# ever raises a team above what the user allowed.
#
# Load cap. A team collapses when the machine has more runnable threads than CPUs: its master waits at the
# closing barrier for a worker the scheduler has not run, while idle OpenMP workers elsewhere spin. The
# kernel counts the runnable threads of the whole machine (the 4th field of /proc/loadavg, R/T), so every
# LOAD_PERIOD_NS a call samples it -- from inside its parallel region, where the team's own threads are all
# runnable, so the others are that count less the team (and less the idle workers of a larger team that
# ran in the last SPIN_NS: they may still spin). With more runnable threads than usable CPUs at
# two samples in a row the call's successors take their proportional share, used * usable / (used +
# others); with CPUs idle at two samples in a row, they take back half of the idle ones per sample up to
# the full team. P processes on C cores settle at about C / P threads each (1 each from P >= C), a quiet
# machine keeps its whole team, and the sample costs one pread of a small proc file every few milliseconds
# (calls capped to one thread sample on the calling thread). Tasks on CPUs outside the affinity mask count
# in proportion to the CPUs the mask holds.
#
# Back-off. Where the count cannot see the contention (a hypervisor's other guests; a worker asleep so long
# that waking it costs more than its piece, as on a VM that halts idle vCPUs), the call's own timing
# does: a worker that started its piece more than half a piece (plus LATE_SLACK_NS) after the call began
# made the team slower than fewer threads. Start times do not depend on the data, so pieces of uneven work
# (wide inputs, sorted inputs, memory-bound pieces) are never late. After two late calls in a row (one
# while calls were late recently) calls use half the threads for BACKOFF_MIN_NS, doubling while it
# persists up to BACKOFF_MAX_NS, then one call tries the whole team again.

# Below this many elements a call runs on the calling thread: waking the OpenMP team costs about as much
# as computing ~4K elements. tools/measure_threshold.py, 2 threads, Zen 5: the team is break-even at 4,096
# elements (1.02-1.14x), 1.16-1.35x faster at 8,192 and 1.5-1.6x at 16,384.
cdef npy_intp PARALLEL_MIN = 8192
cdef int _user_threads = 0        # set_num_threads(); 0 = follow OpenMP (OMP_NUM_THREADS, threadpoolctl)
cdef int _budget_threads = 0      # CPU budget of the process (affinity, cgroup quota); 0 = no cap
cdef bint _forked_child = False   # GNU libgomp's pool does not survive fork(): a child runs serially

cdef extern from "fg_team.h":
    ctypedef struct fg_team:
        long long t0
        int nt
        int want
        int sample
        int runnable
        long long start[256]
        long long end[256]
    long long fg_now_ns() nogil
    int fg_runnable() nogil
    int fg_loadavg_fd_open() nogil
    int fg_load_source(const char*) nogil
    int fg_cpus_usable() nogil
    int fg_cpus_online() nogil
    void fg_team_begin(fg_team*, int) nogil
    void fg_team_start(fg_team*, long long) nogil
    void fg_team_done(fg_team*, long long) nogil

cdef bint _adaptive = True

# load cap
cdef long long LOAD_PERIOD_NS = 4000000      # a sample every 4 ms at most (~3 us each)
cdef long long _next_sample = 0              # fg_now_ns() from which the next call samples
cdef int _load_cap = 0                       # threads the last sample allows; 0 = the whole team
cdef int _cpus_online = 0, _cpus_usable = 0  # test overrides (0: ask the system at each sample)
cdef int _last_runnable = -1, _last_usable = 0, _last_online = 0
cdef long long _samples = 0, _load_capped = 0
cdef bint _overloaded = False                # the last sample saw more runnable threads than CPUs
cdef int _calm = 0                           # samples in a row that found CPUs idle
cdef int _trace[32][4]                       # the last 32 samples: runnable, used, usable, cap (0 = none)
cdef int _pool_nt = 0                        # the largest team of the last SPIN_NS: its idle workers may
cdef long long _pool_until = 0               # still spin (GNU libgomp: ~3 ms here, GOMP_SPINCOUNT)
cdef long long SPIN_NS = 20000000            # 20 ms

# back-off
cdef long long BACKOFF_MIN_NS = 100000000    # 100 ms
cdef long long BACKOFF_MAX_NS = 1000000000   # 1 s: on a still-busy machine, one late call a second
cdef long long LATE_SLACK_NS = 50000         # lateness below 50 us is noise, whatever the piece size
cdef int _backoff_cap = 0                    # threads allowed while backing off; 0 = no cap
cdef long long _backoff_until = 0            # fg_now_ns() when the cap ends
cdef long long _backoff_ns = 0               # length of the last back-off (doubles while late)
cdef long long QUIET_NS = 2000000000         # 2 s without a late call: start again from BACKOFF_MIN_NS
cdef int QUIET_CALLS = 32                    # or this many team calls on time in a row (fast calls on a VM
                                             # meet a lone late one every ~1,500: ~0.3 s at 150 us a call,
                                             # so the 2 s alone kept one back-off feeding the next forever)
cdef int _on_time = 0                        # team calls on time since the last late one
cdef int _strikes = 0                        # late calls in a row
cdef long long _last_late = 0                # fg_now_ns() of the last late call
cdef long long _late_calls = 0, _team_calls = 0
cdef int _judged_nt = 0                      # team size of the last parallel call (see team_report)


cdef inline int threads_wanted(npy_intp n) noexcept nogil:
    """The user's limits for a call of n elements, before the caps that follow the machine."""
    if n < PARALLEL_MIN or _forked_child:
        return 1
    cdef int nt = omp_get_max_threads()
    if _user_threads > 0:
        if _user_threads < nt:
            nt = _user_threads
    elif 0 < _budget_threads < nt:
        nt = _budget_threads
    # every thread gets at least half the threshold, so a call just above it does not pay for a team
    cdef npy_intp cap = n // (PARALLEL_MIN // 2)
    if nt > cap:
        nt = <int>cap
    return nt if nt > 1 else 1


cdef inline int threads_capped(int nt) noexcept nogil:
    if _load_cap > 0 and _load_cap < nt:
        nt = _load_cap
    if _backoff_cap > 0 and _backoff_cap < nt:
        if fg_now_ns() < _backoff_until:
            nt = _backoff_cap
    return nt


cdef inline int threads_allowed(npy_intp n) noexcept nogil:
    """Threads a call of n elements would use now (no side effects)."""
    return threads_capped(threads_wanted(n))


cdef inline bint sample_due() noexcept nogil:
    global _next_sample
    if not _adaptive or fg_loadavg_fd_open() == 0:
        return False
    cdef long long now = fg_now_ns()
    if now < _next_sample:
        return False
    _next_sample = now + LOAD_PERIOD_NS   # racy between calling threads: at worst two samples, not none
    return True


cdef inline int threads_for(npy_intp n, fg_team* team) noexcept nogil:
    """Threads for a call of n elements; sets up `team` for the parallel path (a call that the load cap
    keeps on one thread samples the load here instead, on the calling thread)."""
    cdef int want = threads_wanted(n)
    cdef int nt = threads_capped(want)
    cdef bint sample = want > 1 and sample_due()
    if nt == 1 and sample:
        load_report(fg_runnable(), 1, want)
        sample = False
    team.sample = sample
    team.want = want
    return nt


cdef inline void load_report(int runnable, int used, int want) noexcept nogil:
    """A load sample taken while `used` threads of this call were runnable, for a call that wanted `want`:
    sets the load cap for the calls that follow."""
    global _load_cap, _last_runnable, _last_usable, _last_online, _samples, _load_capped, _overloaded, _calm
    if runnable <= 0 or not _adaptive:
        return
    cdef int usable = _cpus_usable if _cpus_usable > 0 else fg_cpus_usable()
    cdef int online = _cpus_online if _cpus_online > 0 else fg_cpus_online()
    if online <= 0:
        return
    if usable <= 0 or usable > online:
        usable = online
    _samples += 1
    _last_runnable, _last_usable, _last_online = runnable, usable, online
    cdef long long others = runnable - used, cap, spare
    if others < 0:
        others = 0
    if fg_now_ns() < _pool_until and _pool_nt > used:
        others -= _pool_nt - used    # our own idle workers, still spinning since a larger team ran
        if others < 0:
            others = 0
    if usable < online:   # of the tasks on the machine, those on our CPUs, if spread evenly
        others = (others * usable + online - 1) // online
    if used + others > usable:
        # a lone overloaded sample is a passing task (a daemon, another runtime's workers spinning down
        # after its last call): the cap starts at the second in a row
        if not _overloaded and _load_cap == 0:
            _overloaded = True
            cap = want
        else:
            cap = used * usable // (used + others)
            if cap < 1:
                cap = 1
        _overloaded = True
        _calm = 0
    else:
        _overloaded = False
        spare = usable - used - others
        _calm = _calm + 1 if spare > 0 else 0
        if _load_cap == 0:
            cap = want      # not capped: nothing to take back
        elif spare <= 0 or _calm < 2:
            cap = used      # grow only at the second sample in a row with CPUs idle: a lone gap between
        else:               # busy ones (a process of many between two calls) lends no CPU
            cap = used + (spare + 1) // 2
    if cap >= want:
        _load_cap = 0
    else:
        _load_cap = <int>cap
        _load_capped += 1
    cdef int* row = _trace[(_samples - 1) % 32]
    row[0], row[1], row[2], row[3] = runnable, used, usable, _load_cap


cdef inline void team_report(const fg_team* t) noexcept nogil:
    """After a parallel call: its load sample, then the back-off when a worker started far behind."""
    global _backoff_cap, _backoff_until, _backoff_ns, _late_calls, _team_calls, _strikes, _last_late
    global _judged_nt, _on_time, _pool_nt, _pool_until
    cdef long long lag = 0, work = 0, e, s
    cdef int i, pieces = 0
    if t.sample:
        load_report(t.runnable, t.nt, t.want)
    for i in range(t.nt):
        e = t.end[i]
        s = t.start[i]
        if e and s:               # 0: an empty piece (or one past FG_TEAM_MAX)
            pieces += 1
            work += e - s
            if s - t.t0 > lag:
                lag = s - t.t0
    if pieces == 0:
        return
    cdef long long now = fg_now_ns()
    if t.nt >= _pool_nt or now >= _pool_until:
        _pool_nt = t.nt
        _pool_until = now + SPIN_NS
    _team_calls += 1
    if not _adaptive:
        return
    if t.nt != _judged_nt:
        # the first call with a new team size starts its threads (libgomp creates them lazily): its late
        # workers say nothing about the machine (measured: the first call of a process 3-6x a quiet one)
        _judged_nt = t.nt
        return
    # late: a worker started more than half the mean piece after the call began
    if 2 * pieces * lag <= work + 2 * pieces * LATE_SLACK_NS:
        _strikes = 0
        _on_time += 1
        if _backoff_cap > 0 and now >= _backoff_until:
            _backoff_cap = 0      # the whole team ran on time after a back-off
        if _backoff_ns > 0 and (now - _last_late > QUIET_NS or _on_time >= QUIET_CALLS):
            _backoff_ns = 0       # and nothing was late for long: the machine is quiet again
        return
    _late_calls += 1
    _on_time = 0
    _last_late = now
    # on a quiet machine a lone late call is noise (an interrupt, a daemon waking up): two in a row are
    # needed, unless calls were late recently (then one whole-team call that ran on time was luck)
    _strikes += 1
    if _strikes < 2 and _backoff_ns == 0:
        return
    _strikes = 0
    if _backoff_cap > 0 and now < _backoff_until:
        _backoff_cap = _backoff_cap // 2 if _backoff_cap > 1 else 1
    else:
        _backoff_cap = t.nt // 2 if t.nt > 1 else 1
        _backoff_ns = BACKOFF_MIN_NS if _backoff_ns == 0 else min(2 * _backoff_ns, BACKOFF_MAX_NS)
    _backoff_until = now + _backoff_ns


def _set_threads(int n):
    """Thread cap for this kernel module (0 = follow OpenMP); see fastgelu.set_num_threads."""
    global _user_threads
    _user_threads = n
    if n > 0:
        omp_set_num_threads(n)


def _set_budget(int n):
    """The process's CPU budget (0 = none); fastgelu._threads works it out at import."""
    global _budget_threads
    _budget_threads = n if n > 0 else 0


def _parallel_min(n=None):
    """Tuning hook: the element count from which calls use threads (set it when n is given)."""
    global PARALLEL_MIN
    if n is not None:
        PARALLEL_MIN = max(2, int(n))
    return PARALLEL_MIN


def _max_threads():
    """Threads a large call would use now, from the calling thread."""
    return threads_allowed(PARALLEL_MIN * 1024)


def _load_source(path="/proc/loadavg"):
    """Where load samples come from: a loadavg-format file (tests pass a fake one), or None for no samples.
    Returns whether it could be opened."""
    if path is None:
        return bool(fg_load_source(NULL))
    cdef bytes p = _os.fsencode(path)
    return bool(fg_load_source(p))


def _backoff(adaptive=None, late=None, load=None, cpus=None, reset=False):
    """State of the policy, and test hooks that drive it as the loops do. adaptive: switch both caps on/off;
    late=(t0, starts, ends, nt): report a parallel call's clock (fg_now_ns values; 0 = an empty piece);
    load=(runnable, used, want): report a load sample taken while `used` threads of a call that wanted
    `want` were runnable; cpus=(usable, online): the CPU counts the samples are judged against ((0, 0): ask
    the system); reset: forget both caps and the counters."""
    global _adaptive, _backoff_cap, _backoff_until, _backoff_ns, _late_calls, _team_calls, _strikes, _last_late
    global _judged_nt, _on_time, _load_cap, _cpus_usable, _cpus_online, _next_sample, _samples, _load_capped
    global _last_runnable, _last_usable, _last_online, _overloaded, _calm, _pool_nt, _pool_until
    cdef fg_team t
    if adaptive is not None:
        _adaptive = bool(adaptive)
        if not _adaptive:
            _load_cap = _backoff_cap = 0
    if cpus is not None:
        _cpus_usable, _cpus_online = int(cpus[0]), int(cpus[1])
    if reset:
        _backoff_cap = _strikes = _on_time = _load_cap = 0
        _backoff_until = _backoff_ns = _late_calls = _team_calls = _last_late = _next_sample = 0
        _samples = _load_capped = _last_usable = _last_online = _overloaded = _calm = 0
        _pool_nt = _pool_until = 0
        _last_runnable = -1
    if load is not None:
        load_report(int(load[0]), int(load[1]), int(load[2]))
    if late is not None:
        t0, starts, ends, nt = late
        t.sample = 0
        t.want = nt
        fg_team_begin(&t, nt)
        t.t0 = t0
        for i in range(min(t.nt, len(ends))):
            t.start[i] = starts[i]
            t.end[i] = ends[i]
        team_report(&t)
    now = fg_now_ns()
    return {"adaptive": bool(_adaptive), "cap": _backoff_cap if now < _backoff_until else 0,
            "remaining_s": max(0, _backoff_until - now) / 1e9 if _backoff_cap else 0.0,
            "late_calls": _late_calls, "team_calls": _team_calls, "now_ns": now,
            "load_cap": _load_cap, "samples": _samples, "load_capped": _load_capped,
            "runnable": _last_runnable, "usable": _last_usable, "online": _last_online,
            "sampling": bool(fg_loadavg_fd_open()),
            "trace": [tuple(_trace[i % 32][j] for j in range(4)) for i in range(max(0, _samples - 32), _samples)],
            "user": _user_threads, "budget": _budget_threads, "openmp": omp_get_max_threads(),
            "forked": bool(_forked_child)}


def _after_fork_in_child():
    global _forked_child
    _forked_child = True


import os as _os
_os.register_at_fork(after_in_child=_after_fork_in_child)
OPENMP = bool(FASTGELU_OPENMP)

from fastgelu import _threads as _threads_mod
_set_budget(_threads_mod.default_budget()[0])
_load_source()


# ---- storage types and conversions -------------------------------------------------------------------

# float16 and bfloat16 are stored as 16 bits and computed in float32, rounded once to nearest-even on the way
# out. Written with integer operations so that gcc vectorizes them on every ISA level (a _Float16 cast is a
# libgcc call without AVX-512-FP16).
cdef extern from "fg_half.h":
    float fg_half_to_float(unsigned short) nogil
    unsigned short fg_float_to_half(float) nogil
    void fg_halves_to_floats(const unsigned short*, float*, long) nogil
    void fg_floats_to_halves(const float*, unsigned short*, long) nogil
    float fg_bf16_to_float(unsigned short) nogil
    unsigned short fg_float_to_bf16(float) nogil

cdef struct Half:       # NumPy float16 (IEEE binary16)
    unsigned short bits
cdef struct BFloat:     # ml_dtypes.bfloat16
    unsigned short bits

ctypedef fused stored:
    float
    double
    Half
    BFloat


# ---- 16-bit forward: a table of all 65,536 results ----------------------------------------------------------
#
# A float16/bfloat16 forward result depends on 16 bits of input, so each build fills one table per (variant,
# type) at import (_fill_fwd16_tables in _ufuncs.pxi: the float64 kernel, rounded once to 16 bits, so every
# entry is the correctly rounded result; through float32 a few inputs near a rounding boundary were not);
# a call is then one lookup per element.
# Contiguous runs look up 8 elements into registers before storing any: with loads and stores interleaved
# the compiler must assume a store may change the table or the input, and the lookups serialize (measured on
# a Xeon, 256K float16: 4.5 Gelem/s one at a time, 5.5 eight at a time in every build; an AVX2/AVX-512 gather
# was 4.1/6.3, and gathers are several times slower on CPUs with Intel's Downfall microcode fix).

cdef extern from "fg_half.h":
    void fg_lookup16(const unsigned short* tab, const unsigned short* inp, unsigned short* out, long n) nogil

cdef unsigned short _fwd16_table[3][2][65536]    # [variant][0 float16, 1 bfloat16][input bits]

cdef inline unsigned short* fwd16_table(stored* r, variant* v) noexcept nogil:
    cdef int vi = 0 if variant is VNone else (1 if variant is VTanh else 2)
    return _fwd16_table[vi][0 if stored is Half else 1]

# ---- loops ------------------------------------------------------------------------------------------------

# Strided, broadcast and 16-bit data are gathered into a stack buffer of this many elements, computed by the
# same block function as contiguous data (so every path gives the same bits), and scattered back.
cdef enum:
    CHUNK = 2048    # 256 measured 2/3 of the contiguous float32 speed for float16: the exact double path's
                    # deferred lanes are flushed at the end of every buffer (_gelu_exact.pxi); 72 KiB of stack at most


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


cdef inline void fwd16_lookup_floats(float* fb, npy_intp m, stored* r, variant* v) noexcept nogil:
    # 16-bit values held as floats (exactly) -> their table results, as floats
    cdef const unsigned short* tab = fwd16_table(r, v)
    cdef npy_intp k
    for k in range(m):
        if stored is Half:
            fb[k] = fg_half_to_float(tab[fg_float_to_half(fb[k])])
        else:
            fb[k] = fg_bf16_to_float(tab[fg_float_to_bf16(fb[k])])


cdef inline void fwd_piece(char* px, char* py, npy_intp sx, npy_intp sy, npy_intp n,
                           stored* r, variant* v) noexcept nogil:
    cdef npy_intp c, m
    cdef float fb[CHUNK]
    cdef double db[CHUNK]
    cdef float fo[CHUNK]          # separate output buffers: blocks run faster out of place than in place
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


cdef inline npy_intp piece_len(npy_intp n, int nt) noexcept nogil:
    # whole 64-element groups per thread so that pieces of contiguous data start on cache-line boundaries
    return (((n + nt - 1) // nt) + 63) & ~(<npy_intp>63)


cdef inline bint overlaps(char* pin, npy_intp sin, char* pout, npy_intp sout, npy_intp n) noexcept nogil:
    """An input that is not the output itself but shares memory with it. NumPy lets through only overlaps
    a forward pass handles (output behind the input), which one thread does; split between threads, a
    later piece could overwrite what an earlier one has yet to read."""
    return (pin != pout or sin != sout) and depends_on_output(pin, sin, pout, sout, n)


# ---- gated GELU: GELU(gate)*up and its gradient ------------------------------------------------------------
#
# gelu_mul(gate, up) = GELU(gate)*up;  gelu_mul_grad(gate, up, dy) = (dy*up*GELU'(gate), dy*GELU(gate)).
# A chunk's GELU(gate) comes from the variant's block function into a stack buffer and is multiplied by up;
# the gradient's first output is the variant's gradient block with dy*up as its dy. So the error is the block
# function's plus one rounding (float16/bfloat16: computed in float32, rounded once to 16 bits at the end).
# Where the rounded GELU(gate) has lost its relative accuracy the product would magnify that: a float32
# GELU(gate) that is subnormal or zero from a nonzero gate (gate < ~-13 for the exact form) while |up| is as
# large as 1e38. Those lanes (rare: found by one summary per chunk) are gathered and take GELU(gate) from one
# float64 block call and the product in double, rounded once. float64 has nothing wider: a GELU(gate) that
# underflowed to 0 from a finite gate stands for a tiny number of the gate's sign, so an infinite up gives
# +-inf there (the exact product's, not NaN); a subnormal GELU(gate) (gate < ~-37.6) times a huge up keeps the
# absolute error of that subnormal (docs/gated.md). dy*up that overflows from finite factors is redone the same way (float32: in double;
# float64: dy*GELU'(gate) first, then up), and so is an infinite dy*up whose gradient block gave NaN (GELU'(gate)
# underflowed: the exact product is -dy*up). Everything lands in stack buffers before any output is written,
# so out=gate / out=up (exact aliasing) and the output-behind-input overlaps NumPy lets through read every
# input before it is overwritten.

from libc.math cimport copysign, fabsf as _gm_fabsf
from libc.string cimport memcpy as _gm_memcpy

cdef extern from "<float.h>":
    const float FLT_MIN
    const float FLT_MAX
    const double DBL_MAX

cdef enum:
    GM_CHUNK = 1024   # elements per chunk: ~150 KiB of stack for the gradient (loads, buffers, fix-up lists)


cdef inline double gm_prod(double g, double f, double u) noexcept nogil:
    """f*u with f = GELU(g); f == 0 from a finite nonzero g is a tiny number of g's sign: an infinite u gives
    +-u."""
    if f == 0 and g != 0 and fabs(g) != INFINITY and fabs(u) == INFINITY:
        return u if g > 0 else -u
    return f * u


cdef inline bint gm_lost(real g, real f) noexcept nogil:
    # float32: GELU(g) below the normal range from a nonzero g; float64: underflowed to 0
    if real is float:
        return (_gm_fabsf(f) < FLT_MIN) & (g != 0)
    else:
        return (f == 0) & (g != 0)


cdef inline bint gm_overflow(real a, real b, real p) noexcept nogil:
    # p = a*b is not finite while a and b are
    if real is float:
        return (not (_gm_fabsf(p) <= FLT_MAX)) & (_gm_fabsf(a) <= FLT_MAX) & (_gm_fabsf(b) <= FLT_MAX)
    else:
        return (not (fabs(p) <= DBL_MAX)) & (fabs(a) <= DBL_MAX) & (fabs(b) <= DBL_MAX)


cdef inline bint gm_nan_of_inf(real g, real w, real r) noexcept nogil:
    # r = w*GELU'(g) came out NaN from an infinite w and a finite g: GELU'(g) underflowed (g far negative),
    # while the exact value is a tiny negative number, so the product is -w
    if real is float:
        return (r != r) & (_gm_fabsf(w) == INFINITY) & (_gm_fabsf(g) <= FLT_MAX)
    else:
        return (r != r) & (fabs(w) == INFINITY) & (fabs(g) <= DBL_MAX)


cdef inline npy_intp gm_count_lost(const real* g, const real* f, npy_intp m) noexcept nogil:
    cdef npy_intp i, k = 0
    for i in range(m):
        k += gm_lost(g[i], f[i])
    return k


cdef inline npy_intp gm_gather_lost(const real* g, const real* f, npy_intp m, npy_intp* idx,
                                    double* gd) noexcept nogil:
    cdef npy_intp i, k = 0
    for i in range(m):
        if gm_lost(g[i], f[i]):
            idx[k] = i
            gd[k] = g[i]
            k += 1
    return k


cdef inline void gm_fix_lost(const real* g, const real* fac, real* y, const npy_intp* idx, double* gd, double* fd,
                             npy_intp k, variant* v) noexcept nogil:
    """y[i] = GELU(g[i]) * fac[i] for the k lanes idx whose block result lost its relative accuracy (gd: their
    gates): float32 from the float64 block function, in double, rounded once; float64 as gm_prod."""
    cdef npy_intp j
    if real is float:
        fwd_block(gd, fd, k, v)
        for j in range(k):
            y[idx[j]] = <float>gm_prod(gd[j], fd[j], fac[idx[j]])
    else:
        for j in range(k):
            y[idx[j]] = gm_prod(gd[j], copysign(0.0, gd[j]), fac[idx[j]])   # the block's +-0


cdef inline void gm_fwd_chunk(const real* g, const real* u, real* y, npy_intp m, variant* v) noexcept nogil:
    cdef real fb[GM_CHUNK]
    cdef npy_intp idx[GM_CHUNK]
    cdef double gd[GM_CHUNK]
    cdef double fd[GM_CHUNK]
    cdef npy_intp i, k
    fwd_block(g, fb, m, v)
    k = gm_count_lost(g, fb, m)
    if k:
        k = gm_gather_lost(g, fb, m, idx, gd)
    for i in range(m):
        fb[i] = fb[i] * u[i]
    if k:
        gm_fix_lost(g, u, fb, idx, gd, fd, k, v)
    _gm_memcpy(y, fb, m * sizeof(real))


cdef inline void gm_grad_chunk(const real* g, const real* u, const real* dy, real* dg, real* du, npy_intp m,
                               variant* v) noexcept nogil:
    cdef real fb[GM_CHUNK]
    cdef real wb[GM_CHUNK]
    cdef real gb[GM_CHUNK]
    cdef npy_intp idx[GM_CHUNK]
    cdef npy_intp oidx[GM_CHUNK]
    cdef double gd[GM_CHUNK]
    cdef double fd[GM_CHUNK]
    cdef double wd[GM_CHUNK]
    cdef npy_intp i, j, k = 0, ko = 0
    fwd_block(g, fb, m, v)
    for i in range(m):
        wb[i] = dy[i] * u[i]
    grad_block(g, wb, gb, m, v)
    for i in range(m):
        k += gm_lost(g[i], fb[i]) | gm_overflow(dy[i], u[i], wb[i]) | gm_nan_of_inf(g[i], wb[i], gb[i])
    if k:
        k = gm_gather_lost(g, fb, m, idx, gd)
        for i in range(m):
            if gm_overflow(dy[i], u[i], wb[i]):
                oidx[ko] = i
                ko += 1
            elif gm_nan_of_inf(g[i], wb[i], gb[i]):
                gb[i] = -wb[i]
    for i in range(m):
        fb[i] = fb[i] * dy[i]
    if k:
        gm_fix_lost(g, dy, fb, idx, gd, fd, k, v)
    if ko:
        # dy*up overflowed: float32 through the float64 gradient block with dy*up exact in double; float64
        # as dy*GELU'(gate) first, then times up
        for j in range(ko):
            gd[j] = g[oidx[j]]
            wd[j] = <double>dy[oidx[j]] * <double>u[oidx[j]] if real is float else dy[oidx[j]]
        grad_block(gd, wd, fd, ko, v)
        for j in range(ko):
            if real is float:
                gb[oidx[j]] = <float>fd[j]
            else:
                gb[oidx[j]] = fd[j] * u[oidx[j]]
    _gm_memcpy(dg, gb, m * sizeof(real))
    _gm_memcpy(du, fb, m * sizeof(real))


cdef inline void gm_fwd_piece(char* pg, char* pu, char* py, npy_intp sg, npy_intp su, npy_intp sy, npy_intp n,
                              stored* r, variant* v) noexcept nogil:
    cdef npy_intp c, m, z = sizeof(stored)
    cdef float fg[GM_CHUNK]
    cdef float fu[GM_CHUNK]
    cdef float fo[GM_CHUNK]
    cdef double dg[GM_CHUNK]
    cdef double du[GM_CHUNK]
    cdef double dout[GM_CHUNK]
    if depends_on_output(pg, sg, py, sy, n) or depends_on_output(pu, su, py, sy, n):
        # reduce/accumulate: an input is an earlier output, so elements go one at a time, in order
        for c in range(n):
            gm_fwd_piece(pg + c * sg, pu + c * su, py + c * sy, 0, 0, 0, 1, r, v)
        return
    c = 0
    while c < n:
        m = n - c if n - c < GM_CHUNK else GM_CHUNK
        if (stored is float or stored is double) and sg == z and su == z and sy == z:
            gm_fwd_chunk(<const stored*>(pg + c * z), <const stored*>(pu + c * z), <stored*>(py + c * z), m, v)
        else:
            load(pg + c * sg, sg, m, r, fg, dg)
            load(pu + c * su, su, m, r, fu, du)
            if stored is double:
                gm_fwd_chunk(dg, du, dout, m, v)
            else:
                gm_fwd_chunk(fg, fu, fo, m, v)
            store(py + c * sy, sy, m, r, fo, dout)
        c += GM_CHUNK


cdef inline void gm_grad_piece(char** p, const npy_intp* s, npy_intp n, stored* r, variant* v) noexcept nogil:
    """p, s: gate, up, dy, dgate, dup (pointers and strides)."""
    cdef npy_intp c, m, i, j, z = sizeof(stored)
    cdef char* q[5]
    cdef npy_intp zero[5]
    cdef float fg[GM_CHUNK]
    cdef float fu[GM_CHUNK]
    cdef float fd[GM_CHUNK]
    cdef float fo1[GM_CHUNK]
    cdef float fo2[GM_CHUNK]
    cdef double dg[GM_CHUNK]
    cdef double du[GM_CHUNK]
    cdef double dd[GM_CHUNK]
    cdef double do1[GM_CHUNK]
    cdef double do2[GM_CHUNK]
    cdef bint serial = False
    for i in range(3):
        for j in range(3, 5):
            serial = serial or depends_on_output(p[i], s[i], p[j], s[j], n)
    if serial:
        for j in range(5):
            zero[j] = 0
        for c in range(n):
            for j in range(5):
                q[j] = p[j] + c * s[j]
            gm_grad_piece(q, zero, 1, r, v)
        return
    c = 0
    while c < n:
        m = n - c if n - c < GM_CHUNK else GM_CHUNK
        if (stored is float or stored is double) and s[0] == z and s[1] == z and s[2] == z and s[3] == z \
                and s[4] == z:
            gm_grad_chunk(<const stored*>(p[0] + c * z), <const stored*>(p[1] + c * z),
                          <const stored*>(p[2] + c * z), <stored*>(p[3] + c * z), <stored*>(p[4] + c * z), m, v)
        else:
            load(p[0] + c * s[0], s[0], m, r, fg, dg)
            load(p[1] + c * s[1], s[1], m, r, fu, du)
            load(p[2] + c * s[2], s[2], m, r, fd, dd)
            if stored is double:
                gm_grad_chunk(dg, du, dd, do1, do2, m, v)
            else:
                gm_grad_chunk(fg, fu, fd, fo1, fo2, m, v)
            store(p[3] + c * s[3], s[3], m, r, fo1, do1)
            store(p[4] + c * s[4], s[4], m, r, fo2, do2)
        c += GM_CHUNK


cdef inline bint gm_overlaps(char** args, const npy_intp* steps, int nin, int nargs, npy_intp n) noexcept nogil:
    cdef int i, j
    for i in range(nin):
        for j in range(nin, nargs):
            if overlaps(args[i], steps[i], args[j], steps[j], n):
                return True
    return False


# ---- fused bias: gelu(x + b), b along the last axis --------------------------------------------------------

cdef inline float round_to(float f, stored* r) noexcept nogil:
    # x + b is rounded to the storage type first, exactly as NumPy's own x + b would be
    if stored is Half:
        return fg_half_to_float(fg_float_to_half(f))
    elif stored is BFloat:
        return fg_bf16_to_float(fg_float_to_bf16(f))
    return f


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
        elif stored is float:
            fwd_block(fb, fb, m, v)
        else:
            fwd16_lookup_floats(fb, m, r, v)      # the same table as gelu(x + b) without bias
        store(py + i * sz, sz, m, r, fb, db)
        i += m


# ---- one call across the team -----------------------------------------------------------------------------

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
        return overlaps(args[0], steps[0], args[1], steps[1], n)
    if op == RUN_GRAD:
        return overlaps(args[0], steps[0], args[2], steps[2], n) or overlaps(args[1], steps[1], args[2], steps[2], n)
    if op == RUN_GM_FWD:
        return gm_overlaps(args, steps, 2, 3, n)
    if op == RUN_GM_GRAD:
        return gm_overlaps(args, steps, 3, 5, n)
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


cdef inline void bias_run(char* px, char* pb, char* pd, char* py, npy_intp n, npy_intp width,
                          npy_intp sd, stored* r, variant* v, bint grad) noexcept nogil:
    cdef char* args[4]
    cdef npy_intp steps[3]
    args[0], args[1], args[2], args[3] = px, pb, pd, py
    steps[0], steps[1], steps[2] = 0, 0, sd
    if grad:        # op a constant in each call of run, as in the loops above
        run(RUN_BIAS_GRAD, args, steps, n, width, r, v)
    else:
        run(RUN_BIAS, args, steps, n, width, r, v)


cdef inline void bias_typed(char* px, char* pb, char* pd, char* py, npy_intp n, npy_intp width,
                            bint dy_scalar, int code, variant* v, bint grad) noexcept nogil:
    if code == 0:
        bias_run(px, pb, pd, py, n, width, 0 if dy_scalar else 2, <Half*>0, v, grad)
    elif code == 1:
        bias_run(px, pb, pd, py, n, width, 0 if dy_scalar else 4, <float*>0, v, grad)
    elif code == 2:
        bias_run(px, pb, pd, py, n, width, 0 if dy_scalar else 8, <double*>0, v, grad)
    else:
        bias_run(px, pb, pd, py, n, width, 0 if dy_scalar else 2, <BFloat*>0, v, grad)


def _bias_call(int variant_index, bint grad, int dtype_code, cnp.ndarray x, cnp.ndarray b, dy,
               cnp.ndarray out):
    """gelu(x + b) (or its gradient times dy) for C-contiguous arrays of one dtype that the caller has
    checked: b 1-D of length x.shape[-1], dy (gradient only) shaped like x or 0-d, out shaped like x.
    variant_index 0/1/2 = none/tanh/sigmoid; dtype_code 0/1/2/3 = float16/float32/float64/bfloat16."""
    cdef char* px = <char*>cnp.PyArray_DATA(x)
    cdef char* pb = <char*>cnp.PyArray_DATA(b)
    cdef char* pd = <char*>cnp.PyArray_DATA(dy) if grad else NULL
    cdef char* py = <char*>cnp.PyArray_DATA(out)
    cdef npy_intp n = cnp.PyArray_SIZE(x), width = cnp.PyArray_DIM(b, 0)
    cdef bint dy_scalar = grad and cnp.PyArray_NDIM(dy) == 0
    if n == 0:
        return out
    with nogil:
        if variant_index == 0:
            bias_typed(px, pb, pd, py, n, width, dy_scalar, dtype_code, <VNone*>0, grad)
        elif variant_index == 1:
            bias_typed(px, pb, pd, py, n, width, dy_scalar, dtype_code, <VTanh*>0, grad)
        else:
            bias_typed(px, pb, pd, py, n, width, dy_scalar, dtype_code, <VSigmoid*>0, grad)
    return out
