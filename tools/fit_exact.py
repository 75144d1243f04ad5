#!/usr/bin/env python3
"""Derive the polynomial coefficients of fastgelu/_gelu_exact_coeffs.pxi (exact GELU x*Phi(x) and its gradient).

Method: weighted minimax (Lawson's iteratively reweighted least squares) in a scaled monomial basis of the
variable the kernel evaluates, on Chebyshev-distributed nodes; function values from mpmath at 40
digits.  Coefficients are rounded to double and then refined: the residual of the *rounded* polynomial is
computed exactly (mpmath) and a correction polynomial is fitted to it, so rounding to double is part of the fit.

Fits (Phi = standard normal cdf, phi its density, a = |x|, s = x*x):
  central  (x in [-A, A]):  Phi(x)    = 1/2 + x*P(s)   weight |x| / Phi(-a)              (relative error of GELU)
                            GELU'(x)  = 1/2 + x*G(s)   weight |x| / max(Phi(-a), a*phi(a)) (grad metric)
  tail     R(a) = exp(a^2/2) * Phi(-a) (so Phi(-a) = exp(-a^2/2) R(a)), relative weight
  exp      exp(r) on |r| <= ln2/2, relative weight
Run: python tools/fit_exact.py            (prints Cython constant blocks + achieved errors)
     python tools/fit_exact.py --write fastgelu/_gelu_exact_coeffs.pxi [--reemit]
The float32 polynomials are emitted as E(s^2) + s*O(s^2) (two short chains), the float64 ones as Horner
for their first terms around that split of the rest (LEAD64).
"""
import re
import sys
import numpy as np
import mpmath as mp

mp.mp.dps = 40
SQRT2PI_INV = 1 / mp.sqrt(2 * mp.pi)


def Phi(x):
    return mp.ncdf(x)


def lawson(A, b, iters=200):
    """Coefficients c minimising max |A c - b| (Lawson's iteratively reweighted least squares)."""
    u = np.ones(len(b)) / len(b)
    best = None
    for _ in range(iters):
        su = np.sqrt(u)
        c, *_ = np.linalg.lstsq(A * su[:, None], b * su, rcond=None)
        e = A @ c - b
        m = np.max(np.abs(e))
        if best is None or m < best[1]:
            best = (c, m)
        u = u * np.abs(e) + 1e-300
        u /= u.sum()
    return best[0]


def minimax(f, w, var, lo, hi, deg, powers=1, npts=1500, refine=4, iters=120):
    """Minimise max |w(x) (p(var(x)) - f(x))| over x in [lo, hi]; p(v) = sum c_k v^k.
    f, w, var: functions of an mpf x.  Returns (double coefficients, max weighted error)."""
    th = np.linspace(0, np.pi, npts)
    xs = [mp.mpf(lo) + (mp.mpf(hi) - lo) * (1 - mp.cos(mp.mpf(t))) / 2 for t in th]
    vs = [var(x) for x in xs]
    fv = [f(x) for x in xs]
    wv = np.array([float(w(x)) for x in xs])
    vf = np.array([float(v) for v in vs])
    scale = float(max(abs(vf))) or 1.0
    V = np.vander(vf / scale, deg + 1, increasing=True)

    def weighted(r):
        return lawson(V * wv[:, None], r * wv, iters) / scale ** np.arange(deg + 1)

    c = np.zeros(deg + 1)
    for _ in range(refine + 1):
        # residual of the current double coefficients, exact
        r = np.array([float(fv[i] - mp.polyval([mp.mpf(float(ci)) for ci in c[::-1]], vs[i]))
                      for i in range(npts)])
        c = np.array([float(mp.mpf(float(ci)) + mp.mpf(float(di))) for ci, di in zip(c, weighted(r))])
    err = max(abs(float((mp.polyval([mp.mpf(float(ci)) for ci in c[::-1]], vs[i]) - fv[i]))) * wv[i]
              for i in range(npts))
    return c, err


def emit(name, c, err, note):
    print(f"# {note}; max weighted error {err:.3g}")
    print(f"# {name}: Horner coefficients, constant term first")
    for k, v in enumerate(c):
        print(f"DEF_{name}{k} = {float(v)!r}")
    print()



