#!/usr/bin/env python3
"""Coefficients of the float32-arithmetic kernels (fastgelu/src/fg_f32_tables.h), each table written as one record
(fg_f32_table.h) named after its function: fg_f_<name>_central, name as the package names the function.

With a = |x|, the forwards are max(-0, x) - F with F = a*Phi(-a) (exact form), a*sigma(-w(a)) (tanh form) or
a*sigma(-1.702a) (sigmoid form):
- central tables (below): F on 32 (AVX-512) or 8 (AVX2) intervals up to R, no exp;
- beyond R, the tail: F = exp(-a^2/2) (C - r(a^2)) with r rational (fit_tail), no table.
The gradient Phi(-a) - a*phi(a) = exp(-a^2/2) D(a) has an exp form (all of AVX2's gradient, AVX-512's tail)
with D piecewise on intervals of a chosen by the bits of a + 1 (one table per ISA: as many intervals as one
permute serves), with u = a - L (exact) and a float lead that the float Horner errors cannot touch:
  D = H + (C0 + u*(C1 + ...)),    H = D(L) rounded to float, C0 its small remainder;
and AVX-512 has a central table for it too.
exp(-a^2/2) = 2^mn * 2^f with 2^f = 1 + f*Q(f).  AVX-512's exp form computes it as 2^(-a^2 KH), KH =
log2(e)/2 rounded to float, with D fitted times 2^(-a^2 (log2(e)/2 - KH)) (1 - 1.5e-6 at a = 15): that spares
the kernel the product of a^2 with KH's rounding error KL, which AVX2 (and the tail) computes.

Method (as tools/fit_exact.py): weighted minimax by Lawson's iteration on Chebyshev nodes, values from
mpmath; coefficients are rounded to float32 one at a time from the lowest order, each rounding followed by
a refit of the higher ones, so the rounding is part of the fit.  Weights: relative error of F and of 2^f;
for D the gradient's ULP scale, the larger of Phi(-a) and a*phi(a) (D crosses 0 at a = 0.7518).
Run: python tools/fit_gelu_f32.py [--write fastgelu/src/fg_f32_tables.h]
"""
import os
import re
import sys
import numpy as np
import mpmath as mp

from fit_exact import lawson  # tools/ is the script's folder, first on sys.path

mp.mp.dps = 30
QDEG = 5          # Q: 2^f = 1 + f*Q(f), |f| <= 1/2 (+ slack)
# One table set per ISA: as many intervals as one permute serves (AVX-512: vpermt2ps, 32 entries; AVX2:
# vpermps, 8), the degree the accuracy then needs.  Interval index = (bits(a + 1) >> SHIFT) & (N - 1):
# N/4 intervals per octave of a + 1, a in [0, 15).
# fold: the tables include 2^(-a^2 (K - KH)) (AVX-512); AVX2 computes with KH + KL instead, its wider
# intervals leaving less margin for the fold (docs/design/kernels.md)
TABLES = {"avx512": dict(n=32, deg=5, fold=True), "avx2": dict(n=8, deg=7, fold=False)}


def intervals(n):
    per = n // 4
    shift = 23 - per.bit_length() + 1
    out = {}
    for e in range(4):                     # a + 1 in [2^e, 2^(e+1))
        for k in range(per):
            lo = 2.0 ** e * (1 + k / per) - 1
            hi = 2.0 ** e * (1 + (k + 1) / per) - 1
            idx = ((((127 + e) << 23) | (k << (23 - per.bit_length() + 1))) >> shift) & (n - 1)
            out[idx] = (lo, hi)
    return out, shift


K = 1 / (2 * mp.log(2))          # log2(e)/2: exp(-a^2/2) = 2^(-a^2 K)
KH = float(np.float32(K))        # AVX-512's exp form computes 2^(-a^2 KH); the rest, 2^(-a^2 (K - KH)), is in D
KL = float(np.float32(K - KH))   # the AVX2 kernels add a^2 KL


def f32(v):
    return float(np.float32(v))


