"""`fastgelu bench`: the throughput rows against NumPy+SciPy, PyTorch and ONNX Runtime, the speed goals, the
thread-scaling table and the plot; `--models` and `--instructions` hand over to their own modules."""
import importlib.util
import sys

import numpy as np

import fastgelu

F32, F64 = np.float32, np.float64


def _progress(total):
    """tqdm when installed, else a plain counter; both on stderr so stdout stays a clean report."""
    try:
        from tqdm import tqdm
        return tqdm(total=total, file=sys.stderr, unit="row", leave=False)
    except ImportError:
        class Plain:
            n = 0

            def update(self, k=1):
                self.n += k
                print(f"[{self.n}/{total}]", file=sys.stderr, flush=True)

            def set_description(self, text):
                print(f"  {text} ...", file=sys.stderr, end=" ", flush=True)

            def close(self):
                pass
        return Plain()


def workloads(quick):
    """(variant, direction, dtype, n, sigma) rows; sigma = 3 repeats the goal workloads on wide inputs."""
    big = (1 << 22) if quick else (1 << 26)
    mid = 262144
    half = [np.float16] + ([fastgelu.ufuncs.BFLOAT16] if fastgelu.ufuncs.BFLOAT16 is not None else [])
    rows = [("none", "fwd", F32, 3072, 1)]
    for sigma in (1, 3):
        rows += [("none", "fwd", F32, mid, sigma), ("none", "fwd", F32, big, sigma), ("tanh", "fwd", F32, mid, sigma),
                 ("none", "fwd", F64, mid, sigma)] + [("none", "fwd", h, mid, sigma) for h in half]
        rows += [("none", "grad", F32, mid, sigma)]
    rows += [("sigmoid", "fwd", F32, mid, 1), ("tanh", "fwd", F64, mid, 1), ("tanh", "grad", F32, mid, 1),
             ("sigmoid", "grad", F32, mid, 1), ("none", "grad", F64, mid, 1)]
    # gated GELU (gelu_mul: "mul", gelu_mul_grad: "mulgrad") against PyTorch eager F.gelu(gate) * up
    for sigma in (1, 3):
        rows += [("none", "mul", F32, mid, sigma), ("none", "mulgrad", F32, mid, sigma), ("none", "mul", F32, big, sigma)]
    rows += [("tanh", "mul", F32, mid, 1), ("tanh", "mulgrad", F32, mid, 1)]
    return rows


def label(variant, direction, dtype, n, sigma=1):
    return f"{variant:<8}{direction:<5}{np.dtype(dtype).name:<9}{n:>11,} sigma={sigma}"


