#!/usr/bin/env python3
"""The speed targets as one table: every ISA build this CPU runs, 1 and 2 threads, three input spreads.

  python tools/speed_table.py                 # all builds, markdown table on stdout
  python tools/speed_table.py --isa avx2      # one build
  python tools/speed_table.py --rounds 9      # more rounds per figure
  python tools/speed_table.py --isa avx2 --repeat 3 --csv docs/data/speed-zen3.csv   # a docs/data table

Each (build, threads) pair runs in its own spawned process (the build is chosen at import, the thread
count before the first parallel call); inside it fastgelu and its competitor run on the same arrays, so
each ratio is taken in one process -- but at more than one thread ONNX Runtime's FastGelu is timed in a
process of its own, right after: its intra-op workers spin between runs and put a parallel library's calls
beside them on fewer threads (docs/threads.md). Ratios above 1 mean fastgelu is faster. Spreads: randn sigma=1, randn
sigma=3, uniform(-8, 8) (the gated rows, gelu_mul against PyTorch eager F.gelu(gate) * up: randn only).
PyTorch is held to the same ISA level as the fastgelu build (ATEN_CPU_CAPABILITY; for AVX2 also
ONEDNN_MAX_CPU_ISA, which its exact GELU follows).
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys

SPREADS = ("s1", "s3", "u8")
N = 262144


def _inputs(n, dtype, spread, seed=0):
    import numpy as np
    rng = np.random.default_rng(seed)
    if spread == "u8":
        x = rng.uniform(-8, 8, n).astype(np.float32)
    else:
        x = rng.standard_normal(n, dtype=np.float32) * (3.0 if spread == "s3" else 1.0)
    dy = rng.standard_normal(n, dtype=np.float32)
    return x.astype(dtype), dy.astype(dtype)


def ort_child(threads, rounds):
    """Runs in a spawned process of its own: ONNX Runtime's FastGelu on the tanh row's inputs, as JSON."""
    import numpy as np

    import fastgelu
    from fastgelu.bench import speed
    fastgelu.set_num_threads(threads)           # the session takes its thread count from it
    res = {}
    for spread in SPREADS:
        x, _ = _inputs(N, np.float32, spread)
        oc = speed.ort_fastgelu(x)
        if oc is None:
            break
        res[f"tanh-fwd-f32-{spread}"] = {"onnxruntime": N / speed.median_time(oc, rounds=rounds) / 1e9}
        del oc
    print(json.dumps(res))


def child(threads, rounds, ort=True):
    """Runs in the spawned process: a dict of figures, printed as JSON (ort: ONNX Runtime timed here too)."""
    import numpy as np

    import fastgelu
    from fastgelu import _api, ufuncs
    from fastgelu.bench import speed
    fastgelu.set_num_threads(threads)
    torch = speed._torch()
    if torch is not None:
        torch.set_num_threads(threads)
    res = {"isa": ufuncs.ISA, "threads": threads, "cpu": speed.cpu_name()}
    dtypes = [("f32", np.float32), ("f64", np.float64), ("f16", np.float16)]
    if ufuncs.BFLOAT16 is not None:
        dtypes.append(("bf16", ufuncs.BFLOAT16))
    cases = [("none", "fwd", "f32"), ("none", "grad", "f32"), ("tanh", "fwd", "f32"), ("tanh", "grad", "f32"),
             ("sigmoid", "fwd", "f32"), ("sigmoid", "grad", "f32"), ("none", "fwd", "f64"),
             ("none", "grad", "f64"), ("none", "fwd", "f16"), ("none", "fwd", "bf16")]
    types = dict(dtypes)
    for variant, direction, tname in cases:
        if tname not in types:
            continue
        for spread in SPREADS:
            x, dy = _inputs(N, types[tname], spread)
            out = np.empty_like(x)
            fwd, grad = _api.VARIANTS[variant]
            fg = (lambda: fwd(x, out=out)) if direction == "fwd" else (lambda: grad(x, dy, out=out))
            key = f"{variant}-{direction}-{tname}-{spread}"
            r = {"fastgelu": N / speed.median_time(fg, rounds=rounds) / 1e9}
            if torch is not None:
                tc = speed.torch_call(torch, variant, direction, x, dy)
                if tc is not None:
                    r["torch"] = N / speed.median_time(tc, rounds=rounds) / 1e9
            if ort and (variant, direction, tname) == ("tanh", "fwd", "f32"):
                oc = speed.ort_fastgelu(x)
                if oc is not None:
                    r["onnxruntime"] = N / speed.median_time(oc, rounds=rounds) / 1e9
                    del oc
                    speed.settle()
            res[key] = r
    # the gated forward against PyTorch eager F.gelu(gate, approximate=...) * up (issue 42's row; randn only)
    for variant in ("none", "tanh"):
        for spread in ("s1", "s3"):
            gate, up, dy = speed.gated_inputs(N, np.float32, sigma=3 if spread == "s3" else 1)
            r = {"fastgelu": N / speed.median_time(speed.gated_fastgelu(variant, "mul", gate, up, dy),
                                                    rounds=rounds) / 1e9}
            if torch is not None:
                r["torch"] = N / speed.median_time(speed.gated_torch(torch, variant, "mul", gate, up, dy),
                                                    rounds=rounds) / 1e9
            res[f"{variant}-mul-f32-{spread}"] = r
    big = 1 << 26
    for spread in ("s1", "s3"):
        x, _ = _inputs(big, np.float32, spread)
        o = np.empty_like(x)
        t_fg = speed.median_time(lambda: ufuncs.gelu(x, out=o), rounds=max(3, rounds // 2))
        t_floor = speed.median_time(lambda: np.multiply(x, 1, out=o), rounds=max(3, rounds // 2))
        res[f"64M-{spread}"] = {"fastgelu": big / t_fg / 1e9, "floor": big / t_floor / 1e9}
        del x, o
    x, _ = _inputs(3072, np.float32, "s1")
    t_fg = speed.in_place_time(ufuncs.gelu, x, rounds=rounds)
    t_tanh = speed.in_place_time(np.tanh, x, rounds=rounds)
    res["3072-inplace"] = {"fastgelu_us": t_fg * 1e6, "tanh_us": t_tanh * 1e6}
    print(json.dumps(res))


def run(isa, threads, rounds):
    # PyTorch runs the kernels it would pick on a CPU with only that ISA, so the AVX2 build is compared with
    # PyTorch's AVX2 kernels (its oneDNN ones too), as on an AVX2-only machine
    from fastgelu.bench import speed
    env = speed.torch_isa_env(isa, dict(os.environ, FASTGELU_ISA=isa))

    def spawn(*flags):
        out = subprocess.run([sys.executable, __file__, "--child", str(threads), "--rounds", str(rounds), *flags],
                             env=env, check=True, capture_output=True, text=True).stdout
        return json.loads(out.strip().splitlines()[-1])
    if threads == 1:        # one intra-op thread: no worker pool to spin, so one process takes both
        return spawn()
    res = spawn("--no-ort")
    for key, r in spawn("--ort-only").items():
        res[key].update(r)
    return res


def table(results):
    lines = []
    spread_name = {"s1": "σ=1", "s3": "σ=3", "u8": "U(-8,8)"}
    head = "| build, threads | workload | vs | " + " | ".join(
        f"{spread_name[s]} Gelem/s | {spread_name[s]} ratio" for s in SPREADS) + " |"
    lines += [head, "|" + "---|" * (3 + 2 * len(SPREADS))]
    for res in results:
        tag = f"{res['isa']}, {res['threads']}T"
        for key in sorted({k.rsplit("-", 1)[0] for k in res if k.count("-") == 3}, key=_order):
            other = "onnxruntime" if key == "tanh-fwd-f32" else "torch"
            cells = []
            for s in SPREADS:
                r = res.get(f"{key}-{s}", {})
                ratio = f"{r.get(f'ratio_{other}', r['fastgelu'] / r[other] if other in r else 0):.2f}x" \
                    if other in r else "-"
                cells += [f"{r['fastgelu']:.2f}" if r else "-", ratio]
            lines.append(f"| {tag} | {key} | {other} | " + " | ".join(cells) + " |")
        for s in ("s1", "s3"):
            r = res[f"64M-{s}"]
            lines.append(f"| {tag} | f32 exact fwd 64M {spread_name[s]} | memory floor | "
                         f"{r['fastgelu']:.2f} | {r.get('ratio_floor', r['fastgelu'] / r['floor']):.2f}x "
                         f"(floor {r['floor']:.2f}) |"
                         + " |" * (2 * len(SPREADS) - 2))
        r = res["3072-inplace"]
        lines.append(f"| {tag} | 3,072 in place | np.tanh time | {r['fastgelu_us']:.2f} us | "
                     f"{r['fastgelu_us'] / r['tanh_us']:.2f}x time ({r['tanh_us']:.2f} us) |"
                     + " |" * (2 * len(SPREADS) - 2))
    return "\n".join(lines)


def _order(key):
    variants = ["none-fwd-f32", "none-grad-f32", "tanh-fwd-f32", "tanh-grad-f32", "sigmoid-fwd-f32",
                "sigmoid-grad-f32", "none-mul-f32", "tanh-mul-f32", "none-fwd-f64", "none-grad-f64",
                "none-fwd-f16", "none-fwd-bf16"]
    return variants.index(key) if key in variants else len(variants)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--isa", help="one build (default: every build this CPU runs)")
    ap.add_argument("--threads", default="1,2", help="thread counts, comma-separated (default 1,2)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--json", help="also write the raw figures to this file")
    ap.add_argument("--repeat", type=int, default=1, help="runs of the whole table; each figure their median")
    ap.add_argument("--csv", help="also write the table in docs/data's format (short CPU name: $SPEED_CPU_SHORT)")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--no-ort", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--ort-only", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        if args.ort_only:
            ort_child(args.child, args.rounds)
        else:
            child(args.child, args.rounds, ort=not args.no_ort)
        return
    from fastgelu import _dispatch
    isas = [args.isa] if args.isa else [i for i in _dispatch.available() if i != "generic"]
    runs = [[run(isa, int(t), args.rounds) for isa in isas for t in args.threads.split(",")]
            for _ in range(args.repeat)]
    results = [median_result(rs) for rs in zip(*runs)]
    print(f"CPU: {results[0]['cpu']}; N = {N:,} elements unless named; ratios = fastgelu / other"
          + (f"; each figure the median of {args.repeat} runs" if args.repeat > 1 else "") + "\n")
    print(table(results))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    if args.csv:
        write_csv(results, args.csv, args.repeat, args.rounds)


def median_result(rs):
    """Each figure of one (build, threads) the median over repeated runs; a ratio from each run's own
    figures, not from two medians."""
    import numpy as np
    out = dict(rs[0])
    for key, r in rs[0].items():
        if isinstance(r, dict):
            out[key] = {k: float(np.median([x[key][k] for x in rs])) for k in r}
            for other in ("torch", "onnxruntime", "floor"):
                if other in r:
                    out[key][f"ratio_{other}"] = float(np.median([x[key]["fastgelu"] / x[key][other] for x in rs]))
    return out


CSV_NAMES = {"none-fwd": "gelu", "none-grad": "gelu_grad", "tanh-fwd": "gelu_tanh", "tanh-grad": "gelu_tanh_grad",
             "sigmoid-fwd": "gelu_sigmoid", "sigmoid-grad": "gelu_sigmoid_grad", "none-mul": "gelu_mul",
             "tanh-mul": "gelu_tanh_mul"}
CSV_DTYPES = {"f32": "float32", "f64": "float64", "f16": "float16", "bf16": "bfloat16"}


def write_csv(results, path, repeat, rounds):
    """The docs/data table format (tools/plot_speed.py and tools/doc_tables.py read it): randn sigma 1 and 3
    and U(-8, 8) (sigma "u8"), 256K and 64M; its header names the CPU's default build and the kernel
    generation of each build measured."""
    import datetime
    import subprocess as sp
    import numpy as np
    import fastgelu
    from fastgelu import _dispatch
    commit = sp.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    # the kernels measured, by the generation docs/data/kernels.txt gives each build (tools/doc_tables.py)
    kernels = pathlib.Path(__file__).resolve().parent.parent / "docs" / "data" / "kernels.txt"
    generation = dict(ln.split() for ln in kernels.read_text().splitlines() if ln.strip() and ln[0] != "#")
    onnx = torch = "-"
    try:
        import torch as t
        torch = t.__version__.split("+")[0]
        import onnxruntime as o
        onnx = o.__version__
    except ImportError:
        pass
    lines = [f"# fastgelu speed, written by tools/speed_table.py --csv (fastgelu {fastgelu.__version__})",
             f"# cpu: {results[0]['cpu']}, {os.cpu_count()} cores",
             f"# short: {os.environ.get('SPEED_CPU_SHORT', results[0]['cpu'])}",
             f"# date: {datetime.date.today()}; commit: {commit}; PyTorch {torch} (CPU wheel), ONNX Runtime {onnx}",
             f"# default: {_dispatch.available()[0]}; kernels: "
             + ", ".join(f"{isa} {generation[isa]}" for isa in dict.fromkeys(r["isa"] for r in results)),
             f"# command: python tools/speed_table.py --rounds {rounds} --repeat {repeat}  (each cell the median "
             f"of {repeat} runs)",
             "# gelem_s: fastgelu's 10^9 elements per second; ratio: fastgelu's speed over the named competitor's "
             "(blank: none)",
             "function,dtype,elements,vs,build,threads,sigma,gelem_s,ratio"]
    rows = []
    for res in results:
        for key, r in res.items():
            if not isinstance(r, dict) or key.count("-") != 3:
                continue
            variant, direction, tname, spread = key.split("-")
            other = "onnxruntime" if (variant, direction) == ("tanh", "fwd") else "torch"
            vs = {"onnxruntime": "ONNX Runtime FastGelu", "torch": "PyTorch"}[other] if other in r else ""
            ratio = f"{r[f'ratio_{other}']:.2f}" if other in r else ""
            rows.append((list(CSV_NAMES).index(f"{variant}-{direction}"), list(CSV_DTYPES).index(tname),
                         f"{CSV_NAMES[variant + '-' + direction]},{CSV_DTYPES[tname]},{N},{vs},{res['isa']},"
                         f"{res['threads']},{spread[1] if spread != 'u8' else spread},{r['fastgelu']:.2f},{ratio}"))
        for s in ("s1", "s3"):
            r = res[f"64M-{s}"]
            rows.append((99, 0, f"gelu,float32,{1 << 26},memory floor,{res['isa']},{res['threads']},{s[1]},"
                                f"{r['fastgelu']:.2f},{r['ratio_floor']:.2f}"))
    rows.sort(key=lambda t: (t[1] if t[0] != 99 else 9, t[0]))
    with open(path, "w") as f:
        f.write("\n".join(lines + [r for _, _, r in rows]) + "\n")


if __name__ == "__main__":
    main()
