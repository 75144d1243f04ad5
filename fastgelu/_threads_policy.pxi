# The threading policy: how many threads a call uses (threads_for), and what a call reports afterwards
# (load_report, team_report) so that the next calls adapt; the Python hooks that set and read it. Nothing
# here runs a parallel region: that is _driver.pxi, the policy's one caller. fastgelu._threads works out the
# process's CPU budget; docs/threads.md measures the policy.

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
# BUSY_SAMPLES samples in a row the call's successors take their proportional share, used * usable / (used +
# others) (a team larger than the usable CPUs is cut to them at the first sample); with CPUs idle at two
# samples in a row, they take back half of the idle ones per sample up to the full team. P processes on C
# cores settle at about C / P threads each (1 each from P >= C), a quiet machine keeps its whole team, and
# the sample costs one pread of a small proc file every few milliseconds (calls capped to one thread sample
# on the calling thread). Tasks on CPUs outside the affinity mask count
# in proportion to the CPUs the mask holds. Called through fastgelu.torch, the idle workers of PyTorch's
# intra-op pool, which spin after each of PyTorch's own parallel ops (the op before the activation, in a
# model), are this process's too: for SPIN_NS after each such call (_host_pool) they are not counted either.
#
# Back-off. Where the count cannot see the contention (a hypervisor's other guests; a worker asleep so long
# that waking it costs more than its piece, as on a VM that halts idle vCPUs), the call's own timing
# does. Half the team would have run a call in two mean pieces; this team took its latest worker's start
# plus one. So each call lost (lateness - mean piece) against half the team, or saved that much, and the
# policy keeps the account of the recent calls, their savings and losses each counted up to CREDIT_NS.
# Start times do not depend on the data, so pieces of uneven work (wide inputs, sorted inputs,
# memory-bound pieces) never count as lateness. Calls use half the threads only on evidence that fewer
# would have been faster: a late call (one that lost) that leaves the account in loss, after another since
# it was last even -- not a late start alone, which on a shared VM comes and goes while a team still
# runs well ahead of one thread. The back-off lasts BACKOFF_MIN_NS, twice as long each time it recurs
# within its own length of the last one, up to BACKOFF_MAX_NS; then the whole team tries again (its first
# call not judged: its workers were asleep) with an even account: it backs off again only if it loses anew.

# Below this many elements a call runs on the calling thread: waking the OpenMP team costs more than a
# small call saves by it (tools/measure_threshold.py finds the size; docs/threads.md has its figures).
cdef npy_intp PARALLEL_MIN = 8192
cdef int _user_threads = 0        # set_num_threads(); 0 = follow OpenMP (OMP_NUM_THREADS, threadpoolctl)
cdef int _omp_default = 0         # OpenMP's limit for a thread nobody limited (read at import)
cdef int _budget_threads = 0      # CPU budget of the process (affinity, cgroup quota); 0 = no cap
cdef bint _forked_child = False   # GNU libgomp's pool does not survive fork(): a child runs serially

cdef bint _adaptive = True

# load cap
cdef long long LOAD_PERIOD_NS = 4000000      # a sample every 4 ms at most (one pread of a small proc file)
cdef long long _next_sample = 0              # fg_now_ns() from which the next call samples
cdef int _load_cap = 0                       # threads the last sample allows; 0 = the whole team
cdef int _cpus_online = 0, _cpus_usable = 0  # test overrides (0: ask the system at each sample)
cdef int _last_runnable = -1, _last_usable = 0, _last_online = 0
cdef long long _samples = 0, _load_capped = 0
cdef int _busy = 0                           # samples in a row that saw more runnable threads than CPUs
cdef int BUSY_SAMPLES = 3                    # other tasks count from the third in a row: a task outside
                                             # the process that runs for a few ms (on a shared VM, often)
                                             # was seen at two in a row in some fresh processes and took
                                             # their team (or a capped team's last CPU) until two calm
                                             # samples gave it back