def targets(results, quick, bar):
    """The speed goals fastgelu sets itself, each as (description, measured, goal, ok); ok is None when the
    competitor is not installed."""
    from . import speed
    get = results.get
    out = []
    big = (1 << 22) if quick else (1 << 26)

    def ratio(key, other, goal, text):
        r = get(key, {})
        if other in r:
            val = r["fastgelu"] / r[other]
            out.append((text, f"{val:.2f}x", f">= {goal}x", val >= goal))
        else:
            out.append((text, "-", f">= {goal}x", None))

    mid = 262144
    for sigma in (1, 3):
        on = f", x = randn*{sigma}"
        ratio(("none", "fwd", F32, mid, sigma), "torch", 1.5, "f32 exact fwd 256K vs torch" + on)
        ratio(("none", "grad", F32, mid, sigma), "torch", 2.0, "f32 exact grad 256K vs torch gelu_backward" + on)
        ratio(("tanh", "fwd", F32, mid, sigma), "onnxruntime", 1.5, "f32 tanh fwd 256K vs ONNX Runtime FastGelu" + on)
        ratio(("none", "fwd", F64, mid, sigma), "torch", 2.0, "f64 exact fwd 256K vs torch" + on)
        ratio(("none", "fwd", np.float16, mid, sigma), "torch", 1.5, "f16 exact fwd 256K vs torch" + on)
        if fastgelu.ufuncs.BFLOAT16 is not None:
            ratio(("none", "fwd", fastgelu.ufuncs.BFLOAT16, mid, sigma), "torch", 1.5,
                  "bf16 exact fwd 256K vs torch" + on)
    for sigma in (1, 3):
        on = f", gate = randn*{sigma}"
        ratio(("none", "mul", F32, mid, sigma), "torch", 1.5, "f32 gelu_mul 256K vs torch F.gelu(gate)*up" + on)
        ratio(("none", "mulgrad", F32, mid, sigma), "torch", 1.5,
              "f32 gelu_mul_grad 256K vs torch backward of F.gelu(gate)*up" + on)
    bar.set_description("memory floor")
    floor = speed.memory_floor(big)
    floor3 = speed.gated_memory_floor(big)
    for sigma in (1, 3):
        val = get(("none", "mul", F32, big, sigma), {}).get("fastgelu", 0) / floor3
        out.append((f"f32 gelu_mul {big >> 20}M, gate = randn*{sigma}, vs np.multiply(gate,up,out=o) "
                    f"({floor3:.2f} Gelem/s)", f"{val:.2f}x", ">= 0.9x", val >= 0.9))
    for sigma in (1, 3):
        val = get(("none", "fwd", F32, big, sigma), {}).get("fastgelu", 0) / floor
        out.append((f"f32 exact fwd {big >> 20}M, x = randn*{sigma}, vs np.multiply(x,1,out=o) ({floor:.2f} Gelem/s)",
                    f"{val:.2f}x", ">= 0.9x", val >= 0.9))
    for a, b in ((("none", "fwd", F32, mid, 1), ("none", "fwd", F32, mid, 3)),
                 (("none", "grad", F32, mid, 1), ("none", "grad", F32, mid, 3))):
        if a in results and b in results:
            val = results[b]["fastgelu"] / results[a]["fastgelu"]
            out.append((f"f32 exact {a[1]} 256K: speed at x = randn*3 / at randn*1", f"{val:.2f}x", ">= 0.8x",
                        val >= 0.8))

    bar.set_description("call overhead")
    x, _ = speed.inputs(3072, F32)
    t_fg = speed.in_place_time(fastgelu.ufuncs.gelu, x)
    t_tanh = speed.in_place_time(np.tanh, x)
    val = t_fg / t_tanh
    out.append((f"3,072 in place: {t_fg * 1e6:.2f} us vs np.tanh {t_tanh * 1e6:.2f} us", f"{val:.2f}x time",
                "<= 1.5x", val <= 1.5))

    bar.set_description("thread scaling")
    x, _ = speed.inputs(1 << 20, F32)
    o = np.empty_like(x)
    nt = fastgelu.get_num_threads()
    try:
        fastgelu.set_num_threads(1)
        t1 = speed.median_time(lambda: fastgelu.ufuncs.gelu(x, out=o))
        fastgelu.set_num_threads(2)
        t2 = speed.median_time(lambda: fastgelu.ufuncs.gelu(x, out=o))
    finally:
        fastgelu.set_num_threads(nt)
    val = t1 / t2
    out.append(("1 -> 2 threads, 1M f32 exact fwd", f"{val:.2f}x", ">= 1.8x", val >= 1.8))

    bar.set_description("in-place memory")
    mib = 64 if quick else 512
    extra = in_place_extra_bytes(mib)
    out.append((f"in place on {mib} MiB: extra memory", f"{extra / 1024:.0f} KiB", "< 1024 KiB", extra < 1 << 20))
    return out


