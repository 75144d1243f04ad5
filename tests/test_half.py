"""float16 (NumPy's) and bfloat16 (ml_dtypes'): computed in float32 inside the kernel, rounded once."""
import numpy as np
import pytest

import fastgelu
from fastgelu._reference import NAMES, ref64, ulp_error


def all_bit_patterns(dtype):
    x = np.arange(1 << 16, dtype=np.uint16).view(dtype)
    return x[np.isfinite(x.astype(np.float32))]


def check_all_inputs(uf, name, dtype):
    x = all_bit_patterns(dtype)
    y = uf[name](x, np.ones_like(x)) if name.endswith("_grad") else uf[name](x)
    assert y.dtype == dtype
    ref, scale = ref64(name, x.astype(np.float64))
    err = ulp_error(y, ref, scale, dtype)
    assert err.max() <= 1.0, (name, x[err.argmax()], err.max())


@pytest.mark.parametrize("name", NAMES)
def test_float16_every_input_within_1_ulp(uf, name):
    check_all_inputs(uf, name, np.dtype(np.float16))


@pytest.mark.parametrize("name", NAMES)
def test_bfloat16_every_input_within_1_ulp(uf, name):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    check_all_inputs(uf, name, np.dtype(ml_dtypes.bfloat16))


@pytest.mark.parametrize("name", NAMES)
def test_half_results_are_float32_results_rounded_once(uf, name, rng):
    """The 16-bit loops must equal the float32 kernel followed by one round-to-nearest-even."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    for dtype in (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)):
        x = (rng.standard_normal(5000) * 4).astype(dtype)
        x32 = x.astype(np.float32)
        args, args32 = ((x, np.ones_like(x)), (x32, np.ones_like(x32))) if name.endswith("_grad") else \
            ((x,), (x32,))
        assert np.array_equal(uf[name](*args).view(np.uint16), uf[name](*args32).astype(dtype).view(np.uint16))


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
def test_forward_table_equals_computed_path_for_every_pattern(uf, name):
    """16-bit forward calls look results up in a table filled at import: every bit pattern (NaNs and
    infinities included), contiguous, strided and in place, must give the float32 result rounded once."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    for dtype in (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)):
        x = np.arange(1 << 16, dtype=np.uint16).view(dtype)
        with np.errstate(all="ignore"):
            want = uf[name](x.astype(np.float32)).astype(dtype).view(np.uint16)
        nan = np.isnan(want.view(dtype).astype(np.float32))
        for got in (uf[name](x), uf[name](np.repeat(x, 3)[::3]), uf[name](x.copy(), out=None)):
            got = got.view(np.uint16)
            assert np.array_equal(got[~nan], want[~nan]), (name, dtype)
            assert np.isnan(got[nan].view(dtype).astype(np.float32)).all()
        xi = x.copy()
        uf[name](xi, out=xi)
        assert np.array_equal(xi.view(np.uint16)[~nan], want[~nan])
