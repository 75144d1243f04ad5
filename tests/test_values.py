"""Values of every (variant, direction, dtype) against float64/mpmath references, in every memory layout."""
import numpy as np
import pytest

import fastgelu
from fastgelu._reference import NAMES, ref64, ref_mp, ulp_error

FWD = ["gelu", "gelu_tanh", "gelu_sigmoid"]
GRAD = ["gelu_grad", "gelu_tanh_grad", "gelu_sigmoid_grad"]


def call(uf, name, x, dy=None, **kw):
    if name in GRAD:
        return uf[name](x, np.ones_like(x) if dy is None else dy, **kw)
    return uf[name](x, **kw)


def sample(dtype, rng, n=20000):
    x = np.concatenate([rng.standard_normal(n // 2) * 3, rng.uniform(-14, 14, n // 4),
                        np.linspace(-1, 1, n // 4)])
    return x.astype(dtype)


@pytest.mark.parametrize("name", NAMES)
def test_float32_relative(uf, name, rng):
    x = sample(np.float32, rng)
    y = call(uf, name, x)
    assert y.dtype == np.float32
    ref, scale = ref64(name, x)
    rel = np.abs(y - ref) / np.maximum(scale, np.finfo(np.float32).tiny)
    assert rel.max() <= 1e-6, (name, x[rel.argmax()])


@pytest.mark.parametrize("name", NAMES)
def test_float64_relative(uf, name, rng):
    x = np.concatenate([sample(np.float64, rng, 2000), [-40.0, -37.5, -30.0, 1e-300, -1e-300, 40.0]])
    y = call(uf, name, x)
    assert y.dtype == np.float64
    ref, scale = ref_mp(name, x)
    rel = np.abs(y - ref) / np.maximum(scale, np.finfo(np.float64).tiny)
    assert rel.max() <= 1e-13, (name, x[rel.argmax()])


def test_seed_doc_example():
    x = np.array([-2.0, -1.0, 0.0, 1.0, 2.0])
    np.testing.assert_allclose(fastgelu.gelu(x), [-0.0455, -0.1587, 0.0, 0.8413, 1.9545], atol=1e-4)
    np.testing.assert_allclose(fastgelu.gelu(x.astype(np.float32)),
                               [-0.0455, -0.1587, 0.0, 0.8413, 1.9545], atol=1e-4)


def test_seed_minimum():
    x = np.linspace(-0.8, -0.7, 100001)
    y = fastgelu.gelu(x)
    assert abs(x[y.argmin()] - (-0.75179)) < 1e-4
    assert abs(y.min() - (-0.16997)) < 1e-5


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_layouts_match_contiguous(uf, name, dtype, rng):
    base = (rng.standard_normal((64, 96)) * 4).astype(dtype)
    want = call(uf, name, base)
    # strided, negative strides, Fortran order, a 2-D slice
    assert np.array_equal(call(uf, name, base[:, ::3]), want[:, ::3])
    assert np.array_equal(call(uf, name, base[::-1, ::-2]), want[::-1, ::-2])
    assert np.array_equal(call(uf, name, np.asfortranarray(base)), want)
    # 0-d and empty
    assert np.array_equal(call(uf, name, base[3, 7][()]), want[3, 7])
    assert call(uf, name, base[:0]).shape == (0, 96)
    # a strided out
    out = np.zeros((64, 192), dtype)
    call(uf, name, base, out=out[:, ::2])
    assert np.array_equal(out[:, ::2], want) and not out[:, 1::2].any()


@pytest.mark.parametrize("name", GRAD)
def test_gradient_broadcasts(uf, name, rng):
    x = rng.standard_normal((50, 40))
    dy = rng.standard_normal(40)
    full = call(uf, name, x, np.broadcast_to(dy, x.shape).copy())
    assert np.array_equal(call(uf, name, x, dy), full)
    assert np.array_equal(call(uf, name, x, 2.5), call(uf, name, x, np.full_like(x, 2.5)))
    assert np.array_equal(call(uf, name, x, 1.0), call(uf, name, x))
    np.testing.assert_allclose(call(uf, name, x, dy), call(uf, name, x) * dy, rtol=1e-15)


@pytest.mark.parametrize("name", ["gelu", "gelu_grad", "gelu_tanh_grad", "gelu_sigmoid", "gelu_sigmoid_grad"])
def test_exact_chunk_dispatch_same_bits(uf, name, rng):
    """float32 exact kernels pick a path per 32 inputs: all |x| <= 3 (central loop), up to 8 beyond
    (central loop; those lanes are deferred and computed by the full path, 32 at a time or, at the end,
    one at a time), or more (vector full path for the chunk). Every input must get the same bits as in a
    chunk where all 32 lanes are itself."""
    chunks = []
    for c in range(60):
        x = rng.uniform(-3, 3, 32)
        far = rng.choice(32, size=c % 12, replace=False)
        x[far] = rng.choice([-1, 1], far.size) * rng.uniform(3, 14, far.size)
        chunks.append(x)
    x = np.concatenate(chunks).astype(np.float32)
    x[5] = np.inf
    x[70] = -np.inf
    y = call(uf, name, x)
    alone = np.array([call(uf, name, np.full(32, v, np.float32))[0] for v in x])
    assert np.array_equal(y, alone)
    inplace = x.copy()                             # in place goes through a local copy of each tile
    assert call(uf, name, inplace, out=inplace) is inplace
    assert np.array_equal(inplace, y)


@pytest.mark.parametrize("frac", [0.0005, 0.03, 0.3, 1.0])
@pytest.mark.parametrize("name", ["gelu", "gelu_grad", "gelu_tanh", "gelu_tanh_grad", "gelu_sigmoid", "gelu_sigmoid_grad"])
def test_tail_lanes_same_bits_wherever_they_fall(uf, name, frac, rng):
    """The float32 central form (all six functions) computes x >= -R (AVX-512 R ~ 5-7.5, sigmoid form 10.25,
    its gradient 12) without exp and queues the other lanes (x < -R, -inf; for the gradients also NaN x and
    results that are not finite) for the exp form (AVX2: R 3.3-4.0, sigmoid form 5.5, its gradient 6; the
    forwards take x > R from a table slot of their own, the gradients queue |x| > R), a whole vector
    at a time after each chunk of 64 vectors, their results
    scattered back (a partial vector's lanes wait for later chunks, or the call's end).  Every lane must
    get the bits it gets alone, at any density of such lanes, across chunk ends, in place on x or on dy
    (the queue keeps its own copy)."""
    n = 5013
    x = rng.standard_normal(n) * 2
    tail = rng.random(n) < frac
    x[tail] = rng.choice([-1.0, 1.0], tail.sum()) * rng.uniform(3.0, 16, tail.sum())
    x[rng.choice(n, 5, replace=False)] = -np.inf
    x[rng.choice(n, 5, replace=False)] = np.nan
    x[-1] = -7.0                                   # in the last, partial vector
    x = x.astype(np.float32)
    dy = rng.standard_normal(n).astype(np.float32)
    dy[::37] = 1e30                                # lifts a tail product that dy = 1 underflows
    dy[::101] = np.inf
    y = call(uf, name, x, dy)
    alone = np.array([call(uf, name, x[i:i + 1], dy[i:i + 1])[0] for i in range(n)])
    assert np.array_equal(y, alone, equal_nan=True)
    xi = x.copy()
    assert call(uf, name, xi, dy, out=xi) is xi
    assert np.array_equal(xi, y, equal_nan=True)
    if name in GRAD:
        di = dy.copy()
        assert uf[name](x, di, out=di) is di
        assert np.array_equal(di, y, equal_nan=True)
    ok = np.isfinite(x)
    ref, scale = ref64(name, x[ok].astype(np.float64))
    err = ulp_error(call(uf, name, x[ok]), ref, scale, np.float32)
    assert err.max() <= 2.0, x[ok][np.argmax(err)]



@pytest.mark.parametrize("name", ["gelu", "gelu_grad", "gelu_tanh", "gelu_tanh_grad", "gelu_sigmoid", "gelu_sigmoid_grad"])
def test_both_ends_of_the_central_tables(uf, name):
    """Every 97th float32 x in [3, 8] (the sigmoid form: [3, 13]) of either sign: AVX2's tables end at R
    (3.3-4.0, sigmoid form 5.5, its gradient 6.0), where the tail takes over, and the forwards' hold x > R in
    one slot up to a clamp (5.25-10.25) beyond which x - F rounds to x; AVX-512's sigmoid tables end at 10.25
    and 12.0 on both sides; within 2 ULP there, and each lane the bits it gets alone."""
    lo = np.float32(3.0).view(np.int32)
    hi = np.float32(13.0 if name.startswith("gelu_sigmoid") else 8.0).view(np.int32)
    x = np.arange(lo, hi, 97, dtype=np.int32).view(np.float32)
    x = np.concatenate([x, -x])
    dy = np.ones_like(x)
    y = call(uf, name, x, dy)
    ref, scale = ref64(name, x.astype(np.float64))
    err = ulp_error(y, ref, scale, np.float32)
    assert err.max() <= 2.0, x[np.argmax(err)]
    some = np.linspace(0, x.size - 1, 300).astype(int)
    alone = np.array([call(uf, name, x[i:i + 1], dy[i:i + 1])[0] for i in some])
    assert np.array_equal(y[some], alone)


@pytest.mark.parametrize("name", ["gelu", "gelu_grad", "gelu_tanh", "gelu_tanh_grad", "gelu_sigmoid", "gelu_sigmoid_grad"])
def test_rare_tail_lanes_after_quiet_chunks(uf, name, rng):
    """After chunks that queued nothing, the next one only sums its vectors up (one operation a vector) and
    searches them when the sum shows a tail lane; forwards find tiny lanes (|x| <= 2^-30, redone exactly) by
    a summary too: a lone tail lane (or NaN, -inf, a subnormal) anywhere in such a chunk, first or last of
    it, must still get the bits it gets alone, in place too."""
    n = 40_000
    x = (rng.standard_normal(n) * 0.5).astype(np.float32)   # no lane beyond R on any build
    at = [0, 511, 512, 1023, 1024, 5000, 9727, 20480, 30001, n - 1, 15000, 15001, 25000, 35000, 36863]
    x[at] = np.array([-7.0, 9.0, -4.0, np.nan, -np.inf, -3.7, 3.7, -12.5, -7.9, -12.1,
                      1e-40, -1e-40, 2.0**-30, -1e-20, -2.0**-126], np.float32)   # and lone tiny lanes
    dy = rng.standard_normal(n).astype(np.float32)
    dy[[100, 2048, 9000]] = [np.inf, -np.inf, 3.4e38]   # results that are not finite in quiet chunks
    y = call(uf, name, x, dy)
    alone = np.array([call(uf, name, x[i:i + 1], dy[i:i + 1])[0] for i in at + [100, 2048, 9000]])
    assert np.array_equal(y[at + [100, 2048, 9000]], alone, equal_nan=True)
    rest = np.setdiff1d(np.arange(n), at)
    ref, scale = ref64(name, x[rest].astype(np.float64))
    assert ulp_error(call(uf, name, x[rest]), ref, scale, np.float32).max() <= 2.0
    xi = x.copy()
    assert call(uf, name, xi, dy, out=xi) is xi
    assert np.array_equal(xi, y, equal_nan=True)

@pytest.mark.parametrize("name", NAMES)
def test_tiny_and_subnormal_lanes_mixed_with_others(uf, name, rng):
    """The float32 kernels send |x| <= 2^-30 (zeros, subnormals) down their own path, per vector: all-tiny
    vectors, mixed ones and single calls must give the same bits, within 2 ULP (x/2 correctly rounded for
    the forward, 1/2 for the gradient)."""
    tiny = np.concatenate([[0.0, -0.0, 1e-45, -1e-45, 2 ** -126, -(2 ** -126), 2 ** -30, -(2 ** -30)],
                           rng.uniform(-1, 1, 200) * 2.0 ** rng.integers(-149, -30, 200)])
    normal = rng.standard_normal(200) * 3
    x = np.concatenate([tiny, np.where(rng.random(400) < 0.5, rng.choice(tiny, 400), rng.choice(normal, 400)),
                        normal]).astype(np.float32)
    y = call(uf, name, x)
    alone = np.array([call(uf, name, x[i:i + 1])[0] for i in range(x.size)])
    assert np.array_equal(y, alone, equal_nan=True)
    assert np.array_equal(np.signbit(y), np.signbit(alone))
    ref, scale = ref64(name, x.astype(np.float64))
    err = ulp_error(y, ref, scale, np.float32)
    assert err.max() <= 2.0, x[np.argmax(err)]
    if name in FWD:
        small = np.abs(x) < 2 ** -125           # x/2 exact for normal x/2; a tie of a subnormal rounds to +inf
        assert np.array_equal(y[~small & (np.abs(x) <= 2 ** -30)], x[~small & (np.abs(x) <= 2 ** -30)] / 2)
        assert np.array_equal(np.signbit(y[x == 0]), np.signbit(x[x == 0]))
    else:
        assert np.all(y[np.abs(x) <= 2 ** -30] == 0.5)


@pytest.mark.parametrize("dy", [1e30, -3e38, 7e10, 1e5, -300.0, 1e-30, 1e-40, 0.0, np.inf, -np.inf])
@pytest.mark.parametrize("name", GRAD)
def test_gradient_with_large_and_tiny_dy(uf, name, dy, rng):
    """dy * GELU'(x) rounded from its true value: a large dy lifts products whose GELU'(x) alone underflows
    (1e30 * GELU'(-15) = -4e-22) and must not overflow on the way when the result is in range; a tiny dy
    keeps its bits.  The float32 kernels clamp x or the exponent where dy = 1 gives 0, so those lanes, and
    their scaling, are what this checks."""
    x = np.concatenate([[-8.7, -9.5, -11.3, -11.5, -12, -14.9, -15.5, -17, -19, -21.5, -60, -80, -500, -np.inf,
                         np.inf, -0.0, 0.0, 2.76, -0.75], rng.standard_normal(300) * 8,
                        rng.uniform(-80, 0, 300)]).astype(np.float32)
    d = np.float32(dy)
    y = uf[name](x, np.full_like(x, d))
    ref, scale = ref64(name, x.astype(np.float64))
    with np.errstate(invalid="ignore", over="ignore"):
        want = ref * np.float64(d)
    over = np.abs(want) > np.finfo(np.float32).max
    assert np.array_equal(y[over], want[over].astype(np.float32)), x[over]
    if np.isinf(d):     # inf * GELU'(x): where GELU'(x) underflows even double, the sign of 0 is moot
        vanish = ref == 0
        assert np.all(np.isnan(y[vanish]) | np.isinf(y[vanish]))
        want[vanish] = y[vanish]
    assert np.array_equal(np.isnan(y), np.isnan(want)), x[np.isnan(y) != np.isnan(want)]
    ok = ~over & ~np.isnan(want)
    if np.isfinite(d) and d != 0:
        err = ulp_error(y[ok], want[ok], scale[ok] * abs(np.float64(d)), np.float32)
        assert err.max() <= 2.0, (x[ok][np.argmax(err)], y[ok][np.argmax(err)], want[ok][np.argmax(err)])
    else:
        assert np.array_equal(y[ok], want[ok].astype(np.float32))


@pytest.mark.parametrize("name", GRAD)
def test_gradient_at_the_overflow_threshold(uf, name):
    """dy * GELU'(x) for dy near the largest float and x where GELU'(x) = 1 + ~1e-3 .. 1e-9 (the AVX2 tables'
    positive slot, x in (3.9, 6.0], holds GELU' only to a fraction of ulp(1)): the result rounds to inf
    exactly where the true product does, not to the largest float, and the reverse."""
    x = np.linspace(3.0, 7.0, 8001, dtype=np.float32)
    big = np.finfo(np.float32).max
    ref, _ = ref64(name, x.astype(np.float64))
    thr = 2.0 ** 128 - 2.0 ** 103                               # the products that round to inf and beyond
    for d in (big, -big, np.nextafter(big, np.float32(0)), np.float32(2.0 ** 127)):
        y = uf[name](x, np.full_like(x, d))
        want = ref * np.float64(d)
        clear = np.abs(np.abs(want) / thr - 1) > 1e-12           # ties of the threshold aside
        with np.errstate(over="ignore"):
            want32 = want.astype(np.float32)
        bad = clear & (y != want32) & (np.isinf(y) | np.isinf(want32))
        assert not bad.any(), (d, x[bad][:5], y[bad][:5], want[bad][:5])


@pytest.mark.parametrize("n", [1, 7, 31, 1000, 40000, 100003])
@pytest.mark.parametrize("name", NAMES)
def test_every_length(uf, name, n, rng):
    """Block fast paths and thread splits must agree with the element-by-element path at any length."""
    x = (rng.standard_normal(n) * 3).astype(np.float32)
    x[::97] *= 5
    y = call(uf, name, x)
    one_by_one = np.array([call(uf, name, x[i:i + 1])[0] for i in range(0, n, max(1, n // 50))])
    assert np.array_equal(y[::max(1, n // 50)], one_by_one)
    strided = call(uf, name, np.repeat(x, 2)[::2])
    assert np.array_equal(y, strided)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("name", GRAD)
def test_gradient_reduce_and_accumulate_chain_in_order(uf, name, dtype):
    """NumPy hands reduce/accumulate an input that is an earlier output: it must be read in order."""
    x = np.linspace(-2, 2, 600).astype(dtype)
    acc, seq = x[0], [x[0]]
    for v in x[1:]:
        acc = uf[name](acc, v)
        seq.append(acc)
    assert np.array_equal(uf[name].accumulate(x), np.array(seq, dtype))
    assert uf[name].reduce(x) == seq[-1]


def test_float32_kernels_of_this_build():
    """float32 runs the float32-arithmetic SIMD kernels wherever the build has FMA vectors (the AVX-512 and
    AVX2 builds, every aarch64 build: NEON); the x86 baseline build computes float32 in double."""
    import platform
    k = fastgelu.ufuncs._kernels
    isa = fastgelu.get_config()["isa"]
    arm = platform.machine().lower() in ("aarch64", "arm64")
    expected = {"avx512": "AVX-512", "avx2": "AVX2"}.get(isa, "NEON" if arm else "")
    if not k.F32_SIMD_REQUESTED:
        expected = ""
    assert k.F32_SIMD.split(",")[0] == expected
    assert fastgelu.get_config()["float32"].startswith("float32 arithmetic" if expected else "computed in double")