def in_place_extra_bytes(mib):
    """Peak memory a 2**k-element in-place call adds: tracemalloc (NumPy reports its allocations there)
    and the resident-set peak, whichever is larger."""
    import resource
    import tracemalloc
    x = np.random.default_rng(0).standard_normal(mib * (1 << 20) // 4, dtype=np.float32)
    fastgelu.gelu(x[:1000], out=x[:1000])
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    tracemalloc.start()
    fastgelu.gelu(x, out=x)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss_growth = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before
    return max(peak, rss_growth)


def run(args):
    if args.models:
        from . import models
        models.run(**(dict(layers=1, batch=2, seq=32, rounds=3) if args.quick else {}))
        return 0
    if args.instructions:
        from . import instructions
        return instructions.run(args.baseline, args.update_baseline)
    from . import contention, scaling, speed
    watch = contention.Watch()  # other processes' CPU use during the run
    torch = speed._torch()
    rows = workloads(args.quick)
    bar = _progress(len(rows) + 5)
    results = {}
    for key in rows:
        bar.set_description(label(*key).strip())
        results[key] = speed.row(*key, torch=torch, rounds=5 if args.quick else 7)
        bar.update()
    tgt = targets(results, args.quick, bar)
    bar.set_description("processes at once")
    tgt += contention.bench_targets(args.quick)
    bar.set_description("thread scaling")
    rates = scaling.measure(1 << 22, 1, torch=torch, rounds=3 if args.quick else 5)
    scaling_state = fastgelu.ufuncs._kernels._backoff()
    busy = watch.verdict()
    bar.update(5)
    bar.close()

    print(report(results, tgt, args.quick, busy))
    print("")
    print("Threads: float32 exact forward, 4,194,304 elements, randn*1, Gelem/s by thread count")
    print("\n".join("  " + line for line in scaling.table(rates)))
    print("  " + scaling.reading(rates, scaling_state))
    if busy:
        print(busy)
    if args.plot:
        plot(results, args.plot)
        print(f"plot written to {args.plot}")
    return 0


# How to add a missing competitor. PyTorch: the CPU wheel, never a bare `torch` (that pulls GBs of CUDA).
INSTALL_HINTS = {
    "scipy": "pip install scipy",
    "torch": "pip install torch --index-url https://download.pytorch.org/whl/cpu",
    "onnxruntime": "pip install onnxruntime onnx",
}
COLUMN_OF = {"scipy": "numpy", "torch": "torch", "onnxruntime": "onnxruntime"}


def table(rows, align):
    """Rows of strings as aligned text columns; align is one '<' or '>' per column."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(align))]
    return ["  ".join(f"{c:{a}{w}}" for c, a, w in zip(r, align, widths)).rstrip() for r in rows]


def report(results, goals, quick, busy=None):
    """The text `python -m fastgelu bench` prints."""
    cfg = fastgelu.get_config()
    lines = [f"fastgelu {fastgelu.__version__} on {_machine()}"]
    if not cfg["openmp"]:
        lines.append("SERIAL BUILD: fastgelu was built without OpenMP and uses one thread per call.")
    missing = [m for m in INSTALL_HINTS if importlib.util.find_spec(m) is None]
    for m in missing:
        what = "the NumPy+SciPy formula column" if m == "scipy" else f"the {m} column and its goals"
        lines.append(f"Note: {m} is not installed, so {what} are left out ('-'). To add: {INSTALL_HINTS[m]}")
    lines.append("Throughput in Gelem/s (median of rounds); 'vs X' is fastgelu's speed / X's speed, same arrays, "
                 "same threads.")
    others = [k for k in ("numpy", "torch", "onnxruntime") if any(k in r for r in results.values())
              or any(COLUMN_OF[m] == k for m in missing)]
    rows = [["variant", "dir", "dtype", "n", "x=randn*", "fastgelu"] + [f"vs {k}" for k in others]]
    for (variant, direction, dtype, n, sigma), r in results.items():
        direction = {"mul": "gelu_mul", "mulgrad": "gelu_mul_grad"}.get(direction, direction)
        rows.append([variant, direction, np.dtype(dtype).name, f"{n:,}", f"{sigma}", f"{r['fastgelu']:.2f}"]
                    + [f"{r['fastgelu'] / r[k]:.2f}x" if k in r else "-" for k in others])
    lines += table(rows, "<<<><>" + ">" * len(others))
    lines.append("")
    lines.append("Speed goals" + (" (quick run: smaller sizes than the full run)" if quick else ""))
    rows = [["", "measured", "goal", ""]]
    for text, val, goal, ok in goals:
        mark = "not measured" if ok is None else ("met" if ok else ("busy" if busy else "MISSED"))
        rows.append([text, val, goal, mark])
    lines += ["  " + r for r in table(rows, "<><<")]
    if busy:
        lines.append(busy)
    return "\n".join(lines)


def _machine():
    from . import speed
    return speed.machine()


def plot(results, path):
    try:
        import matplotlib
    except ImportError:
        raise SystemExit("--plot needs matplotlib: pip install 'fastgelu[plot]'")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = ["fastgelu", "torch", "onnxruntime", "numpy"]
    keys = list(results)
    fig, ax = plt.subplots(figsize=(11, 5))
    width = 0.2
    for j, name in enumerate(names):
        vals = [results[k].get(name, 0.0) for k in keys]
        if any(vals):
            ax.bar([i + j * width for i in range(len(keys))], vals, width, label=name)
    ax.set_xticks([i + 1.5 * width for i in range(len(keys))])
    ax.set_xticklabels([" ".join(str(p) for p in (k[0], k[1], np.dtype(k[2]).name, f"{k[3]:,}", f"randn*{k[4]}"))
                        for k in keys],
                       rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("Gelem/s (higher is better)")
    ax.set_yscale("log")
    ax.set_title("GELU throughput on this machine")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
