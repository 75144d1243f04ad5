"""Derive the constants and polynomial coefficients used in fastgelu/src/fg_fp.h (and fg_xsig.h).

Run:  python tools/fit_fp.py      (mpmath, ~seconds).  Prints Cython-ready constants and fit errors.

exp(r) on |r| <= ln2/2 is written as 1 + r + r^2*Q(r), Q(r) = (exp(r)-1-r)/r^2.  Q is fitted by a
Remez-style minimax on the *absolute* error of r^2*Q (i.e. weight r^2), which is what the final
relative error of exp(r) (~1 + ...) sees.  The coefficients are rounded to double and the error of the
rounded polynomial is re-measured on a dense grid in high precision.
  - accurate exp (float64 kernels): deg Q = 9   (total degree 11)
  - fast exp (float32 kernels, evaluated in double): deg Q = 4  (total degree 6)
"""
import mpmath as mp

mp.mp.dps = 60
H = mp.log(2) / 2


def Qf(r):
    if abs(r) < mp.mpf('1e-20'):
        return mp.mpf(1) / 2 + r / 6
    return (mp.exp(r) - 1 - r) / r**2


def fit(deg, a=-H, b=H, iters=30):
    """Remez exchange for min max |r^2 (Q(r) - P(r))| with P of degree deg."""
    n = deg + 2
    # initial reference: Chebyshev extrema
    # weight r^2 vanishes at 0, so the reference must avoid r = 0: take n+1 Chebyshev extrema
    # (n+1 even -> 0 is not among them ... for odd n+1 drop the middle one)
    m = n + 1 if n % 2 == 1 else n + 2
    xs = sorted((a + b) / 2 + (b - a) / 2 * mp.cos(mp.pi * i / (m - 1)) for i in range(m))
    xs = [x for x in xs if abs(x) > mp.mpf('1e-30')]
    while len(xs) > n:
        xs.pop(len(xs) // 2)
    w = lambda r: r**2
    coeffs = None
    for _ in range(iters):
        # solve sum c_j x^j * w(x) + (-1)^i E = Q(x) w(x)
        A = mp.matrix(n, n)
        rhs = mp.matrix(n, 1)
        for i, x in enumerate(xs):
            for j in range(deg + 1):
                A[i, j] = x**j * w(x)
            A[i, deg + 1] = (-1) ** i
            rhs[i] = Qf(x) * w(x)
        sol = mp.lu_solve(A, rhs)
        coeffs = [sol[j] for j in range(deg + 1)]
        err = lambda r: (Qf(r) - mp.polyval(coeffs[::-1], r)) * w(r)
        # locate extrema of err on a fine grid, one per sign-alternating segment
        # (skip |r| < 0.02: the weighted error has a triple zero at 0 whose sign noise would
        #  create spurious one-point segments)
        grid = [a + (b - a) * k / 4000 for k in range(4001)]
        grid = [g for g in grid if abs(g) > mp.mpf('0.02')]
        vals = [err(g) for g in grid]
        segs, cur = [], [0]
        for k in range(1, len(grid)):
            if (vals[k] >= 0) == (vals[cur[0]] >= 0):
                cur.append(k)
            else:
                segs.append(cur)
                cur = [k]
        segs.append(cur)
        ext = [max(s, key=lambda k: abs(vals[k])) for s in segs]
        if len(ext) < n:
            break
        # keep n extrema with largest |err| while preserving alternation (take a contiguous window)
        best = max(range(len(ext) - n + 1), key=lambda s: min(abs(vals[k]) for k in ext[s:s + n]))
        xs = [grid[k] for k in ext[best:best + n]]
    return coeffs


def check(coeffs_d, lo=-H, hi=H, npts=20001):
    """max relative error of 1 + r + r^2 P(r) vs exp(r), coefficients as the rounded doubles."""
    cs = [mp.mpf(c) for c in coeffs_d]
    m = 0
    for k in range(npts):
        r = lo + (hi - lo) * k / (npts - 1)
        e = 1 + r + r**2 * mp.polyval(cs[::-1], r)
        m = max(m, abs(e / mp.exp(r) - 1))
    return m


def dd(v):
    hi = float(v)
    return hi, float(v - mp.mpf(hi))


def main():
    ln2 = mp.log(2)
    # ln2 split: hi part with 32 significant bits so n*L2H is exact for |n| < 2^21
    e = mp.floor(mp.log(ln2, 2))
    l2h = float(mp.floor(ln2 * 2**(31 - e)) / 2**(31 - e))
    l2l = float(ln2 - mp.mpf(l2h))
    print("# Cody-Waite ln2 split (32-bit hi part)")
    print(f"DEF_LN2_HI = {l2h!r}\nDEF_LN2_LO = {l2l!r}")
    print(f"LN2 = {float(ln2)!r}\nINV_LN2 = {float(1/ln2)!r}")
    for name, deg in (("EXP_Q", 9), ("EXPF_Q", 4)):
        c = fit(deg)
        cd = [float(x) for x in c]
        print(f"# {name}: deg {deg}, max rel err of 1+r+r^2*Q on |r|<=ln2/2: "
              f"{float(check(cd)):.3e} (= 2^{float(mp.log(check(cd), 2)):.1f})")
        for i, x in enumerate(cd):
            print(f"{name}{i} = {x!r}")
    print("# double-double constants for w(x)")
    for name, v in (("K_SIG", mp.mpf('1.702')), ("C_TANH2", 2 * mp.sqrt(2 / mp.pi)),
                    ("A_TANH", mp.mpf('0.044715'))):
        h, l = dd(v)
        print(f"{name}_HI = {h!r}\n{name}_LO = {l!r}")


if __name__ == "__main__":
    main()
