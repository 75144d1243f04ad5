"""Gated GELU: gelu_mul(gate, up) = GELU(gate) * up and gelu_mul_grad(gate, up, dy) = (dy*up*GELU'(gate),
dy*GELU(gate)), the ufuncs in every ISA build this CPU runs, the Python API and the GeGLU layer.

Accuracy (issue 31): float32 <= 3 ULP of the exact product, also where GELU(gate) underflows and |up| is huge;
gradients <= 3 ULP counted as GELU' is (in ULPs of the larger of its two terms, times |dy*up|); float64 <= 5
ULP against mpmath; float16/bfloat16 <= 1 ULP. IEEE specials as the product of exact values, no FP warnings.
The sample here is drawn afresh (its own seed), not from what the kernels were tuned on."""
import tracemalloc

import numpy as np
import pytest

import fastgelu
from fastgelu import ufuncs
from fastgelu._reference import ref_gated
from fastgelu._reference import ulp_error as _ulp_error

APPROX = ("none", "tanh", "sigmoid")
FWD = {"none": "gelu_mul", "tanh": "gelu_tanh_mul", "sigmoid": "gelu_sigmoid_mul"}
GRAD = {a: n + "_grad" for a, n in FWD.items()}
PLAIN = {"none": "gelu", "tanh": "gelu_tanh", "sigmoid": "gelu_sigmoid"}
BF16 = ufuncs.BFLOAT16
HALVES = [np.dtype(np.float16)] + ([BF16] if BF16 is not None else [])
ALL = [np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)] + ([BF16] if BF16 is not None else [])
SEED = 31_2026


