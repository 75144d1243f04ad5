#!/usr/bin/env python3
"""Whether two builds compiled the same code: the functions of two ELF files (shared objects or objects)
compared instruction by instruction, modulo addresses and symbol names, so that a rename or a moved table
shows as the same code and any other change as a difference:

  python tools/same_code.py before.so after.so                   # the functions named alike in both
  python tools/same_code.py before.so after.so gelu_all gelu_grad_all
  python tools/same_code.py before.so after.so gx_f_cperm_init=fg_f_cperm_init     # a root renamed
  python tools/same_code.py --objdump aarch64-linux-gnu-objdump before.o after.o

From each root (a function of that name in both files: the names given, else every function symbol the
two share) the comparison follows the calls: the k-th function first called from a pair is paired with the
k-th of the other side, whatever its name, and compared in turn.  An operand that addresses memory by the
instruction pointer (x86 rip-relative; Arm adrp + offset) is compared by what it reads: the bytes of the
data object it falls in (and the offset), or, outside any object (a constant pool), as many bytes as the
operand's width.  Jumps inside a function compare by offset from its start; calls through the PLT by name.
Exit status 1 when a pair differs (or a root is missing), with the first differing instructions shown.
"""
import argparse
import bisect
import hashlib
import re
import struct
import subprocess
import sys