def fit_rounded(us, target, weight, order, deg):
    """Minimise max |weight*(sum_k c_k u^k - target)| over the powers k in `order`; the coefficients are
    rounded to float one at a time in that order, the others refitted after each rounding."""
    fixed = {}
    w = np.array([float(x) for x in weight])
    uf = np.array([float(u) for u in us])
    for n, k in enumerate(order):
        free = order[n:]
        r = [t - sum(mp.mpf(c) * u ** j for j, c in fixed.items()) for t, u in zip(target, us)]
        rf = np.array([float(x) for x in r])
        sc = max(abs(uf)) or 1.0
        A = np.stack([(uf / sc) ** j for j in free], axis=1) * w[:, None]
        c = lawson(A, rf * w) / sc ** np.array(free)
        fixed[k] = f32(c[0])
    err = max(abs(float(wt * (sum(mp.mpf(c) * u ** j for j, c in fixed.items()) - t)))
              for u, t, wt in zip(us, target, weight))
    return [fixed.get(k, 0.0) for k in range(deg + 1)], err


def D(a, fold):
    a = mp.mpf(a)
    return (mp.ncdf(-a) - a * mp.npdf(a)) * mp.exp(a * a / 2) * (mp.power(2, -a * a * (K - KH)) if fold else 1)


def fit_D(lo, hi, deg, fold, n=160):
    """D = (Phi(-a) - a phi(a)) exp(a^2/2) = H + (C0 + u*(C1 + ...)); weight: the gradient's ULP scale,
    the larger of its two terms Phi(-a), a phi(a) (D crosses 0 at a = 0.7518)"""
    L = mp.mpf(lo)
    th = np.linspace(0, np.pi, n)
    us = [(mp.mpf(hi) - L) * (1 - mp.cos(mp.mpf(t))) / 2 for t in th] + [mp.mpf(hi - lo) * mp.mpf("1.0001")]
    ds = [D(L + u, fold) for u in us]
    wt = [mp.exp(-(L + u) ** 2 / 2) / max(mp.ncdf(-(L + u)), (L + u) * mp.npdf(L + u)) for u in us]
    c0 = f32(D(L, fold))      # 0.5 exactly on the first interval
    target = [d - c0 for d in ds]
    order = ([1] if lo == 0 else [1, 0]) + list(range(2, deg + 1))
    c, err = fit_rounded(us, target, wt, order, deg)
    return c0, c, err


def fit_Q(n=200):
    th = np.linspace(0, np.pi, n)
    H = mp.mpf("0.5001")
    fs = [H * mp.cos(mp.mpf(t)) for t in th]
    fs = [f if f else mp.mpf("1e-30") for f in fs]
    # 2^f - 1 = sum_k q_k f^(k+1); weight: relative error of 2^f
    target = [mp.power(2, f) - 1 for f in fs]
    c, err = fit_rounded(fs, target, [1 / mp.power(2, f) for f in fs], list(range(1, QDEG + 2)), QDEG + 1)
    return c[1:], err


def fit_exp_table(n, deg, fold):
    """the exact gradient's exp-form table D for n intervals: dict(shift, deg, err, L, rows H, C0, ..., C_deg)"""
    iv, shift = intervals(n)
    rows, errs = [], []
    for idx in range(n):
        lo, hi = iv[idx]
        h, c, err = fit_D(lo, hi, deg, fold)
        rows.append([h] + c)
        errs.append(err)
        print(f"# D interval {idx:2d} a in [{lo:6.3f}, {hi:6.3f}): max weighted error {err:.2e}", file=sys.stderr)
    return dict(shift=shift, deg=deg, err=max(errs), L=[iv[i][0] for i in range(n)],
                rows=[[rows[i][k] for i in range(n)] for k in range(deg + 2)])


