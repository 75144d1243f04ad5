"""Thread scaling on this machine: Gelem/s at 1, 2, 4, ... threads up to the core count, fastgelu beside
PyTorch, and a one-line reading of it (where more threads stop paying; whether the machine is
oversubscribed, from fastgelu's own load samples). Used by `fastgelu bench` and tools/scaling.py.
"""
import numpy as np

from .. import _api_config, ufuncs
from . import contention, speed


def thread_counts(limit):
    """1, 2, 4, ... below `limit`, then `limit` itself."""
    out, t = [], 1
    while t < limit:
        out.append(t)
        t *= 2
    return out + [limit]


def measure(n=1 << 22, sigma=1, counts=None, torch=None, rounds=5, adaptive=True, min_round=0.02):
    """{impl: {threads: Gelem/s}} for the float32 exact forward on randn*sigma, out of place into one
    preallocated array; impl "fastgelu", "torch" (when given the module), and "fastgelu (fixed)" with the
    policy's caps switched off when adaptive is None (both, interleaved). Rounds alternate thread counts
    and implementations, so a drift of the machine hits all alike; each figure is the median."""
    counts = counts or thread_counts(max(_api_config.get_num_threads(), contention.affinity()))
    x, _ = speed.inputs(n, np.float32, sigma=sigma)
    out = np.empty_like(x)
    gelu = ufuncs.gelu
    calls = {"fastgelu": lambda: gelu(x, out=out)}
    if adaptive is None:
        calls["fastgelu (fixed)"] = calls["fastgelu"]
    if torch is not None:
        tx, to = torch.from_numpy(x), torch.from_numpy(out)
        calls["torch"] = lambda: torch._C._nn.gelu(tx, out=to)
    kernels = _api_config._kernel_modules()
    user = _api_config.get_num_threads()
    times = {(impl, t): [] for impl in calls for t in counts}
    try:
        for _ in range(rounds):
            for t in counts:
                _api_config.set_num_threads(t)
                if torch is not None:
                    torch.set_num_threads(t)
                for impl, fn in calls.items():
                    on = adaptive if adaptive is not None else impl == "fastgelu"
                    for m in kernels:
                        m._backoff(adaptive=on)
                    times[impl, t].append(speed.median_time(fn, min_round=min_round, rounds=1))
    finally:
        for m in kernels:
            m._backoff(adaptive=True)
        _api_config.set_num_threads(user)
        if torch is not None:
            torch.set_num_threads(user)
    return {impl: {t: n / float(np.median(times[impl, t])) / 1e9 for t in counts} for impl in calls}


def reading(rates, state=None):
    """One line: where doubling the threads stops paying (gains under 1.2x: memory or another shared
    resource bounds the call), and whether fastgelu's load samples found the machine oversubscribed."""
    fg = rates["fastgelu"]
    counts = sorted(fg)
    words = []
    stop = next((a for a, b in zip(counts, counts[1:]) if fg[b] < 1.2 * fg[a]), None)
    if len(counts) > 1:
        best = max(counts, key=fg.get)
        words.append(f"{fg[best] / fg[counts[0]]:.1f}x from {counts[0]} to {best} threads")
        if stop is not None:
            words.append(f"more than {stop} threads gain under 1.2x per doubling (memory or a shared resource "
                         f"bounds the call)")
    if state and state.get("runnable", -1) > state.get("online", 0) > 0:
        words.append(f"OVERSUBSCRIBED: {state['runnable']} runnable threads on {state['online']} CPUs at the "
                     f"last sample; fastgelu's calls take their share")
    return "; ".join(words)


def table(rates):
    """Text rows: threads, Gelem/s per implementation, and fastgelu over each other one."""
    impls = list(rates)
    counts = sorted(rates["fastgelu"])
    head = ["threads"] + [f"{i} Gelem/s" for i in impls] + [f"vs {i}" for i in impls[1:]]
    rows = [head]
    for t in counts:
        fg = rates["fastgelu"][t]
        rows.append([str(t)] + [f"{rates[i][t]:.2f}" for i in impls] + [f"{fg / rates[i][t]:.2f}x" for i in impls[1:]])
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    return ["  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in rows]