# ---------------------------------------------------------------- the fits
C = SQRT2PI_INV
half = mp.mpf(1) / 2
phi = lambda a: C * mp.exp(-a * a / 2)
R = lambda a: mp.exp(a * a / 2) * Phi(-a)                       # Phi(-a) = exp(-a^2/2) R(a)
T_a = lambda a: a * R(a)                                         # a*Phi(-a) = exp(-a^2/2) T
D_a = lambda a: R(a) - a * C                                     # Phi(-a) - a phi(a) = exp(-a^2/2) D
inv_sqrt = lambda w: 1 / mp.sqrt(w)
T_w = lambda w: T_a(inv_sqrt(w)) if w > 0 else C                 # T as a function of w = 1/a^2
U_w = lambda w: C - w * T_w(w)                                   # -D/a as a function of w
gmax = lambda a: max(Phi(-a), a * phi(a))                        # scale of the gradient metric

P32 = lambda x: (Phi(x) - half) / x
G32 = lambda x: (Phi(x) - half) / x + phi(x)
P1_64 = lambda x: ((Phi(x) - half) / x - C) / (x * x)
G1_64 = lambda x: ((Phi(x) - half) / x + phi(x) - 2 * C) / (x * x)
sq = lambda x: x * x

A0_32, HI_32 = 3.0, 15.0            # float32: central |x| <= 3, tail clamp 15 (GELU and grad are 0 there)
B1, B3, HI_64 = 1.25, 4.0, 40.0  # float64 pieces: central, [1.25, 4] (one polynomial), tail; clamp 40.
                                 # A wider central piece (no exp) leaves fewer inputs to the costlier ones
B1G = 1.0                        # the gradient's central piece: at 1.25 the G fit reached 4 ulp

# (name, variable of the Horner polynomial, function, weight, lo, hi, degree, note)
FITS = [
    ("P32", "s", P32, lambda x: x / Phi(-x), sq, 1e-3, A0_32, 10,
     "float32 central: Phi(x) = 1/2 + x*P(s), s = x^2, |x| <= 3; weight = relative error of GELU"),
    ("G32", "s", G32, lambda x: x / gmax(x), sq, 1e-3, A0_32, 11,
     "float32 central: GELU'(x) = 1/2 + x*G(s), |x| <= 3; weight = gradient metric"),
    ("T32", "w", T_w, lambda w: 1 / T_w(w), lambda w: w, mp.mpf(1) / HI_32 ** 2, mp.mpf(1) / A0_32 ** 2, 8,
     "float32 tail, a = |x| in [3, 15], w = 1/a^2: a*Phi(-a) = exp(-a^2/2)*T(w)"),
    ("U32", "w", U_w, lambda w: 1 / U_w(w), lambda w: w, mp.mpf(1) / HI_32 ** 2, mp.mpf(1) / A0_32 ** 2, 7,
     "float32 tail: Phi(-a) - a*phi(a) = -a*exp(-a^2/2)*U(w)"),
    ("P64", "s", P1_64, lambda x: x ** 3 / Phi(-x), sq, 1e-3, B1, 11,
     "float64 central |x| <= 1.25: Phi(x) = 1/2 + C*x + x*s*P(s), C = 1/sqrt(2pi) in double-double"),
    ("G64", "s", G1_64, lambda x: x ** 3 / gmax(x), sq, 1e-3, B1G, 10,
     "float64 central |x| <= 1: GELU'(x) = 1/2 + 2C*x + x*s*G(s)"),
    ("T64m", "d", T_a, lambda a: 1 / T_a(a), lambda a: a - mp.mpf(2.5), B1, B3, 21,
     "float64 a in [1.25, 4], d = a - 2.5 (exact): a*Phi(-a) = exp(-a^2/2)*T(d)"),
    ("D64m", "d", D_a, lambda a: 1 / gmax(a) * mp.exp(-a * a / 2), lambda a: a - mp.mpf(2.5), B1G, B3, 22,
     "float64 a in [1, 4]: Phi(-a) - a*phi(a) = exp(-a^2/2)*D(d)"),
    ("T64t", "w", T_w, lambda w: 1 / T_w(w), lambda w: w, mp.mpf(1) / HI_64 ** 2, mp.mpf(1) / B3 ** 2, 23,
     "float64 tail a in [4, 40], w = 1/a^2"),
    ("U64t", "w", U_w, lambda w: 1 / U_w(w), lambda w: w, mp.mpf(1) / HI_64 ** 2, mp.mpf(1) / B3 ** 2, 20,
     "float64 tail: Phi(-a) - a*phi(a) = -a*exp(-a^2/2)*U(w)"),
]


def horner(var, c):
    expr = repr(float(c[-1]))
    for ck in c[-2::-1]:
        expr = f"{float(ck)!r} + {var} * ({expr})"
    return expr


def even_odd(var, c):
    """Cython statements and expression for sum c[k] var^k as E(var^2) + var*O(var^2), each half by Horner:
    two independent chains half as deep as one Horner chain, for one extra multiply (a single Horner chain
    of 11 dependent fmas leaves the FMA units idle half the time: the loops are latency-bound)."""
    v2 = f"{var}2"
    return [f"cdef double {v2} = {var} * {var}"], f"{horner(v2, c[0::2])} + {var} * ({horner(v2, c[1::2])})"


