"""float16 (NumPy's) and bfloat16 (ml_dtypes'). Forward results come from a table filled with the float64 kernel
rounded once (correctly rounded for all 65,536 inputs); gradients are computed in float32 and rounded once."""
import numpy as np
import pytest

import fastgelu
from fastgelu._reference import NAMES, ref64, ulp_error


def all_bit_patterns(dtype):
    x = np.arange(1 << 16, dtype=np.uint16).view(dtype)
    with np.errstate(invalid="ignore"):  # signaling NaN patterns: Arm's conversion raises invalid for them
        return x[np.isfinite(x.astype(np.float32))]


def check_all_inputs(uf, name, dtype):
    x = all_bit_patterns(dtype)
    y = uf[name](x, np.ones_like(x)) if name.endswith("_grad") else uf[name](x)
    assert y.dtype == dtype
    ref, scale = ref64(name, x.astype(np.float64))
    err = ulp_error(y, ref, scale, dtype)
    bound = 1.0 if name.endswith("_grad") else 0.5 + 1e-9   # forward: correctly rounded
    assert err.max() <= bound, (name, x[err.argmax()], err.max())


@pytest.mark.parametrize("name", NAMES)
def test_float16_every_input_within_1_ulp(uf, name):
    check_all_inputs(uf, name, np.dtype(np.float16))


@pytest.mark.parametrize("name", NAMES)
def test_bfloat16_every_input_within_1_ulp(uf, name):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    check_all_inputs(uf, name, np.dtype(ml_dtypes.bfloat16))


@pytest.mark.parametrize("name", NAMES[3:])
def test_half_gradients_are_float32_results_rounded_once(uf, name, rng):
    """The 16-bit gradient loops must equal the float32 kernel followed by one round-to-nearest-even."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    for dtype in (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)):
        x = (rng.standard_normal(5000) * 4).astype(dtype)
        dy = rng.standard_normal(5000).astype(dtype)
        x32, dy32 = x.astype(np.float32), dy.astype(np.float32)
        assert np.array_equal(uf[name](x, dy).view(np.uint16), uf[name](x32, dy32).astype(dtype).view(np.uint16))


def test_half_specials_and_conversions():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    for dtype in (np.float16, ml_dtypes.bfloat16):
        x = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1.0, -1.0], dtype=dtype)
        y = fastgelu.gelu(x).astype(np.float32)
        assert y[0] == np.inf and y[1] == 0 and np.signbit(y[1]) and np.isnan(y[2])
        assert y[3] == 0 and not np.signbit(y[3]) and y[4] == 0 and np.signbit(y[4])
        g = fastgelu.gelu_grad(x).astype(np.float32)
        assert g[0] == 1 and g[1] == 0 and np.isnan(g[2]) and g[3] == 0.5
    # values that overflow float16 after rounding, and subnormal results
    big = np.array([65504.0, 65519.0], np.float32).astype(np.float16)
    assert np.array_equal(fastgelu.gelu(big), big)
    tiny = np.array([-5.0, -5.5], np.float16)
    np.testing.assert_array_equal(fastgelu.gelu(tiny), fastgelu.gelu(tiny.astype(np.float32)).astype(np.float16))


@pytest.mark.parametrize("approximate", ["none", "tanh", "sigmoid"])
def test_half_wrapper_in_place_and_strided(approximate, rng):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    for dtype in (np.float16, ml_dtypes.bfloat16):
        x = rng.standard_normal((64, 50)).astype(dtype)
        want = fastgelu.gelu(x, approximate)
        assert want.dtype == dtype
        assert np.array_equal(fastgelu.gelu(x[:, ::2], approximate).view(np.uint16), want[:, ::2].view(np.uint16))
        assert np.array_equal(fastgelu.gelu(x.T, approximate).view(np.uint16), want.T.view(np.uint16))
        xi = x.copy()
        assert fastgelu.gelu(xi, approximate, out=xi) is xi
        assert np.array_equal(xi.view(np.uint16), want.view(np.uint16))
        g = fastgelu.gelu_grad(x, approximate=approximate)
        assert g.dtype == dtype
        dy = rng.standard_normal((64, 50)).astype(dtype)
        assert fastgelu.gelu_grad(x, dy, approximate).dtype == dtype


def test_integers_small_follow_numpy_exp():
    for dt in (np.int8, np.uint8, np.bool_):
        x = np.array([0, 1], dtype=dt)
        assert fastgelu.gelu(x).dtype == np.exp(x).dtype


@pytest.mark.parametrize("name", NAMES[:3])
def test_forward_is_the_float64_result_rounded_once_for_every_pattern(uf, name):
    """16-bit forward calls look results up in a table filled at import: every bit pattern (NaNs and
    infinities included), contiguous, strided, in place and with a bias, must give the float64 kernel's result
    rounded once to the 16-bit type."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    for dtype in (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)):
        x = np.arange(1 << 16, dtype=np.uint16).view(dtype)
        with np.errstate(all="ignore"):
            y64 = uf[name](x.astype(np.float64))
            # one rounding from float64: NumPy's float16 conversion is direct; for bfloat16, float32 by
            # round-to-odd first (exact where float32 holds the value, else its last bit set)
            if dtype == np.float16:
                want = y64.astype(np.float16)
            else:
                f = y64.astype(np.float32)
                f = np.where(np.abs(f.astype(np.float64)) > np.abs(y64), np.nextafter(f, np.float32(0)), f)
                u = f.view(np.uint32) | ((f.astype(np.float64) != y64) & np.isfinite(y64)).astype(np.uint32)
                want = u.view(np.float32).astype(dtype)
        want = want.view(np.uint16)
        nan = np.isnan(want.view(dtype).astype(np.float32))
        xi = x.copy()
        uf[name](xi, out=xi)
        for got in (uf[name](x), uf[name](np.repeat(x, 3)[::3]), xi):
            got = got.view(np.uint16)
            assert np.array_equal(got[~nan], want[~nan]), (name, dtype)
            assert np.isnan(got[nan].view(dtype).astype(np.float32)).all()
        # fused bias (x + -0.0 is x itself, -0.0 included), 2-D so the bias runs along the last axis
        fg_name = {"gelu": "none", "gelu_tanh": "tanh", "gelu_sigmoid": "sigmoid"}[name]
        ok = ~nan
        xs = x[ok][: (ok.sum() // 256) * 256].reshape(-1, 256)
        got = fastgelu.gelu(xs, fg_name, bias=np.full(256, -0.0, dtype))
        assert np.array_equal(got.view(np.uint16).ravel(), want[ok][: xs.size])
