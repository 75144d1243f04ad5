"""Instructions per element of the float32 kernels' inner loops, read from the compiled code (objdump): for
each loop of a function (a backward branch), its instruction count, its table lookups (x86 vpermps/vpermt2ps,
Arm tbl) and FMAs; with the vector width, instructions per element.  For comparing ISAs where the machine
itself cannot be timed (aarch64 under emulation):

  python tools/loop_insns.py fastgelu/_kernels_avx2.cpython-311-x86_64-linux-gnu.so fg_f_gelu_block 8
  python tools/loop_insns.py --objdump aarch64-linux-gnu-objdump <aarch64 .so> fg_f_gelu_block 4
"""
import argparse
import re
import subprocess


def loops(objdump, path, func):
    out = subprocess.run([objdump, "-d", "--no-show-raw-insn", path], capture_output=True, text=True,
                         check=True).stdout
    body, on = [], False
    for line in out.splitlines():
        m = re.match(r"^([0-9a-f]+) <(.+)>:$", line)
        if m:
            on = m.group(2) == func
            continue
        if on and "\t" in line:
            addr, ins = line.split(":", 1)
            body.append((int(addr, 16), ins.strip()))
    addrs = [a for a, _ in body]
    found = []
    for k, (a, ins) in enumerate(body):
        m = re.match(r"^(j\w+|b\.\w+|b|cbn?z|tbn?z)\s+.*?([0-9a-f]+) <", ins)
        if m and int(m.group(2), 16) < a and int(m.group(2), 16) >= addrs[0]:
            lo = addrs.index(int(m.group(2), 16)) if int(m.group(2), 16) in addrs else None
            if lo is None:
                continue
            seg = [i for _, i in body[lo:k + 1]]
            mn = [i.split()[0] for i in seg]
            found.append((len(seg), sum(x in ("vpermps", "vpermt2ps", "vpermi2ps", "tbl") for x in mn),
                          sum(x.startswith(("vfmadd", "vfmsub", "vfnmadd", "vfnmsub", "fmla", "fmls", "fmadd",
                                            "fmsub")) for x in mn), body[lo][0]))
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--objdump", default="objdump")
    ap.add_argument("--min-lookups", type=int, default=1, help="loops with at least this many table lookups")
    ap.add_argument("path")
    ap.add_argument("func")
    ap.add_argument("lanes", type=int)
    a = ap.parse_args()
    for n, perm, fma, start in sorted(loops(a.objdump, a.path, a.func), key=lambda t: t[3]):
        if perm >= a.min_lookups:
            print(f"loop at {start:#x}: {n} instructions, {perm} table lookups, {fma} FMAs per vector of "
                  f"{a.lanes}: {n / a.lanes:.2f} instructions per element")


if __name__ == "__main__":
    main()
