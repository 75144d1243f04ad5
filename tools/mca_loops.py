#!/usr/bin/env python3
"""What LLVM's machine models say of the float32 kernels' inner loops, for CPUs not at hand (issue 42: an
Intel figure where only an AMD machine ran, said as a model): the loops of a kernel function as compiled
from the package's headers (tools/gelu_f32_kernel.py's build, -O3 as setup.py builds), each run through
llvm-mca for each -mcpu, in cycles an iteration of the loop and cycles a vector (the loop's table lookups
over the kernel's lookups a vector):

  python tools/mca_loops.py fg_f_gelu_grad_block                        # the AVX2 gradient's loops
  python tools/mca_loops.py fg_f_gelu_block fg_f_tanh_block --mcpu alderlake,znver3
  python tools/mca_loops.py fg_f_gelu_grad_block --cflags "old=-iquote /tmp/old/fastgelu/src"   # an A/B

Kernel functions: fg_f_gelu_block, fg_f_gelu_grad_block (exact form), fg_f_tanh_block, fg_f_tanh_grad_block,
fg_f_sig_block, fg_f_sig_grad_block. The loops listed are those whose table lookups (vpermps, vpermt2ps)
are a whole number of vectors' (one central form a vector), smallest first: the driver's chunk loops, a vector
an iteration (PUSHED chunks, a chunk's last vectors) or two (AVX2's SUMMED and LISTED chunks: two vectors a
cache line). llvm-mca times the loop body as straight-line code, its back branch taken, with
no cache misses: a model of the loop's throughput, not a measurement.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def find_mca():
    """llvm-mca on PATH, or the newest llvm-mca-N"""
    if shutil.which("llvm-mca"):
        return "llvm-mca"
    found = sorted((int(m.group(1)), name) for d in os.environ.get("PATH", "").split(os.pathsep) if os.path.isdir(d)
                   for name in os.listdir(d) for m in [re.fullmatch(r"llvm-mca-(\d+)", name)] if m)
    return found[-1][1] if found else None


def loop_body(path, func, start, n):
    """The n instructions from address start of func (objdump, AT&T), the back branch left out"""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", path], capture_output=True, text=True,
                         check=True).stdout
    body, on = [], False
    for line in out.splitlines():
        m = re.match(r"^([0-9a-f]+) <(.+)>:$", line)
        if m:
            on = m.group(2) == func
            continue
        if on and "\t" in line:
            addr, ins = line.split(":", 1)
            if int(addr, 16) >= start:
                body.append(re.sub(r"\s+<.*>$", "", ins.strip()))
    return body[:n - 1]


def model(mca, asm, mcpu, iterations=200):
    """cycles an iteration by llvm-mca's model of mcpu"""
    r = subprocess.run([mca, f"-mcpu={mcpu}", f"-iterations={iterations}"], input="\n".join(asm),
                       capture_output=True, text=True, check=True).stdout
    return int(re.search(r"Total Cycles:\s+(\d+)", r).group(1)) / iterations


def lookups_a_vector(func, isa):
    """table lookups a vector in the central form of func (the kernels' degree + 1, and L where the table
    holds it): from the header the build compiles"""
    sys.path.insert(0, HERE)
    from fit_gelu_f32 import CENTRAL, entry_points
    cfg = CENTRAL[isa][entry_points()[func]]
    return cfg["deg"] + 1 + (0 if cfg.get("H") else 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("funcs", nargs="+")
    ap.add_argument("--isa", choices=("avx2", "avx512"), default="avx2")
    ap.add_argument("--mcpu", default="alderlake,sapphirerapids,znver3")
    ap.add_argument("--loops", type=int, default=8, help="the smallest loops of whole vectors' lookups, per function")
    ap.add_argument("--cflags", nargs="*", default=[], metavar="TAG=FLAGS",
                    help="also model the kernels built with these flags (an edited copy of the headers: "
                         "-iquote DIR)")
    a = ap.parse_args()
    mca = find_mca()
    if mca is None:
        print("mca_loops.py needs llvm-mca (Debian: apt-get install llvm)", file=sys.stderr)
        return 2
    sys.path.insert(0, HERE)
    import gelu_f32_kernel as gk
    import loop_insns
    opt = ["-O3", "-fno-math-errno"]
    builds = [("package", opt)] + [(tag, opt + flags.split()) for tag, _, flags in
                                   (spec.partition("=") for spec in a.cflags)]
    cpus = a.mcpu.split(",")
    print(f"{mca}; {a.isa} kernels; cycles an iteration / a vector, by each -mcpu's model")
    print("| build | function | loop (instructions, lookups) | " + " | ".join(cpus) + " |")
    print("|---|---|---|" + "---|" * len(cpus))
    for tag, flags in builds:
        path = gk.build(a.isa, flags)
        for func in a.funcs:
            per = lookups_a_vector(func, a.isa)
            found = sorted((t for t in loop_insns.loops("objdump", path, func) if t[1] >= per and t[1] % per == 0),
                           key=lambda t: t[0])
            for n, lookups, _, start in found[:a.loops]:
                asm = loop_body(path, func, start, n)
                vectors = lookups / per
                cells = []
                for cpu in cpus:
                    c = model(mca, asm, cpu)
                    cells.append(f"{c:.1f} / {c / vectors:.1f}")
                print(f"| {tag} | {func} | {start:#x} ({n}, {lookups}) | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