LEAD64 = 3      # float64: c0 .. c2 by Horner, where the rounding is the result's, around E + var*O of the rest


def lead_even_odd(var, c, lead):
    """c0 + var*(c1 + ... + var*h) by Horner for the first `lead` terms, h = the rest as E(var^2) + var*O(var^2).
    The float64 far pieces' Horner chains (degree 20-23) held their batches on latency: Zen 4, 1 thread,
    forward +4-7% at randn sigma = 3 and U(-8, 8), AVX2 gradient +8-10% at every spread.  The split's
    roundings, scaled by var^lead, stay below the leading terms': tools/check_f64.py reads 2 and 3 ulp as with
    Horner throughout, where the split from c0 read 3 and 3.5."""
    lines, expr = even_odd(var, c[lead:])
    for ck in c[lead - 1::-1]:
        expr = f"{float(ck)!r} + {var} * ({expr})"
    return [f"# c0..c{lead - 1} by Horner around the rest as E({var}^2) + {var}*O({var}^2)"] + lines, expr


def cython_poly(name, var, c, err, note):
    head = (f"cdef inline double _gx_{name}(double {var}) noexcept nogil:\n"
            f"    # {note}\n"
            f"    # degree {len(c) - 1}, max weighted error {err:.2e}\n")
    if name.endswith("32"):          # float32 paths: rounding differences are far below float32's
        lines, expr = even_odd(var, c)
    else:
        lines, expr = lead_even_odd(var, c, LEAD64)
    return head + "".join(f"    {ln}\n" for ln in lines) + f"    return {expr}\n"


def reemit(pxi):
    """Rewrite the generated section from the coefficients already in it (no refit)."""
    src = open(pxi).read()
    b = src.index(BEGIN) + len(BEGIN)
    e = src.index(END)
    out = []
    for block in src[b:e].split("cdef inline double _gx_")[1:]:
        m = re.match(r"(\w+)\(double (\w+)\) noexcept nogil:\n    # (.*)\n"
                     r"    # degree (\d+), max weighted error (\S+)\n(.*)", block, re.S)
        name, var, note, deg, err, body = m.groups()
        out.append(cython_poly(name, var, _coeffs_from_body(body, var, int(deg)), float(err), note))
    open(pxi, "w").write(src[:b] + "\n" + "\n".join(out) + src[e:])


def _coeffs_from_body(body, var, deg):
    """c[0..deg] from an emitted body: Horner lists the literals c0, c1, ...; even/odd lists c0, c2, ...
    then c1, c3, ...; a Horner lead (its comment names the last) lists c0 .. c_lead-1, then the rest
    even/odd."""
    lits = [float(t) for t in re.findall(r"(?<![\w.])-?\d+\.\d*(?:e[-+]?\d+)?", body)]
    assert len(lits) == deg + 1, (body, lits)
    if f"{var}2 = " not in body:
        return lits
    m = re.search(r"# c0\.\.c(\d+) by Horner", body)
    lead = int(m.group(1)) + 1 if m else 0
    rest = lits[lead:]
    c = [0.0] * len(rest)
    ne = (len(rest) + 1) // 2
    c[0::2], c[1::2] = rest[:ne], rest[ne:]
    return lits[:lead] + c


def main():
    import argparse
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write", metavar="PXI", help="replace the generated section of this .pxi in place")
    ap.add_argument("--only", help="comma-separated fit names")
    ap.add_argument("--reemit", action="store_true",
                    help="with --write: re-emit the existing coefficients in the current form, no refit")
    args = ap.parse_args()
    if args.reemit:
        reemit(args.write)
        return
    out = []
    for name, var, f, w, v, lo, hi, deg, note in FITS:
        if args.only and name not in args.only.split(","):
            continue
        c, err = minimax(f, w, v, lo, hi, deg, npts=1200, refine=3)
        print(f"{name}: degree {deg}, max weighted error {err:.3e}", file=sys.stderr, flush=True)
        out.append(cython_poly(name, var, c, err, note))
    text = "\n".join(out)
    if args.write:
        src = open(args.write).read()
        b = src.index(BEGIN) + len(BEGIN)
        e = src.index(END)
        open(args.write, "w").write(src[:b] + "\n" + text + src[e:])
    else:
        print(text)


BEGIN = "# BEGIN GENERATED by tools/fit_exact.py --write (do not edit by hand)"
END = "# END GENERATED"

if __name__ == "__main__":
    main()