cdef int _calm = 0                           # samples in a row that found CPUs idle
cdef int _trace[32][4]                       # the last 32 samples: runnable, used, usable, cap (0 = none)
cdef int _pool_nt = 0                        # the largest team of the last SPIN_NS: its idle workers may
cdef long long _pool_until = 0               # still spin (GNU libgomp: GOMP_SPINCOUNT)
cdef long long SPIN_NS = 20000000            # 20 ms
cdef int _host_nt = 0                        # workers of the host library's pool (PyTorch intra-op, less
cdef long long _host_until = 0               # the calling thread) that may still spin, and until when

# back-off
cdef long long BACKOFF_MIN_NS = 100000000    # 100 ms
cdef long long BACKOFF_MAX_NS = 1000000000   # 1 s: on a still-busy machine, one probe a second
cdef long long LATE_SLACK_NS = 50000         # lateness below 50 us is noise, whatever the piece size
cdef long long CREDIT_NS = 20000000          # the most a team's savings (and its losses) count: 20 ms
cdef long long QUIET_NS = 2000000000         # 2 s without a late call: a loss so old says nothing of now
cdef int _backoff_cap = 0                    # threads allowed while backing off; 0 = no cap
cdef long long _backoff_until = 0            # fg_now_ns() when the cap ends
cdef long long _backoff_ns = 0               # length of the last back-off (doubles while it recurs)
cdef long long _loss = 0                     # the team's time lost against half the team, net of what it
                                             # saved, over its recent judged calls (-CREDIT_NS..CREDIT_NS)
cdef int _late_run = 0                       # late calls since _loss was last <= 0
cdef int _loss_nt = 0                        # the team size _loss is about
cdef long long _last_late = 0                # fg_now_ns() of the last late call
cdef long long _late_calls = 0, _team_calls = 0
cdef int _calls[32][5]                       # the last 32 team calls: lateness, mean piece, loss after
                                             # (us), back-off cap after, judged
cdef long long _reported = 0
cdef int _judged_nt = 0                      # team size of the last parallel call (see team_report)


cdef inline int threads_wanted(npy_intp n) noexcept nogil:
    """The user's limits for a call of n elements, before the caps that follow the machine."""
    if n < PARALLEL_MIN or _forked_child:
        return 1
    cdef int omp = omp_get_max_threads()
    cdef int nt = omp
    if _user_threads > 0:
        # set_num_threads: one value for every thread of the process (OpenMP's own limit is per thread: a
        # thread that once set 1 kept it after another raised the cap). It replaces OpenMP's default, so it
        # may exceed OMP_NUM_THREADS; a per-thread limit that differs from the default (threadpoolctl's
        # threadpool_limits) is someone's choice for this thread and still caps it
        nt = _user_threads
        if omp != _omp_default and omp < nt:
            nt = omp
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
    global _judged_nt
    cdef int want = threads_wanted(n)
    cdef int nt = threads_capped(want)
    cdef bint sample = want > 1 and sample_due()
    if nt == 1 and n >= PARALLEL_MIN:
        # a call large enough for a team runs on the calling thread (the caps, set_num_threads(1)): the team's
        # workers idle and fall asleep, so the next team call wakes them and starts late by that alone. It is
        # not judged, as the first call of a team size is not: judged, the probe after a back-off (whose
        # calls run here) would always be late, and with the loss still standing it would back off again:
        # a loop that would keep a team off for as long as calls run
        _judged_nt = 1
    if nt == 1 and sample:
        load_report(fg_runnable(), 1, want)
        sample = False
    team.sample = sample
    team.want = want
    return nt


cdef inline void load_report(int runnable, int used, int want) noexcept nogil:
    """A load sample taken while `used` threads of this call were runnable, for a call that wanted `want`:
    sets the load cap for the calls that follow."""
    global _load_cap, _last_runnable, _last_usable, _last_online, _samples, _load_capped, _busy, _calm
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
    if _host_nt > 0 and fg_now_ns() < _host_until:
        others -= _host_nt           # the host library's idle workers (_host_pool)
        if others < 0:
            others = 0
    if usable < online:   # of the tasks on the machine, those on our CPUs, if spread evenly
        others = (others * usable + online - 1) // online
    if used + others > usable:
        # a task seen at fewer samples in a row is a passing one (a daemon, another runtime's workers
        # spinning down after its last call): it neither caps a team nor lowers a cap. The team's own excess
        # (more threads than usable CPUs) needs no second look
        _busy += 1
        _calm = 0
        if _busy < BUSY_SAMPLES:
            others = 0
        if used + others > usable:
            cap = used * usable // (used + others)
            if cap < 1:
                cap = 1
        else:
            cap = _load_cap if _load_cap > 0 else want
    else:
        _busy = 0
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