# Central tables (AVX-512: one vpermt2ps serves 32 intervals; AVX2: vpermps, 8).  For |x| up to R, no exp:
# each function's F(a) (forward, y = max(-0, x) - F) or G(a) = GELU'(-a) (gradient) on intervals
# i = round(g(a)), g(a) = a*(K2*a + K) (fit_central), as C0 + u*(C1 + ...) with u = a - L exact (Sterbenz).
# L is the float near g^-1(i) at which F(L) (G(L)) lies within 1e-4 ulp of a float: C0 = that float is then
# exact and no lead/remainder pair is needed.  Inputs beyond take the tails.  Per function and ISA:
#   R      the reach: it trades speed against the steep end's error (F decays like e^(-a^2/2), and the Horner
#          rounding of u*(C1 + ...) grows with its share of F there); on AVX-512 R also clamps x > 0, where
#          F(R) must be below half an ulp of R (G(R) below half an ulp of 1)
#   deg    the degree the reach then needs
#   alpha  > 0: uneven intervals, as narrow as F's relative change needs at every a, reaching further for the
#          same error at one FMA more (the index)
#   RP     AVX2: the 8th slot holds x > R up to RP (fit_positive), so only x < -R takes the tail
#   H      AVX2: L_i = i*H (no permute of L)
#   re     AVX2: intervals from re on expanded at their right end (fit_central)
# The reaches, degrees and alternatives measured for each, with their errors over all inputs and their
# timings: docs/design/kernels.md, "Reach and degree of the central tables".
CENTRAL = {"avx512": {"gelu": dict(R=5.75, deg=5, alpha=0.55), "gelu_grad": dict(R=7.5, deg=6, alpha=0.7),
                      "gelu_tanh": dict(R=5.25, deg=5, alpha=0.6), "gelu_sigmoid": dict(R=10.25, deg=6),
                      "gelu_sigmoid_grad": dict(R=12.0, deg=6), "gelu_tanh_grad": dict(R=5.75, deg=6, alpha=0.6)},
           "avx2": {"gelu": dict(R=3.4, deg=7, RP=5.5, H=0.5234375), "gelu_grad": dict(R=3.9, deg=7, RP=6.0, re=2),
                    "gelu_tanh": dict(R=3.3, deg=7, RP=5.25, H=0.5078125),
                    "gelu_sigmoid": dict(R=5.5, deg=8, RP=10.25, H=0.875),
                    "gelu_sigmoid_grad": dict(R=6.0, deg=8, H=0.8125),
                    "gelu_tanh_grad": dict(R=3.9, deg=7, RP=5.75, re=2)}}
# AVX2's 7 intervals to R take K = 6.5/R (the last interval whole).  The sigmoid form's F(a) = a*sigma(-1.702 a)
# falls only like e^(-1.702 a), but sigma's poles at a = +-i pi/1.702 limit every interval's width alike (fit
# error ~ (h/3.7)^deg at width h): even intervals, and a reach set by their count.
CENTRAL_N = {"avx512": 32, "avx2": 8}


def F_central(a):
    a = mp.mpf(a)
    return a * mp.ncdf(-a)


def G_central(a):
    a = mp.mpf(a)
    return mp.ncdf(-a) - a * mp.npdf(a)


def F_tanh(a):
    a = mp.mpf(a)
    w = 2 * mp.sqrt(2 / mp.pi) * (a + mp.mpf("0.044715") * a ** 3)
    return a / (1 + mp.exp(w))


def F_sig(a):
    a = mp.mpf(a)
    return a / (1 + mp.exp(mp.mpf("1.702") * a))


def G_sig(a):
    """the sigmoid form's gradient at -a, GELU_s'(-a) = sigma(-ka) - ka sigma(ka) sigma(-ka), k = 1.702:
    GELU_s'(x) + GELU_s'(-x) = 1 as for the exact form, so the kernels form dy - G dy or G dy from it"""
    ka = mp.mpf("1.702") * mp.mpf(a)
    s = 1 / (1 + mp.exp(ka))
    return s - ka * (1 - s) * s


def G_sig_scale(a):
    """the ulp scale of the sigmoid gradient at -a: the larger of its two terms"""
    ka = mp.mpf("1.702") * mp.mpf(a)
    s = 1 / (1 + mp.exp(ka))
    return max(s, ka * (1 - s) * s)


def _tanh_terms(a):
    """sigma(-w(a)) and a w'(a) sigma(w) sigma(-w), w the tanh form's 2 sqrt(2/pi) (a + 0.044715 a^3)"""
    a = mp.mpf(a)
    c = 2 * mp.sqrt(2 / mp.pi)
    w = c * (a + mp.mpf("0.044715") * a ** 3)
    dw = c * (1 + 3 * mp.mpf("0.044715") * a ** 2)
    s = 1 / (1 + mp.exp(w))
    return s, a * dw * (1 - s) * s


def G_tanh(a):
    """the tanh form's gradient at -a, GELU_t'(-a) = sigma(-w) - a w' sigma(w) sigma(-w) (w odd: GELU_t'(x) +
    GELU_t'(-x) = 1)"""
    s, t = _tanh_terms(a)
    return s - t


