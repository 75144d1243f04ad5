#!/usr/bin/env python3
"""Issue 42's float32 workloads through the package's own calls, timed as tools/bound_f32.py times its kernels:
single calls, the contenders' order shuffled every round, each figure the 5th percentile of its samples (the
closest a busy or virtual machine gets to each contender's own speed; the speed table's medians of batched
calls did not hold still on the 16-core device machine: docs/performance.md), for every build and thread
count, 256K float32:

  python tools/p5_table.py                        # every build this CPU runs, 1 and 2 threads
  python tools/p5_table.py --isa avx2 --rounds 150

Each (build, threads) pair runs in a spawned process of its own (the build is chosen at import), with PyTorch
held to the build's ISA and given as many threads.  At one thread all contenders share that process, so each
ratio is taken in one process.  At more, fastgelu, PyTorch and ONNX Runtime's FastGelu (the tanh form's
competitor) each run in a process of their own, one after the other: a library's workers spin for a while
after its call and take the cores from the next call of another (docs/threads.md), and fastgelu's threads
policy then backs off to fewer threads, as it should in a user's busy process but not in a measure of its
speed; those ratios are taken across processes.
Ratios above 1 mean fastgelu is faster.  gelu_mul is compared with PyTorch eager F.gelu(gate) * up.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SPREADS = ("σ=1", "σ=3", "U(-8,8)")
# (row, fastgelu call, competitor): the competitor "torch" or "ort"; gated rows at randn spreads only
ROWS = (("exact forward", "gelu", "torch"), ("exact gradient", "gelu_grad", "torch"),
        ("tanh forward", "gelu_tanh", "ort"), ("gelu_mul exact", "mul_none", "torch"),
        ("gelu_mul tanh", "mul_tanh", "torch"))


def child(threads, rounds, n, which):
    """In the spawned process: {key: p5 ns an element} as JSON.  which: "all", "fastgelu", "torch" or "ort"."""
    import numpy as np

    import fastgelu
    from fastgelu.bench import speed
    fastgelu.set_num_threads(threads)          # ONNX Runtime's session takes its thread count from it
    torch = speed._torch() if which in ("all", "torch") else None
    if torch is not None:
        torch.set_num_threads(threads)
    rng = np.random.default_rng(0)
    xs = {"σ=1": rng.standard_normal(n, dtype=np.float32), "σ=3": 3 * rng.standard_normal(n, dtype=np.float32),
          "U(-8,8)": rng.uniform(-8, 8, n).astype(np.float32)}
    dy = rng.standard_normal(n, dtype=np.float32)
    up = rng.standard_normal(n, dtype=np.float32)
    y = np.empty(n, np.float32)
    calls = {}
    for s, x in xs.items():
        if which in ("all", "fastgelu"):
            calls["gelu", s, "fastgelu"] = lambda x=x: fastgelu.gelu(x, out=y)
            calls["gelu_grad", s, "fastgelu"] = lambda x=x: fastgelu.gelu_grad(x, dy, out=y)
            calls["gelu_tanh", s, "fastgelu"] = lambda x=x: fastgelu.gelu(x, approximate="tanh", out=y)
            if s != "U(-8,8)":
                for v in ("none", "tanh"):
                    calls["mul_" + v, s, "fastgelu"] = speed.gated_fastgelu(v, "mul", x, up, dy)
        if torch is not None:
            calls["gelu", s, "torch"] = speed.torch_call(torch, "none", "fwd", x, dy)
            calls["gelu_grad", s, "torch"] = speed.torch_call(torch, "none", "grad", x, dy)
            if s != "U(-8,8)":
                for v in ("none", "tanh"):
                    calls["mul_" + v, s, "torch"] = speed.gated_torch(torch, v, "mul", x, up, dy)
        if which in ("all", "ort"):
            o = speed.ort_fastgelu(x)
            if o is not None:
                calls["gelu_tanh", s, "ort"] = o
    p = speed.shuffled_percentiles(calls, rounds, n)
    print(json.dumps({"|".join(k): v for k, v in p.items()}))


def run(isa, threads, rounds, n):
    from fastgelu.bench import speed
    env = speed.torch_isa_env(isa, dict(os.environ, FASTGELU_ISA=isa))

    def spawn(which):
        out = subprocess.run([sys.executable, __file__, "--child", str(threads), "--rounds", str(rounds), "-n", str(n),
                              "--which", which], env=env, check=True, capture_output=True, text=True).stdout
        return json.loads(out.strip().splitlines()[-1])
    if threads == 1:        # one intra-op thread: no worker pool to spin, so one process takes them all
        return spawn("all")
    return {**spawn("fastgelu"), **spawn("torch"), **spawn("ort")}


def table(results):
    """Markdown: one line per (build, threads), a cell per row and spread: ratio (fastgelu's ns an element)."""
    head = [f"{label} {s}" for label, name, _ in ROWS for s in SPREADS if not (name.startswith("mul") and s[0] == "U")]
    lines = ["| build, threads | " + " | ".join(head) + " |", "|---|" + "---|" * len(head)]
    for (isa, threads), p in results:
        cells = []
        for label, name, comp in ROWS:
            for s in SPREADS:
                if name.startswith("mul") and s[0] == "U":
                    continue
                fg, c = p.get(f"{name}|{s}|fastgelu"), p.get(f"{name}|{s}|{comp}")
                cells.append("-" if fg is None else f"{c / fg:.2f}x ({fg:.3f})" if c else f"- ({fg:.3f})")
        lines.append(f"| {isa}, {threads}T | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--isa", help="one build (default: every build this CPU runs)")
    ap.add_argument("--threads", default="1,2", help="thread counts, comma-separated")
    ap.add_argument("--rounds", type=int, default=150)
    ap.add_argument("-n", type=int, default=1 << 18)
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--which", default="all", help=argparse.SUPPRESS)
    a = ap.parse_args()
    try:                    # the installed package, else this checkout's (built in place)
        import fastgelu  # noqa: F401
    except ImportError:
        sys.path.insert(0, os.path.join(HERE, ".."))
    if a.child:
        return child(a.child, a.rounds, a.n, a.which)
    from fastgelu import _dispatch
    from fastgelu.bench import speed
    isas = [a.isa] if a.isa else [i for i in _dispatch.available() if i != "generic"]
    threads = [int(t) for t in a.threads.split(",")]
    results = [((isa, t), run(isa, t, a.rounds, a.n)) for isa in isas for t in threads]
    print(f"CPU: {speed.cpu_name()}; {a.n} float32; p5 of {3 * a.rounds} shuffled single calls; ratio = the "
          "competitor's time over fastgelu's (fastgelu's ns an element)\n")
    print(table(results))


if __name__ == "__main__":
    main()