cdef inline void team_account(int nt, long long lag, long long piece, long long now) noexcept nogil:
    """A judged team call's lateness (beyond the noise) and mean piece: the account, and the back-off."""
    global _backoff_cap, _backoff_until, _backoff_ns, _late_calls, _loss, _late_run, _last_late, _loss_nt
    if nt != _loss_nt:
        _loss_nt = nt             # what another team size earned or lost is not this team's
        _loss = _late_run = 0
    if _loss > 0 and now - _last_late > QUIET_NS:
        _loss = 0                 # a loss seen so long ago says nothing of the machine now
    _loss += lag - piece
    if _loss > CREDIT_NS:
        _loss = CREDIT_NS
    elif _loss < -CREDIT_NS:
        _loss = -CREDIT_NS
    if _loss <= 0:
        _late_run = 0
        if _backoff_cap > 0 and now >= _backoff_until:
            _backoff_cap = 0      # the whole team is ahead again after a back-off
    if lag <= piece:
        return
    _late_calls += 1
    _last_late = now
    _late_run += 1
    if _loss <= 0 or _late_run < 2:
        return
    # Fewer threads would have been faster: more time lost to late workers than the team has saved lately
    # (up to CREDIT_NS), in two late calls at least -- one is an interrupt, a daemon waking up, a vCPU the
    # host ran something else on; a VM's short slow phases cost a team less than it saves. The evidence is
    # spent: the team that tries again after the back-off (or the halved one) must lose anew, in two late
    # calls -- one late call after a back-off is no more evidence than one before it, and judged alone it
    # backed off again, twice as long, with no team calls left to show the machine had gone quiet
    _loss = _late_run = 0
    if _backoff_cap > 0 and now < _backoff_until:
        _backoff_cap = _backoff_cap // 2 if _backoff_cap > 1 else 1   # the halved team lost too
    else:
        # the loss recurred within a back-off's length of the last one: twice as long
        _backoff_ns = BACKOFF_MIN_NS if _backoff_ns == 0 or now - _backoff_until > _backoff_ns \
            else min(2 * _backoff_ns, BACKOFF_MAX_NS)
        _backoff_cap = nt // 2 if nt > 1 else 1
    _backoff_until = now + _backoff_ns


cdef inline void team_report(const fg_team* t) noexcept nogil:
    """After a parallel call: its load sample, then its account against half the team (the back-off)."""
    global _team_calls, _judged_nt, _pool_nt, _pool_until, _reported
    cdef long long lag = 0, work = 0, e, s, piece
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
    # Half the team would have run this call in two mean pieces, on time; this team took its latest start
    # plus one. So the call lost (lateness - mean piece) against half the team when positive, and saved
    # that much when negative. Lateness under LATE_SLACK_NS is noise and not counted
    piece = work // pieces
    lag = lag - LATE_SLACK_NS if lag > LATE_SLACK_NS else 0
    cdef bint judged = _adaptive and t.nt == _judged_nt
    if _adaptive and not judged:
        # the first call with a new team size starts its threads (libgomp creates them lazily), and the
        # first after calls on one thread wakes workers that fell asleep (threads_for): their late workers
        # say nothing about the machine (the first call of a process is several times a quiet one)
        _judged_nt = t.nt
    if judged:
        team_account(t.nt, lag, piece, now)
    cdef int* row = _calls[_reported % 32]
    _reported += 1
    row[0], row[1], row[2] = <int>(lag // 1000), <int>(piece // 1000), <int>(_loss // 1000)
    row[3], row[4] = (_backoff_cap if now < _backoff_until else 0), judged