# the functions, by the names the package gives them (and the kernels' records, fg_f_<name>_central): what
# their central table holds, F(a) for a forward, G(a) = GELU'(-a) for a gradient; in the order of the
# kernels' enum (fg_f32_fns.h)
FUNS = {"gelu": F_central, "gelu_grad": G_central, "gelu_tanh": F_tanh, "gelu_sigmoid": F_sig,
        "gelu_sigmoid_grad": G_sig, "gelu_tanh_grad": G_tanh}
WHAT = {"gelu": "F = a*Phi(-a)", "gelu_grad": "G = Phi(-a) - a*phi(a)",
        "gelu_tanh": "F = a*sigma(-w(a)), w = 2 sqrt(2/pi) (a + 0.044715 a^3)",
        "gelu_sigmoid": "F = a*sigma(-1.702a)",
        "gelu_sigmoid_grad": "G = sigma(-ka) - ka*sigma(ka)*sigma(-ka), k = 1.702",
        "gelu_tanh_grad": "G = sigma(-w) - a*w'*sigma(w)*sigma(-w)"}
GRADS = tuple(name for name in FUNS if name.endswith("_grad"))


def entry_points(src=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fastgelu", "src")):
    """{kernel entry point: the function it computes} for the forward and gradient entry points of each form
    of FG_F32_FORMS (fg_f32_fns.h): fg_f_tanh_block -> gelu_tanh, fg_f_tanh_grad_block -> gelu_tanh_grad"""
    text = open(os.path.join(src, "fg_f32_fns.h")).read()
    out = {}
    for form, fwd, grad in re.findall(r"X\((\w+), FG_F_(\w+), FG_F_(\w+)\)", text):
        out[f"fg_f_{form}_block"] = fwd.lower()
        out[f"fg_f_{form}_grad_block"] = grad.lower()
    return out


def exact_lead(fun, L, tries=4000):
    """The float L' nearest L (within `tries` floats) at which fun(L') is closest to a float32; (L', fun(L') as
    that float, its distance in ulps)."""
    best = None
    b = int(np.float32(L).view(np.uint32))
    for d in range(tries):
        for bb in ((b + d, b - d) if d else (b,)):
            Lc = float(np.array([bb], np.uint32).view(np.float32)[0])
            v = fun(Lc)
            fv = np.float32(float(v))
            frac = abs(float((v - mp.mpf(float(fv))) / float(np.spacing(np.abs(fv)))))
            if best is None or frac < best[2]:
                best = (Lc, float(fv), frac)
        if best[2] < 1e-4:
            break
    return best


def fit_central(name, R, deg, n=32, pts=160, full_last=False, alpha=0.0, RP=None, H=None, re=None):
    """Interval i = round(g(a)), g(a) = a*(K2*a + K): alpha = 0 spaces the intervals evenly (K2 = 0), alpha > 0
    narrows them as a grows (the share alpha of g(R) from a^2), which evens out F's relative change per interval
    (d log F/da ~ -a) and so the Horner rounding share: the same error budget then reaches a larger R.
    RP (AVX2): the last slot holds x > 0 from the central intervals' end to RP (fit_positive), the others
    the n - 1 central intervals.  H (AVX2): L_i = i*H, so that the kernel forms u = a - i*H by one FMA
    from the index instead of a permute of L (exact: i*H has few bits, Sterbenz); C0 is then F(L) rounded,
    the fit taking that rounding into account everywhere but at u = 0.
    re (L from the table only): intervals i >= re take L at their right end, where F (|G|) is least, so that
    u <= 0 and where F decays, u^k C_k share F's sign: Horner adds terms of one sign and its roundings stay
    relative to F, however steeply F falls across the interval (at the centre, u > 0 cancels against C0).
    Interval 1 keeps its centre (Sterbenz needs L <= 2 a), interval 0 its L = 0."""
    assert re is None or (not H and re >= 2)
    assert not (RP and alpha), "a positive slot needs even intervals (the kernels clamp its index at (n-1)/K)"
    fun = FUNS[name]
    nc = n - 1 if RP else n
    top = nc - 0.501 if full_last or alpha else nc - 1   # full_last: round(g(R)) = nc - 1, not a tie
    K, K2 = f32((1 - alpha) * top / R), f32(alpha * top / R ** 2)
    if H:                                     # the last interval whole, up to R
        K = f32(1 / H)
        assert round(R * K) == nc - 1 and R * K < nc - 0.5

    def ginv(v):
        return v / K if not K2 else (-K + np.sqrt(K * K + 4 * K2 * v)) / (2 * K2)
    rows, errs, worst = [], [], 0.0
    for i in range(nc):
        lo = max(0.0, ginv(i - 0.5))
        hi = (ginv(nc - 0.5) if RP else R) if i == nc - 1 else ginv(i + 0.5)
        if i == 0:
            L, c0 = 0.0, (0.5 if name in GRADS else 0.0)
        else:
            at = hi if re is not None and i >= re else ginv(i)
            L, c0, frac = (i * H, f32(fun(i * H)), 0.0) if H else exact_lead(fun, at)
            worst = max(worst, frac)
        pad = (hi - lo) * 1e-3                    # round(g(a)) in float may move a boundary
        lo, hi = max(0.0, lo - pad), hi + pad
        th = np.linspace(0, np.pi, pts)
        As = [mp.mpf(lo) + (mp.mpf(hi) - lo) * (1 - mp.cos(mp.mpf(t))) / 2 for t in th]
        As = [a for a in As if a > 0]
        us = [a - mp.mpf(L) for a in As]
        vals = [fun(a) for a in As]
        if name == "gelu_grad":
            wt = [1 / max(mp.ncdf(-a), a * mp.npdf(a)) for a in As]
        elif name == "gelu_sigmoid_grad":
            wt = [1 / G_sig_scale(a) for a in As]
        elif name == "gelu_tanh_grad":
            wt = [1 / max(_tanh_terms(a)) for a in As]
        else:
            wt = [1 / v for v in vals]
        c, err = fit_rounded(us, [v - c0 for v in vals], wt, list(range(1, deg + 1)), deg)
        c[0] = c0
        rows.append([L] + c)
        errs.append(err)
    print(f"# central {name}: R {R}, degree {deg}, max weighted error {max(errs):.2e} (interval "
          f"{int(np.argmax(errs))}), leads exact to {worst:.1e} ulp", file=sys.stderr)
    perr = None
    if RP:
        row, perr = fit_positive(name, ginv(nc - 0.5), RP, deg, pts, L=nc * H if H else None)
        rows.append(row)
    return K, K2, rows, max(errs), perr


def fit_positive(name, lo, hi, deg, pts=200, L=None):
    """AVX2's positive slot: x > 0 from lo (where the central index passes its last interval) to hi, the clamp
    beyond which x - F rounds to x (1 - G to 1).  There y = x - F (dy - G dy) needs F (G) only to a fraction
    of the result's ulp, absolutely: weight 1/ulp(a) (G: 2^24, the sweep's unit for GELU' just below 1)."""
    fun = FUNS[name]
    pad = (hi - lo) * 1e-3
    lo, hi = lo - pad, hi + pad
    L, c0, _ = (L, f32(fun(L)), 0.0) if L else exact_lead(fun, (lo + hi) / 2)
    th = np.linspace(0, np.pi, pts)
    As = [mp.mpf(lo) + (mp.mpf(hi) - lo) * (1 - mp.cos(mp.mpf(t))) / 2 for t in th]
    wt = [mp.mpf(2) ** 24 if name in GRADS else 1 / mp.mpf(float(np.spacing(np.float32(float(a))))) for a in As]
    c, err = fit_rounded([a - mp.mpf(L) for a in As], [fun(a) - c0 for a in As], wt, list(range(1, deg + 1)), deg)
    c[0] = c0
    print(f"# positive {name}: [{lo:.4f}, {hi:.4f}], degree {deg}, max error {err:.3f} ulp", file=sys.stderr)
    return [L] + c, err


def fit_central_table(name, n):
    """the central table of function `name` for n-entry permutes: dict(R, RP, slot, H, K, K2, deg, err,
    slot_err, rows L, C0, ..., C_deg)"""
    cfg = CENTRAL["avx512" if n == 32 else "avx2"][name]
    K, K2, rows, err, perr = fit_central(name, n=n, full_last=n < 32, **cfg)
    return dict(R=cfg["R"], RP=cfg.get("RP", cfg["R"]), slot=int(bool(cfg.get("RP"))), H=cfg.get("H", 0.0),
                K=K, K2=K2, deg=cfg["deg"], err=err, slot_err=perr or 0.0,
                rows=[[rows[i][k] for i in range(n)] for k in range(cfg["deg"] + 2)])


# The forwards' tail (|x| beyond the central tables, both ISAs): a*Phi(-a) = exp(-a^2/2) (C - r(s)), s = a^2,
# C = 1/sqrt(2 pi) rounded to float and r = C - a*m(a)/sqrt(2 pi) (m: Mills' ratio) as N(s)/D(s), D(0) = 1.  r/C
# is at most 0.08 from a = 3.5 on, so r's own roundings barely reach the result.  Degree (2, 3): (2, 2) leaves
# too much of an ulp (docs/design/kernels.md).  Over a in [3.5, 15]: every table reaches 3.5, and the kernels
# clamp a at 14.99.
TAIL = dict(lo=3.5, hi=15.0, num=2, den=3)


def tail_target(a):
    a = mp.mpf(a)
    return a * mp.ncdf(-a) * mp.exp(a * a / 2)     # a*m(a)/sqrt(2 pi)


def fit_tail(lo, hi, num, den, pts=1500, iters=80):
    """N/D for r on s in [lo^2, hi^2]: linearised least squares (Sanathanan-Koerner: each pass divides by the
    previous D) with Lawson-style reweighting towards the minimax of the error relative to a*m(a)/sqrt(2 pi);
    the coefficients rounded to float once at the end, the error measured after that rounding"""
    C = f32(1 / mp.sqrt(2 * mp.pi))
    a = (np.cos(np.linspace(np.pi, 0, pts)) + 1) / 2 * (hi - lo) + lo
    tt = np.array([float(tail_target(v)) for v in a])
    r = C - tt
    t = a * a / hi ** 2
    cols = np.array([t ** j for j in range(num + 1)] + [-r * t ** j for j in range(1, den + 1)]).T
    Dp, lw, best = np.ones_like(t), np.ones_like(t), (np.inf, None)
    for _ in range(iters):
        w = lw / (tt * Dp)
        c = np.linalg.lstsq(cols * w[:, None], r * w, rcond=None)[0]
        Dn = 1 + sum(c[num + j] * t ** j for j in range(1, den + 1))
        e = (sum(c[j] * t ** j for j in range(num + 1)) / Dn - r) / tt
        if np.abs(e).max() < best[0]:
            best = (np.abs(e).max(), c)
        Dp = np.abs(Dn)
        lw = lw * (np.abs(e) / np.abs(e).max()) ** 0.3 + 1e-3
        lw /= lw.mean()
    c = best[1]
    n = [f32(c[j] / hi ** (2 * j)) for j in range(num + 1)]
    d = [1.0] + [f32(c[num + j] / hi ** (2 * j)) for j in range(1, den + 1)]
    s = a * a
    err = max(abs(float((mp.mpf(C) - sum(mp.mpf(v) * mp.mpf(si) ** j for j, v in enumerate(n))
                         / sum(mp.mpf(v) * mp.mpf(si) ** j for j, v in enumerate(d)) - tail_target(ai))
                        / tail_target(ai))) for ai, si in zip(a, s))
    return C, n, d, err


def fit_all():
    """every table and constant of fg_f32_tables.h"""
    q, qerr = fit_Q()
    print(f"# 2^f: max rel error {qerr:.2e}", file=sys.stderr)
    C, n, d, err = fit_tail(**TAIL)
    print(f"# tail: r rational ({TAIL['num']}, {TAIL['den']}), max error relative to a*m(a)/sqrt(2 pi) {err:.2e}",
          file=sys.stderr)
    widths = {}
    for isa, width in CENTRAL_N.items():
        widths[width] = dict(exp=fit_exp_table(**TABLES[isa]),
                             central={name: fit_central_table(name, width) for name in FUNS})
    return dict(q=q, q_err=qerr, tail=dict(C=C, N=n, D=d, err=err), widths=widths)


def c_float(v):
    return f"{float(v)!r}f"


def c_rows(name, rows):
    """a table's rows as a C array, one row a line"""
    return ([f"static const float {name}[{len(rows)}][{len(rows[0])}] __attribute__((aligned(64))) = {{"]
            + ["    {" + ", ".join(c_float(v) for v in row) + "}," for row in rows] + ["};"])


def c_record(kind, name, fields):
    """a table's record: a constant of fg_f32_table.h's type `kind`, its fields in order, wrapped"""
    lines, line = [], f"static const {kind} {name} = {{"
    for k, v in fields:
        part = f".{k} = {v},"
        if len(line) + len(part) + 1 > 116:
            lines.append(line)
            line = "   "
        line += " " + part if not line.endswith("{") else part
    lines.append(line.rstrip(",") + "};")
    return lines


def emit(fits):
    """the generated part of fg_f32_tables.h"""
    t = fits["tail"]
    lines = ["/* BEGIN GENERATED by tools/fit_gelu_f32.py --write (do not edit by hand) */",
             "/* exp: 2^f = 1 + f*Q(f) on |f| <= 1/2, FG_F_Q_ERR its largest relative error; log2(e)/2 = KH + KL */",
             f"#define FG_F_KH {KH!r}f",
             f"#define FG_F_KL {KL!r}f"]
    lines += [f"#define FG_F_Q{j} {v!r}f" for j, v in enumerate(fits["q"])]
    lines += [f"#define FG_F_Q_ERR {fits['q_err']:.2e}",
              f"/* the forwards' tail: a*Phi(-a) = exp(-a^2/2) (C - r(a^2)), r = N/D of degree ({TAIL['num']}, "
              f"{TAIL['den']}) fitted for a in",
              f"   [{TAIL['lo']}, {TAIL['hi']}]; FG_F_R_ERR its largest error relative to C - r */",
              f"#define FG_F_RC {t['C']!r}f"]
    lines += [f"#define FG_F_RN{j} {v!r}f" for j, v in enumerate(t["N"])]
    lines += [f"#define FG_F_RD{j} {v!r}f" for j, v in enumerate(t["D"]) if j]
    lines.append(f"#define FG_F_R_ERR {t['err']:.2e}")
    for k, (width, w) in enumerate(sorted(fits["widths"].items(), reverse=True)):
        lines.append("#if FG_F_TAB32" if k == 0 else "#else")
        e = w["exp"]
        lines += [f"/* {width} intervals a table.  The exact gradient's exp form: D(a) = (Phi(-a) - a*phi(a)) "
                  f"exp(a^2/2)" + (" 2^(-a^2 KL) */" if width == 32 else " */"),
                  f"static const float fg_f_gelu_grad_exp_L[{width}] __attribute__((aligned(64))) = {{"
                  + ", ".join(c_float(v) for v in e["L"]) + "};"]
        lines += c_rows("fg_f_gelu_grad_exp_c", e["rows"])
        lines += c_record("fg_f_exp_table", "fg_f_gelu_grad_exp",
                          [("shift", e["shift"]), ("deg", e["deg"]), ("err", f"{e['err']:.2e}f"),
                           ("L", "fg_f_gelu_grad_exp_L"), ("c", "fg_f_gelu_grad_exp_c")])
        for name, c in w["central"].items():
            lines.append(f"/* {name}'s central table: {WHAT[name]} */")
            lines += c_rows(f"fg_f_{name}_central_c", c["rows"])
            lines += c_record("fg_f_table", f"fg_f_{name}_central",
                              [("R", c_float(c["R"])), ("RP", c_float(c["RP"])), ("slot", c["slot"]),
                               ("H", c_float(c["H"])), ("K", c_float(c["K"])), ("K2", c_float(c["K2"])),
                               ("deg", c["deg"]), ("err", f"{c['err']:.2e}f"),
                               ("slot_err", f"{c['slot_err']:.3f}f"), ("c", f"fg_f_{name}_central_c")])
    lines += ["#endif", "/* END GENERATED */"]
    return "\n".join(lines) + "\n"


HEADER = """/* Coefficients of the float32 kernels, a record for each table (fg_f32_table.h): generated by
   python tools/fit_gelu_f32.py --write fastgelu/src/fg_f32_tables.h   (do not edit by hand).
   Two table sets: 32 intervals a table (FG_F_TAB32: one two-source permute serves a coefficient) and 8. */
#ifndef FG_F32_TABLES_H
#define FG_F32_TABLES_H
#include "fg_f32_table.h"
"""


def main():
    text = emit(fit_all())
    if len(sys.argv) > 2 and sys.argv[1] == "--write":
        with open(sys.argv[2], "w") as f:
            f.write(HEADER + text + "#endif\n")
    else:
        print(text)


if __name__ == "__main__":
    main()