def gates(dtype, n, rng):
    """The whole line: randn at sigma 1 and 3, the dip, the negative tail past underflow, big, tiny."""
    dtype = np.dtype(dtype)
    wide = dtype == np.float64
    parts = [rng.standard_normal(n // 4), 3 * rng.standard_normal(n // 4), rng.uniform(-0.8, -0.7, n // 16),
             rng.uniform(-40 if wide else -16, -3, n // 8), rng.uniform(3, 12, n // 16),
             np.sign(rng.standard_normal(n // 16)) * 10.0 ** rng.uniform(-40, 30, n // 16),
             [0.0, -0.0, 1e-42, -1e-42, 1e-300 if wide else 1e-40, 3e37, -3e37]]
    with np.errstate(all="ignore"):
        g = np.concatenate([np.asarray(p, np.float64) for p in parts]).astype(dtype)
    return g[np.isfinite(g.astype(np.float64))]


def ups(dtype, n, rng):
    """Factors from subnormal to near overflow, both signs, with a randn core."""
    dtype = np.dtype(dtype)
    top = {2: 4, 4: 37, 8: 150}[dtype.itemsize] if dtype != BF16 else 37
    e = rng.uniform(-top, top, n)
    u = np.where(rng.random(n) < 0.5, rng.standard_normal(n), np.sign(rng.standard_normal(n)) * 10.0 ** e)
    with np.errstate(all="ignore"):
        u = u.astype(dtype)
    return np.where(np.isfinite(u.astype(np.float64)), u, np.ones((), dtype))


def ulp_error(y, ref, scale, dtype):
    """_reference.ulp_error with references beyond the type's range as the rounding makes them: +-inf."""
    with np.errstate(all="ignore"):
        big = np.isinf(np.asarray(ref).astype(dtype).astype(np.float64)) & np.isfinite(ref)
        ref = np.where(big, np.sign(ref) * np.inf, ref)
    return _ulp_error(y, ref, scale, dtype)


# ---- values ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("approximate", APPROX)
def test_float32_forward_within_3_ulp_of_the_exact_product(uf, approximate):
    rng = np.random.default_rng(SEED)
    g = gates(np.float32, 200_000, rng)
    u = ups(np.float32, len(g), rng)
    y = uf[FWD[approximate]](g, u)
    ref, scale = ref_gated(FWD[approximate], g, u)
    err = ulp_error(y, ref, scale, np.float32)
    assert err.max() <= 3, f"{err.max():.2f} ULP at gate={g[err.argmax()]!r}, up={u[err.argmax()]!r}"


@pytest.mark.parametrize("approximate", APPROX)
def test_float32_where_gelu_underflows_and_up_is_huge(uf, approximate):
    """GELU(gate) alone is subnormal or 0 in float32, the product is a normal number: <= 3 ULP still."""
    lo = {"none": -19.0, "tanh": -12.0, "sigmoid": -80.0}[approximate]
    hi = {"none": -12.5, "tanh": -9.0, "sigmoid": -50.0}[approximate]
    g = np.linspace(lo, hi, 20_001).astype(np.float32)
    for top in (1e20, 1e30, 3.4e38):
        u = np.float32(top) * np.linspace(0.5, 1.0, len(g)).astype(np.float32)
        alone = uf[PLAIN[approximate]](g)
        assert (np.abs(alone) < np.finfo(np.float32).tiny).any()
        y = uf[FWD[approximate]](g, u)
        ref, scale = ref_gated(FWD[approximate], g, u)
        err = ulp_error(y, ref, scale, np.float32)
        assert err.max() <= 3, f"up ~{top:g}: {err.max():.2f} ULP at gate={g[err.argmax()]!r}"
        assert (y != 0).sum() > 100
        (dg, du), ((rg, sg), (ru, su)) = uf[GRAD[approximate]](g, np.ones_like(g), u), \
            ref_gated(GRAD[approximate], g, np.ones_like(g), u)
        assert ulp_error(du, ru, su, np.float32).max() <= 3
        assert ulp_error(dg, rg, sg, np.float32).max() <= 3


@pytest.mark.parametrize("approximate", APPROX)
def test_float32_gradients_within_3_ulp(uf, approximate):
    rng = np.random.default_rng(SEED + 1)
    g = gates(np.float32, 200_000, rng)
    u = ups(np.float32, len(g), rng)
    dy = ups(np.float32, len(g), rng)
    dg, du = uf[GRAD[approximate]](g, u, dy)
    (rg, sg), (ru, su) = ref_gated(GRAD[approximate], g, u, dy)
    for name, y, r, s in (("dgate", dg, rg, sg), ("dup", du, ru, su)):
        err = ulp_error(y, r, s, np.float32)
        i = err.argmax()
        assert err.max() <= 3, f"{name}: {err.max():.2f} ULP at gate={g[i]!r}, up={u[i]!r}, dy={dy[i]!r}"


def test_float32_dy_times_up_overflowing_is_recomputed(uf):
    """dy*up beyond float32 while dy*up*GELU'(gate) is not (gate deep in the tail), and dgate = inf where the
    exact product overflows."""
    g = np.array([-13.0, -15.0, -20.0, 0.5, -12.0], np.float32)
    u = np.full(5, 3e38, np.float32)
    dy = np.full(5, 1e10, np.float32)
    dg, du = uf["gelu_mul_grad"](g, u, dy)
    (rg, sg), (ru, su) = ref_gated("gelu_mul_grad", g, u, dy)
    assert ulp_error(dg, rg, sg, np.float32).max() <= 3, (dg, rg)
    assert ulp_error(du, ru, su, np.float32).max() <= 3, (du, ru)
    assert np.isinf(dg[3]) and dg[3] > 0


@pytest.mark.parametrize("approximate", APPROX)
def test_float64_against_mpmath_within_5_ulp(uf, approximate):
    pytest.importorskip("mpmath")
    rng = np.random.default_rng(SEED + 2)
    g = gates(np.float64, 4_000, rng)
    u = ups(np.float64, len(g), rng)
    dy = ups(np.float64, len(g), rng)
    # float64 has nothing wider: where GELU(gate) (GELU'(gate)) itself is subnormal or 0 the product keeps
    # that number's absolute error (docs/gated.md, "Accuracy"): such gates are left out here
    keep = (np.abs(uf[PLAIN[approximate]](g)) >= np.finfo(np.float64).tiny) & \
        (np.abs(uf[PLAIN[approximate] + "_grad"](g, np.ones_like(g))) >= np.finfo(np.float64).tiny) | (g == 0)
    g, u, dy = g[keep], u[keep], dy[keep]
    assert len(g) > 2500
    y = uf[FWD[approximate]](g, u)
    ref, scale = ref_gated(FWD[approximate], g, u, mp=True)
    err = ulp_error(y, ref, scale, np.float64)
    assert err.max() <= 5, f"{err.max():.2f} ULP at gate={g[err.argmax()]!r}, up={u[err.argmax()]!r}"
    dg, du = uf[GRAD[approximate]](g, u, dy)
    (rg, sg), (ru, su) = ref_gated(GRAD[approximate], g, u, dy, mp=True)
    for name, v, r, s in (("dgate", dg, rg, sg), ("dup", du, ru, su)):
        err = ulp_error(v, r, s, np.float64)
        assert err.max() <= 5, f"{name}: {err.max():.2f} ULP at gate={g[err.argmax()]!r}"


@pytest.mark.parametrize("approximate", APPROX)
@pytest.mark.parametrize("dtype", HALVES, ids=str)
def test_16_bit_within_1_ulp(uf, approximate, dtype):
    rng = np.random.default_rng(SEED + 3)
    g = gates(dtype, 50_000, rng)
    u = ups(dtype, len(g), rng)
    dy = ups(dtype, len(g), rng)
    y = uf[FWD[approximate]](g, u)
    assert y.dtype == dtype
    ref, scale = ref_gated(FWD[approximate], g, u)
    err = ulp_error(y, ref, scale, dtype)
    assert err.max() <= 1, f"{err.max():.2f} ULP at gate={g[err.argmax()]!r}, up={u[err.argmax()]!r}"
    dg, du = uf[GRAD[approximate]](g, u, dy)
    (rg, sg), (ru, su) = ref_gated(GRAD[approximate], g, u, dy)
    for name, v, r, s in (("dgate", dg, rg, sg), ("dup", du, ru, su)):
        err = ulp_error(v, r, s, dtype)
        assert err.max() <= 1, f"{name}: {err.max():.2f} ULP at gate={g[err.argmax()]!r}"


@pytest.mark.parametrize("dtype", ALL, ids=str)
@pytest.mark.parametrize("approximate", APPROX)
def test_ieee_specials_are_products_of_exact_values(uf, dtype, approximate):
    inf, nan = np.inf, np.nan
    # (gate, up, GELU(gate)*up): GELU(-inf) = -0 exactly, GELU(-100) a tiny negative number
    cases = [(-inf, inf, nan), (-inf, 1.0, -0.0), (-inf, -1.0, 0.0), (inf, inf, inf), (inf, -2.0, -inf),
             (inf, 0.0, nan), (0.0, inf, nan), (-0.0, 1.0, -0.0), (0.0, -1.0, -0.0), (nan, 1.0, nan),
             (1.0, nan, nan), (-100.0, inf, -inf), (-100.0, -inf, inf),
             (2.0, 0.0, 0.0), (-2.0, 0.0, -0.0)]
    if dtype == np.float16:
        cases = [c if c[0] != -100.0 else (-60000.0, *c[1:]) for c in cases]
    g, u, want = (np.array([c[i] for c in cases], np.float64) for i in range(3))
    with np.errstate(all="raise"):
        y = uf[FWD[approximate]](g.astype(dtype), u.astype(dtype)).astype(np.float64)
    for k in range(len(cases)):
        ok = (np.isnan(y[k]) and np.isnan(want[k])) or (y[k] == want[k] and np.signbit(y[k]) == np.signbit(want[k]))
        assert ok, f"gelu_mul({g[k]}, {u[k]}) = {y[k]}, want {want[k]}"
    # the gradient: dup = dy*GELU(gate) follows the same table with dy for up
    with np.errstate(all="raise"):
        _, du = uf[GRAD[approximate]](g.astype(dtype), np.ones(len(g), dtype), u.astype(dtype))
    du = du.astype(np.float64)
    assert all((np.isnan(a) and np.isnan(b)) or a == b for a, b in zip(du, want)), (du, want)


@pytest.mark.parametrize("approximate", APPROX)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_no_floating_point_warnings(uf, approximate, dtype):
    rng = np.random.default_rng(SEED + 4)
    g = gates(dtype, 20_000, rng)
    fi = np.finfo(dtype)
    u = np.resize(np.array([0.0, -0.0, fi.max, -fi.max, fi.smallest_subnormal, 1.0, np.inf, -np.inf, np.nan],
                           dtype), len(g))
    with np.errstate(all="raise"):
        y = uf[FWD[approximate]](g, u)
        dg, du = uf[GRAD[approximate]](g, u, u[::-1].copy())
        uf[FWD[approximate]](g[::3], u[::3])
    assert y.dtype == dg.dtype == du.dtype == dtype


# ---- agreement with the plain functions, every path ----------------------------------------------------------

@pytest.mark.parametrize("approximate", APPROX)
def test_gradient_is_the_plain_gradient_and_forward_times_dy(approximate):
    rng = np.random.default_rng(SEED + 5)
    g = (3 * rng.standard_normal(100_000)).astype(np.float32)
    u = rng.standard_normal(100_000).astype(np.float32)
    dy = rng.standard_normal(100_000).astype(np.float32)
    g[:100] = np.linspace(-100 if approximate == "sigmoid" else -20, -12, 100)   # GELU(gate) subnormal: those lanes are more accurate than the product
    dg, du = fastgelu.gelu_mul_grad(g, u, dy, approximate)
    f = fastgelu.gelu(g, approximate)
    normal = (np.abs(f) >= np.finfo(np.float32).tiny) | (g == 0)
    assert (~normal).sum() >= 50
    np.testing.assert_array_equal(dg, fastgelu.gelu_grad(g, dy * u, approximate))
    np.testing.assert_array_equal(du[normal], (f * dy)[normal])
    np.testing.assert_array_equal(fastgelu.gelu_mul(g, u, approximate)[normal], (f * u)[normal])


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_strided_broadcast_and_threaded_give_the_contiguous_bits(dtype):
    rng = np.random.default_rng(SEED + 6)
    n = 70_001
    with np.errstate(all="ignore"):
        g = (3 * rng.standard_normal(3 * n)).astype(dtype)
        u = rng.standard_normal(3 * n).astype(dtype)
        dy = rng.standard_normal(3 * n).astype(dtype)
    want = fastgelu.gelu_mul(np.ascontiguousarray(g[::3]), np.ascontiguousarray(u[::3]))
    np.testing.assert_array_equal(fastgelu.gelu_mul(g[::3], u[::3]), want)
    wg, wu = fastgelu.gelu_mul_grad(np.ascontiguousarray(g[::3]), np.ascontiguousarray(u[::3]),
                                    np.ascontiguousarray(dy[::3]))
    got = fastgelu.gelu_mul_grad(g[::3], u[::3], dy[::3])
    np.testing.assert_array_equal(got[0], wg)
    np.testing.assert_array_equal(got[1], wu)
    # serial pieces equal the threaded call
    small = [fastgelu.gelu_mul(np.ascontiguousarray(g[::3][k:k + 4000]), np.ascontiguousarray(u[::3][k:k + 4000]))
             for k in range(0, n, 4000)]
    np.testing.assert_array_equal(np.concatenate(small), want)
    # broadcasting: a row of up against a matrix of gates, a scalar dy
    G = g[:600].reshape(20, 30)
    row = u[:30]
    np.testing.assert_array_equal(fastgelu.gelu_mul(G, row), fastgelu.gelu_mul(G, np.tile(row, (20, 1))))
    a, b = fastgelu.gelu_mul_grad(G, row, np.ones((), dtype))
    a2, b2 = fastgelu.gelu_mul_grad(G, np.tile(row, (20, 1)), np.ones(G.shape, dtype))
    np.testing.assert_array_equal(a, a2)
    np.testing.assert_array_equal(b, b2)


def test_out_where_casting_and_dtype():
    rng = np.random.default_rng(SEED + 7)
    g = rng.standard_normal(1000)
    u = rng.standard_normal(1000)
    out = np.full(1000, 7.0)
    mask = rng.random(1000) < 0.5
    fastgelu.gelu_mul(g, u, out=out, where=mask)
    np.testing.assert_array_equal(out[mask], fastgelu.gelu_mul(g, u)[mask])
    assert (out[~mask] == 7.0).all()
    y32 = fastgelu.gelu_mul(g, u, dtype=np.float32)
    assert y32.dtype == np.float32
    np.testing.assert_array_equal(y32, fastgelu.gelu_mul(g.astype(np.float32), u.astype(np.float32)))
    with pytest.raises(TypeError):   # float64 into a float32 out under same_kind casting: allowed; int: not
        ufuncs.gelu_mul(g, u, out=np.zeros(1000, np.int32))
    o1, o2 = np.zeros(1000, np.float32), np.zeros(1000, np.float32)
    r = ufuncs.gelu_mul_grad(g, u, u, out=(o1, o2), casting="same_kind")
    assert r[0] is o1 and r[1] is o2
    np.testing.assert_allclose(o1, fastgelu.gelu_mul_grad(g, u, u)[0], rtol=1e-6, atol=1e-30)
    # integers compute in float64 as np.multiply's floats would
    assert fastgelu.gelu_mul(np.arange(3), np.arange(3)).dtype == np.float64


@pytest.mark.parametrize("approximate", APPROX)
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=str)
def test_lanes_redone_in_double_same_bits_wherever_the_output_lies(approximate, dtype):
    """Chunks with lanes whose GELU(gate) lost its accuracy (gate deep in the tail, up huge or infinite) are
    redone from whole inputs: a fresh output, out=gate, out=up and an output just behind the gate in one
    buffer give the same bits, and those lanes are not the plain product."""
    rng = np.random.default_rng(SEED + 9)
    n = 5 * 1024 + 37
    deep = ({"none": (-19.0, -12.5), "tanh": (-12.0, -9.0), "sigmoid": (-80.0, -50.0)} if dtype == np.float32
            else {"none": (-60.0, -40.0), "tanh": (-60.0, -40.0), "sigmoid": (-900.0, -500.0)})[approximate]
    g = rng.standard_normal(n)
    u = rng.standard_normal(n)
    tail = rng.random(n) < 0.01
    g[tail] = rng.uniform(*deep, tail.sum())
    u[tail] = np.where(rng.random(tail.sum()) < 0.5, np.inf if dtype == np.float64 else 3e38, -1e30)
    g, u = g.astype(dtype), u.astype(dtype)
    with np.errstate(all="ignore"):
        want = fastgelu.gelu_mul(g, u, approximate)
        plain = fastgelu.gelu(g, approximate) * u
    assert (want[tail] != plain[tail]).any()
    g1, u1 = g.copy(), u.copy()
    np.testing.assert_array_equal(fastgelu.gelu_mul(g1, u1, approximate, out=g1), want)
    g1, u1 = g.copy(), u.copy()
    np.testing.assert_array_equal(fastgelu.gelu_mul(g1, u1, approximate, out=u1), want)
    for shift in (1, 8, 1024):
        buf = np.empty(n + shift, dtype)
        buf[shift:] = g
        res = fastgelu.gelu_mul(buf[shift:], u, approximate, out=buf[:n])
        np.testing.assert_array_equal(res, want, err_msg=f"output {shift} behind the gate")


@pytest.mark.parametrize("approximate", APPROX)
@pytest.mark.parametrize("n, dense", [(7, False), (8, False), (1029, False), (3 * 1024 + 5, False),
                                      (3 * 1024 + 5, True)])
def test_lost_lanes_found_in_every_part_of_a_call(approximate, n, dense):
    """float32 gates whose GELU is subnormal (tiny nonzero gates, gates deep in the tail) times a huge up, among
    zero gates, in the middle of a chunk and in its last, partial vector (dense: every third lane, tiny and
    deep ones in the same chunks): a fresh output (where the products are formed as GELU(gate) is stored)
    gives the bits of out=gate (GELU(gate) into a buffer first), the lost lanes the float64 product rounded
    once, and the other lanes GELU(gate) * up; the gradient's dup the same with dy for up."""
    rng = np.random.default_rng(SEED + 12)
    deep = {"none": -13.5, "tanh": -10.15, "sigmoid": -60.0}[approximate]
    g = rng.standard_normal(n).astype(np.float32)
    u = rng.standard_normal(n).astype(np.float32)
    tiny = np.array([1e-39, -3e-39, 2e-45, -1.1e-38, 2.2e-38], np.float32)
    spots = list(range(0, n, 3)) if dense else sorted({0, n // 2, n - 1, n - 2, n - 3} & set(range(n)))
    g[1:n:5] = np.where(np.arange(len(g[1:n:5])) % 2, g[1:n:5], 0.0)       # zero gates beside them
    for j, k in enumerate(spots):
        g[k] = tiny[j % 5] if j % 2 == 0 else np.float32(deep - 0.1 * (j % 50))
        u[k] = np.float32(3e38 if j % 3 else -2e38)
    with np.errstate(all="ignore"):
        want = fastgelu.gelu_mul(g, u, approximate)
        g1 = g.copy()
        np.testing.assert_array_equal(fastgelu.gelu_mul(g1, u, approximate, out=g1), want)
        f = fastgelu.gelu(g, approximate)
        lost = (np.abs(f) < np.finfo(np.float32).tiny) & (g != 0)
        assert lost[spots].all()
        np.testing.assert_array_equal(want[~lost], f[~lost] * u[~lost])
        ref, scale = ref_gated(FWD[approximate], g[lost], u[lost])
        # the gradient's dup = dy*GELU(gate) is the same product with dy for up (formed as the kernel stores
        # where the outputs hold no input; through buffers for out=(gate, dy)), and a NaN gate beside finite
        # dy*up gives NaN in both outputs and leaves the other lanes alone
        gn = g.copy()
        gn[n // 3] = np.nan
        wantn = want.copy()
        wantn[n // 3] = np.nan
        ones = np.ones_like(g)
        dg, du = fastgelu.gelu_mul_grad(gn, ones, u, approximate)
        np.testing.assert_array_equal(du, wantn)
        assert np.isnan(dg[n // 3])
        g1, d1 = gn.copy(), u.copy()
        fastgelu.gelu_mul_grad(g1, ones, d1, approximate, out=(g1, d1))
        np.testing.assert_array_equal(d1, wantn)
        np.testing.assert_array_equal(g1, dg)
    assert np.all(np.isfinite(want[lost]))
    assert _ulp_error(want[lost], ref, scale, np.float32).max() <= 1.0


@pytest.mark.parametrize("approximate", APPROX)
def test_a_call_in_chunks_of_changing_spread_gives_each_chunk_alone_bits(approximate):
    """A call goes through its gates 1,024 at a time, each chunk's kernel starting from what the last one found
    (quiet, sparse or dense tail lanes, tiny gates): every chunk's results equal those of the chunk called
    alone, both outputs of the gradient too."""
    rng = np.random.default_rng(SEED + 13)
    blocks = []
    for spread in (1, 1, 1, 8, 8, 1, 0, 3, 1, 1, 20, 0, 1):
        b = (spread * rng.standard_normal(1024)).astype(np.float32)
        if spread == 0:     # tiny and zero gates among ordinary ones, some subnormal
            b = np.where(rng.random(1024) < 0.3, rng.choice(np.float32([0, -0.0, 1e-39, -2e-38, 3e-31]), 1024),
                         rng.standard_normal(1024)).astype(np.float32)
        blocks.append(b)
    g = np.concatenate(blocks)
    u = rng.standard_normal(len(g)).astype(np.float32)
    dy = rng.standard_normal(len(g)).astype(np.float32)
    y = fastgelu.gelu_mul(g, u, approximate)
    dg, du = fastgelu.gelu_mul_grad(g, u, dy, approximate)
    for k in range(0, len(g), 1024):
        s = slice(k, k + 1024)
        np.testing.assert_array_equal(y[s], fastgelu.gelu_mul(g[s].copy(), u[s].copy(), approximate))
        a, b = fastgelu.gelu_mul_grad(g[s].copy(), u[s].copy(), dy[s].copy(), approximate)
        np.testing.assert_array_equal(dg[s], a)
        np.testing.assert_array_equal(du[s], b)


@pytest.mark.parametrize("approximate", APPROX)
@pytest.mark.parametrize("dtype", ALL, ids=str)
@pytest.mark.parametrize("which", ["gate", "up"])
def test_in_place_is_correct_and_allocates_nothing(approximate, dtype, which):
    rng = np.random.default_rng(SEED + 8)
    n = 1 << 17
    with np.errstate(all="ignore"):
        g = (3 * rng.standard_normal(n)).astype(dtype)
        u = rng.standard_normal(n).astype(dtype)
    want = fastgelu.gelu_mul(g, u, approximate)
    dy = rng.standard_normal(n).astype(dtype)
    wg, wu = fastgelu.gelu_mul_grad(g, u, dy, approximate)
    g1, u1 = g.copy(), u.copy()
    tgt = g1 if which == "gate" else u1
    g2, u2, d2 = g.copy(), u.copy(), dy.copy()
    tracemalloc.start()
    try:
        res = fastgelu.gelu_mul(g1, u1, approximate, out=tgt)
        r2 = fastgelu.gelu_mul_grad(g2, u2, d2, approximate, out=(g2, u2))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert res is tgt and r2[0] is g2 and r2[1] is u2
    np.testing.assert_array_equal(tgt, want)
    np.testing.assert_array_equal(g2, wg)
    np.testing.assert_array_equal(u2, wu)
    assert peak < 64 * 1024, f"{peak} bytes allocated in place"


def test_reduce_chains_outputs_in_order():
    """gelu_mul.reduce(a) = GELU(...GELU(GELU(a0)*a1)...)*a_n-1: each step reads the previous output."""
    a = np.linspace(-1, 1, 20_000)
    want = a[0]
    for v in a[1:]:
        want = fastgelu.gelu_mul(want, v)
    assert ufuncs.gelu_mul.reduce(a) == want


# ---- geglu and the API ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("approximate", APPROX)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_geglu_splits_gate_first(approximate, axis):
    rng = np.random.default_rng(SEED + 9)
    x = rng.standard_normal((6, 8, 4)).astype(np.float32)
    gate, up = np.split(x, 2, axis=axis)
    np.testing.assert_array_equal(fastgelu.geglu(x, approximate, axis=axis),
                                  fastgelu.gelu_mul(gate, up, approximate))
    dy = rng.standard_normal(gate.shape).astype(np.float32)
    dx = fastgelu.geglu_grad(x, dy, approximate, axis=axis)
    dg, du = fastgelu.gelu_mul_grad(gate, up, dy, approximate)
    np.testing.assert_array_equal(dx, np.concatenate([dg, du], axis=axis))


def test_geglu_bad_arguments():
    x = np.ones((3, 5))
    out = np.full((3, 2), 9.0)
    with pytest.raises(ValueError, match="odd length 5 along axis -1"):
        fastgelu.geglu(x, out=out)
    assert (out == 9.0).all()
    with pytest.raises(ValueError, match="odd length 3 along axis 0"):
        fastgelu.geglu(x, axis=0)
    with pytest.raises(np.exceptions.AxisError):
        fastgelu.geglu(x, axis=2)
    with pytest.raises(TypeError, match="axis must be an integer"):
        fastgelu.geglu(x, axis=1.0)
    with pytest.raises(ValueError, match="at least one dimension"):
        fastgelu.geglu(np.float64(1.0))
    with pytest.raises(ValueError, match="'none', 'tanh', 'sigmoid'"):
        fastgelu.geglu(np.ones(4), approximate="erf")


@pytest.mark.parametrize("bad", ["text", None, np.ones(3, np.complex128), [1.0, None]])
def test_gelu_mul_bad_inputs_name_the_argument_and_leave_out_untouched(bad):
    out = np.full(3, 9.0)
    with pytest.raises(TypeError, match="gelu_mul: up"):
        fastgelu.gelu_mul(np.ones(3), bad, out=out)
    with pytest.raises(TypeError, match="gelu_mul: gate"):
        fastgelu.gelu_mul(bad, np.ones(3), out=out)
    o1, o2 = np.full(3, 9.0), np.full(3, 9.0)
    with pytest.raises(TypeError, match="gelu_mul_grad: grad_output"):
        fastgelu.gelu_mul_grad(np.ones(3), np.ones(3), bad, out=(o1, o2))
    assert (out == 9.0).all() and (o1 == 9.0).all() and (o2 == 9.0).all()


def test_gelu_mul_bad_out_and_approximate():
    with pytest.raises(TypeError, match="out must be a tuple of 2"):
        fastgelu.gelu_mul_grad(np.ones(3), np.ones(3), np.ones(3), out=np.ones(3))
    with pytest.raises(TypeError, match="out must be an array"):
        fastgelu.gelu_mul(np.ones(3), np.ones(3), out=[0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="gelu_mul: approximate"):
        fastgelu.gelu_mul(np.ones(3), np.ones(3), approximate="Tanh")
    out = np.full(3, 9.0)
    with pytest.raises(ValueError):   # shapes that do not broadcast: NumPy's error, nothing written
        fastgelu.gelu_mul(np.ones(3), np.ones(4), out=out)
    assert (out == 9.0).all()


def test_scalars_lists_and_ufunc_objects():
    y = fastgelu.gelu_mul(1.0, 2.0)
    assert isinstance(y, np.float64) and abs(y - 2 * 0.8413447460685429) < 1e-15
    np.testing.assert_array_equal(fastgelu.gelu_mul([1.0, -1.0], [2.0, 3.0]),
                                  fastgelu.gelu_mul(np.array([1.0, -1.0]), np.array([2.0, 3.0])))
    for name in FWD.values():
        f = getattr(ufuncs, name)
        assert isinstance(f, np.ufunc) and f.__name__ == name and (f.nin, f.nout) == (2, 1)
    for name in GRAD.values():
        f = getattr(ufuncs, name)
        assert isinstance(f, np.ufunc) and f.__name__ == name and (f.nin, f.nout) == (3, 2)
        if BF16 is not None:
            assert f(np.ones(2, BF16), np.ones(2, BF16), np.ones(2, BF16))[0].dtype == BF16


# ---- the layer -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("approximate", APPROX)
def test_geglu_layer_forward_backward_match_finite_differences(approximate):
    rng = np.random.default_rng(SEED + 10)
    x = rng.standard_normal((4, 10))
    m = fastgelu.GeGLU(approximate)
    y = m(x)
    dy = rng.standard_normal(y.shape)
    dx = m.backward(dy)
    eps = 1e-6
    num = np.empty_like(x)
    for idx in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[idx] += eps
        xm[idx] -= eps
        num[idx] = ((fastgelu.geglu(xp, approximate) - fastgelu.geglu(xm, approximate)) * dy).sum() / (2 * eps)
    np.testing.assert_allclose(dx, num, rtol=1e-6, atol=1e-8)
    gate, up = x[:, :5], x[:, 5:]
    m2 = fastgelu.GeGLU(approximate)
    np.testing.assert_array_equal(m2(gate, up), y)
    dg, du = m2.backward(dy)
    np.testing.assert_array_equal(np.concatenate([dg, du], axis=1), dx)


def test_geglu_layer_state_and_repr():
    m = fastgelu.GeGLU("tanh", axis=0)
    assert repr(m) == "GeGLU(approximate='tanh', axis=0)"
    with pytest.raises(RuntimeError, match="before forward"):
        m.backward(np.ones(2))
    with pytest.raises(ValueError, match="GeGLU: approximate"):
        fastgelu.GeGLU("exact")
    assert "GeGLU" in fastgelu.__all__ and "gelu_mul" in fastgelu.__all__ and "geglu" in fastgelu.__all__


# ---- dask ----------------------------------------------------------------------------------------------------

def test_dask_arrays_stay_lazy_and_match():
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(SEED + 11)
    g = (3 * rng.standard_normal((301, 68))).astype(np.float32)
    u = rng.standard_normal((301, 68)).astype(np.float32)
    dg_, du_ = da.from_array(g, chunks=(100, 20)), da.from_array(u, chunks=(100, 20))
    lazy = fastgelu.gelu_mul(dg_, du_, "tanh")
    assert isinstance(lazy, da.Array)
    np.testing.assert_array_equal(lazy.compute(), fastgelu.gelu_mul(g, u, "tanh"))
    lazy = ufuncs.gelu_sigmoid_mul(dg_, du_)
    assert isinstance(lazy, da.Array)
    np.testing.assert_array_equal(lazy.compute(), ufuncs.gelu_sigmoid_mul(g, u))
    x = da.concatenate([dg_, du_], axis=1).rechunk((100, 40))
    np.testing.assert_array_equal(fastgelu.geglu(x).compute(), fastgelu.gelu_mul(g, u))
