"""The CPU budget of this process: how many CPUs it may really use, as container-aware runtimes count it
(loky's cpu_count, Go's GOMAXPROCS, the JVM): the affinity mask, and the cgroup CPU quota (v2 cpu.max,
v1 cpu.cfs_quota_us / cpu.cfs_period_us) rounded up, since a quota of 1.5 CPUs lets two threads run 75%
of the time. OpenMP itself counts only the affinity mask, so a container limited to 1 CPU on a 64-core
host would otherwise start 64 threads that take turns on one CPU's time.

The kernel modules apply the budget as a cap on the threads of a call unless OMP_NUM_THREADS is set (the
user has chosen) or fastgelu.set_num_threads overrides it.

Test hook: FASTGELU_CGROUP_ROOT names a folder read instead of "/" (its proc/self/cgroup and
sys/fs/cgroup/...), so tests build a fake cgroup tree.
"""
import math
import os


def _root():
    return os.environ.get("FASTGELU_CGROUP_ROOT") or "/"


def _read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except (OSError, UnicodeDecodeError):
        return None


def affinity_count():
    """CPUs in this process's affinity mask (taskset, cpuset), else all of them."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _own_cgroups(root):
    """{controller: path} from proc/self/cgroup; v2's unified hierarchy is under the key ''."""
    text = _read(os.path.join(root, "proc/self/cgroup")) or ""
    out = {}
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3:
            for ctrl in parts[1].split(",") if parts[1] else [""]:
                out[ctrl] = parts[2]
    return out


def _dirs(mount, path):
    """The cgroup folder of `path` under `mount` and its ancestors (a limit anywhere above applies too);
    just the mount itself when the path is not there (a container sees its own cgroup as the root)."""
    parts = [p for p in path.split("/") if p not in ("", ".", "..")]  # never climb out of the mount
    dirs = [os.path.join(mount, *parts[:i]) for i in range(len(parts), -1, -1)]
    return [d for d in dirs if os.path.isdir(d)] or [mount]


def cgroup_quota(root=None):
    """(CPUs the quota allows, as a float; description) for the tightest quota on this process's cgroup
    and its ancestors, or None when there is no quota (or no cgroup file system)."""
    root = root or _root()
    base = os.path.join(root, "sys/fs/cgroup")
    groups = _own_cgroups(root)
    best = None
    if "" in groups:  # cgroup v2: "max 100000" or "150000 100000"
        for d in _dirs(base, groups[""]):
            text = _read(os.path.join(d, "cpu.max"))
            if not text:
                continue
            fields = text.split()
            try:
                if fields[0] != "max" and int(fields[1]) > 0:
                    cpus = int(fields[0]) / int(fields[1])
                    if best is None or cpus < best[0]:
                        best = (cpus, f"cgroup v2 cpu.max {fields[0]} {fields[1]}")
            except (IndexError, ValueError):
                pass
    if "cpu" in groups:  # cgroup v1: quota -1 means none
        for name in ("cpu,cpuacct", "cpu", "cpuacct,cpu"):
            mount = os.path.join(base, name)
            if not os.path.isdir(mount):
                continue
            for d in _dirs(mount, groups["cpu"]):
                quota = _read(os.path.join(d, "cpu.cfs_quota_us"))
                period = _read(os.path.join(d, "cpu.cfs_period_us"))
                try:
                    q, p = int(quota), int(period)
                except (TypeError, ValueError):
                    continue
                if q > 0 and p > 0 and (best is None or q / p < best[0]):
                    best = (q / p, f"cgroup v1 cpu.cfs_quota_us/cfs_period_us {q}/{p}")
            break
    return best


def budget(root=None):
    """(threads, why): the CPUs this process may use -- the affinity mask, lowered by a cgroup quota
    (rounded up, at least 1)."""
    n = affinity_count()
    why = f"affinity mask ({n} of {os.cpu_count()} CPUs)"
    quota = cgroup_quota(root)
    if quota is not None:
        q = max(1, math.ceil(quota[0] - 1e-9))
        if q < n:
            return q, f"{quota[1]} = {quota[0]:g} CPUs -> {q} (affinity mask: {n})"
    return n, why


def default_budget():
    """(cap, why) the kernel modules apply at import: no cap (0) when OMP_NUM_THREADS is set."""
    if os.environ.get("OMP_NUM_THREADS", "").strip():
        return 0, f"OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS'].strip()}"
    return budget()


def explain(state):
    """Why a large call uses the threads it does, from a kernel module's _backoff() state."""
    if state["forked"]:
        return "1: forked child of a process that ran OpenMP (GNU libgomp's pool does not survive fork)"
    omp, user, cap = state["openmp"], state["user"], state["budget"]
    if user > 0:    # the process-wide value; a per-thread OpenMP limit off the default (threadpoolctl) caps it
        capped = omp != state.get("openmp_default", omp) and omp < user
        nt, why = (omp, "OpenMP's limit for this thread (threadpoolctl or omp_set_num_threads)") if capped else \
            (user, f"set_num_threads({user})")
    elif 0 < cap < omp:
        nt, why = cap, default_budget()[1]
    elif os.environ.get("OMP_NUM_THREADS", "").strip():
        nt, why = omp, f"OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS'].strip()}"
    elif cap and omp < cap:
        nt, why = omp, "OpenMP's limit for this thread (threadpoolctl or omp_set_num_threads)"
    else:
        nt, why = omp, default_budget()[1] if cap else "OpenMP's default"
    load = state.get("load_cap", 0)
    if 0 < load < nt and not (0 < state["cap"] < load):
        return (f"{load}: the machine is busy ({state['runnable']} runnable threads on {state['online']} CPUs "
                f"at the last sample, {state['usable']} usable here); otherwise {nt} from {why}")
    if 0 < state["cap"] < nt:
        return (f"{state['cap']}: backing off for {state['remaining_s']:.2f} s more, parallel calls lost more "
                f"to late workers than their teams saved; otherwise {nt} from {why}")
    return f"{nt}: {why}"