class Elf:
    """sections and symbols of an ELF64 little-endian file, enough to read the bytes at an address"""

    def __init__(self, path):
        self.path = path
        self.data = open(path, "rb").read()
        d = self.data
        if d[:4] != b"\x7fELF" or d[4] != 2:
            raise SystemExit(f"{path}: not an ELF64 file")
        shoff, = struct.unpack_from("<Q", d, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", d, 0x3A)
        secs = [struct.unpack_from("<IIQQQQIIQQ", d, shoff + k * shentsize) for k in range(shnum)]
        strtab = secs[shstrndx]

        def name(tab, off):
            start = tab[4] + off
            return d[start:d.index(b"\0", start)].decode()
        self.sections = []       # (name, addr, file offset, size, type, index)
        for k, s in enumerate(secs):
            self.sections.append((name(strtab, s[0]), s[3], s[4], s[5], s[1], k))
        self.objects = []        # (addr, size, name, section index): data symbols with a size
        self.relocatable = struct.unpack_from("<H", d, 0x10)[0] == 1
        for s in secs:
            if s[1] != 2:        # SHT_SYMTAB
                continue
            names = secs[s[6]]
            for k in range(s[5] // 24):
                st_name, st_info, _, st_shndx, st_value, st_size = struct.unpack_from("<IBBHQQ", d, s[4] + k * 24)
                if st_info & 0xF == 1 and st_size:          # STT_OBJECT
                    self.objects.append((st_value, st_size, name(names, st_name), st_shndx))
        self.objects.sort()
        self.starts = [o[0] for o in self.objects]
        self.digests = {}

    def section_at(self, addr):
        for sec in self.sections:
            if sec[1] <= addr < sec[1] + sec[3] and sec[1] and sec[4] != 8:   # allocated, not NOBITS
                return sec
        return None

    def read(self, addr, n, sec=None):
        sec = sec or self.section_at(addr)
        if sec is None:
            return None
        off = sec[2] + addr - sec[1]
        return self.data[off:off + min(n, sec[1] + sec[3] - addr)]

    def content(self, addr, width, sym=None):
        """what an operand at addr reads: its data object's bytes and the offset, else width bytes"""
        if self.relocatable:            # every section's objects from address 0: the symbol tells them apart
            found = [o for o in self.objects if o[2] == sym and o[0] <= addr < o[0] + o[1]]
        else:
            k = bisect.bisect_right(self.starts, addr)
            found = [o for o in self.objects[max(0, k - 8):k] if o[0] <= addr < o[0] + o[1]]
        for a, size, name, shndx in found[-1:]:
                sec = self._sec(shndx)
                if sec is None or sec[4] == 8:              # NOBITS (.bss): no bytes in the file
                    return f"bss:{size}+{addr - a}"
                if (a, size) not in self.digests:
                    self.digests[a, size] = hashlib.sha1(self.read(a, size, sec) or b"").hexdigest()[:12]
                return f"obj:{self.digests[a, size]}+{addr - a}"
        b = self.read(addr, width)
        return f"data:{b.hex() if b is not None else '?'}"

    def _sec(self, shndx):
        return self.sections[shndx] if shndx < len(self.sections) else None


FUNC = re.compile(r"^([0-9a-f]+) <(.+)>:$")
TARGET = re.compile(r"\b([0-9a-f]+) <([^>]+)>")
WIDTH = (("zmm", 64), ("ymm", 32), ("xmm", 16))


def functions(objdump, path):
    """{name: [(address, instruction text)]} from objdump -d"""
    out = subprocess.run([objdump, "-d", "-w", "--no-show-raw-insn", path], capture_output=True, text=True,
                         check=True).stdout
    funcs, cur = {}, None
    for line in out.splitlines():
        m = FUNC.match(line)
        if m:
            cur = funcs.setdefault(m.group(2), [])
            continue
        if cur is not None and re.match(r"^\s+[0-9a-f]+:\t", line):
            addr, ins = line.split(":", 1)
            ins = ins.strip()
            if ins and not ins.startswith("(bad)"):
                cur.append((int(addr, 16), ins))
    return funcs


def operand_width(ins):
    """bytes an x86 memory operand reads, from the instruction's registers and mnemonic"""
    op = ins.split()[0]
    if "{1to" in ins or op.startswith(("vbroadcastss", "vpbroadcastd")) or op.endswith("ss") and "ps" not in op:
        return 4
    if op.startswith(("vbroadcastsd", "vpbroadcastq", "vmovsd", "vmovq")) or op.endswith("sd"):
        return 8
    for reg, n in WIDTH:
        if "%" + reg in ins:
            return n
    return 8


def arm_width(ins):
    m = re.match(r"ld\w*\s+([qdsbhwx])\d+", ins)
    return {"q": 16, "d": 8, "s": 4, "h": 2, "b": 1, "w": 4, "x": 8}[m.group(1)] if m else 16


class Pairing:
    """callees of the two sides paired in the order they are first met"""

    def __init__(self):
        self.ids_a, self.ids_b, self.queue = {}, {}, []

    def pair(self, a, b):
        ia, ib = self.ids_a.get(a), self.ids_b.get(b)
        if ia is None and ib is None:
            ia = ib = len(self.ids_a)
            self.ids_a[a], self.ids_b[b] = ia, ia
            self.queue.append((a, b))
        return f"F{ia}" if ia == ib else None


def normalize(elf, name, body, callee):
    """the instructions of one function, addresses and names replaced (callee(name) -> token)"""
    if not body:
        return []
    start, end = body[0][0], body[-1][0]
    out, pages = [], {}
    for addr, ins in body:
        ins = re.sub(r"\s+", " ", ins)
        m = re.search(r"#\s*([0-9a-f]+)(?: <([^>]*)>)?$", ins)
        if m and "(%rip)" in ins:                      # x86 rip-relative: what it reads
            target = int(m.group(1), 16)
            sym = m.group(2).split("+")[0] if m.group(2) else None
            ins = re.sub(r"-?0x[0-9a-f]+\(%rip\)", "(%rip)", ins[:m.start()].rstrip())
            ins += " ; " + elf.content(target, operand_width(ins), sym)
        elif re.match(r"adrp\s", ins):                 # Arm: the page, resolved by the add or load that uses it
            t = TARGET.search(ins)
            reg = ins.split()[1].rstrip(",")
            pages[reg] = int(t.group(1), 16) if t else None
            ins = f"adrp {reg}, PAGE"
        else:
            pm = re.match(r"(add)\s+(.*?)\b(x\d+), #(0x[0-9a-f]+|\d+)", ins) or \
                re.match(r"(ldr|ldp|ld1|ldrsw|ldrb|ldrh)\s+(.*?)\[(x\d+)(?:, #(0x[0-9a-f]+|\d+))?\]", ins)
            dest = re.match(r"(?!st|cmp|cmn|tst|b|cb|tb|ret|prfm)\w+(?:\.\w+)? ([xw]\d+)\b", ins)
            if pm and pages.get(pm.group(3)) is not None:
                off = int(pm.group(4), 0) if pm.group(4) else 0
                target = pages[pm.group(3)] + off
                ins = re.sub(r"#(0x[0-9a-f]+|\d+)", "#OFF", re.sub(r"\s*//.*$", "", ins))
                ins += " ; " + elf.content(target, arm_width(ins))
                if dest:                               # an address formed from a page: followed on
                    pages["x" + dest.group(1)[1:]] = target if pm.group(1) == "add" else None
            else:
                if dest:                               # a register written otherwise: no longer a page
                    pages.pop("x" + dest.group(1)[1:], None)
                t = TARGET.search(ins)
                if t:
                    target, label = int(t.group(1), 16), t.group(2)
                    base = label.split("+")[0]
                    if start <= target <= end and base == name:
                        tok = f"L{target - start:x}"
                    elif "@plt" in label:
                        tok = base
                    else:
                        tok = callee(base)
                    ins = ins[:t.start()] + tok + ins[t.end():]
                ins = re.sub(r"\s*(#|//).*$", "", ins)
        out.append(ins)
    return out


def compare(a_path, b_path, roots, objdump):
    ea, eb = Elf(a_path), Elf(b_path)
    fa, fb = functions(objdump, a_path), functions(objdump, b_path)
    if not roots:
        roots = sorted(n for n in set(fa) & set(fb) if not n.endswith("@plt"))
    pairing = Pairing()
    for r in roots:
        x, _, y = r.partition("=")
        y = y or x
        if x not in fa or y not in fb:
            print(f"{x if x not in fa else y}: missing in {a_path if x not in fa else b_path}")
            return 1
        pairing.pair(x, y)
    bad = k = 0
    while k < len(pairing.queue):
        a, b = pairing.queue[k]
        k += 1
        side = []
        for elf, funcs, name in ((ea, fa, a), (eb, fb, b)):
            called = []

            def callee(n, called=called):
                called.append(n)
                return f"@{len(called) - 1}@"
            side.append((normalize(elf, name, funcs.get(name, []), callee), called))
        (la, ca), (lb, cb) = side
        # the calls, in the order met: paired, and the pair's token put in place on both sides
        ta, tb = [], []
        for x, y in zip(ca, cb):
            t = pairing.pair(x, y)
            ta.append(t or f"A:{x}")            # a call paired otherwise before: the two differ
            tb.append(t or f"B:{y}")
        ta += [f"A:{n}" for n in ca[len(cb):]]
        tb += [f"B:{n}" for n in cb[len(ca):]]

        def fill(lines, tokens):
            return [re.sub(r"@(\d+)@", lambda m: tokens[int(m.group(1))], line) for line in lines]
        la, lb = fill(la, ta), fill(lb, tb)
        label = a if a == b else f"{a} ~ {b}"
        if la == lb:
            print(f"same       {label} ({len(la)} instructions)")
            continue
        bad += 1
        print(f"DIFFERENT  {label} ({len(la)} against {len(lb)} instructions)")
        for j, (x, y) in enumerate(zip(la + [""] * len(lb), lb + [""] * len(la))):
            if x != y:
                print(f"    at {j}: {x}\n          {y}")
                break
    print(f"{len(pairing.queue)} functions compared, {bad} differ")
    return 1 if bad else 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("roots", nargs="*", help="functions to start from, NAME or BEFORE=AFTER (default: every name "
                    "both files have)")
    ap.add_argument("--objdump", default="objdump")
    a = ap.parse_args(argv)
    return compare(a.before, a.after, a.roots, a.objdump)


if __name__ == "__main__":
    sys.exit(main())
