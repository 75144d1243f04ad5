"""Fused bias: gelu(x, bias=b) == gelu(x + b) bit for bit, b along the last axis, in place too."""
import numpy as np
import pytest

import fastgelu

from common import APPROXIMATE as APPROX
from common import DTYPES


def same_bits(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(
        np.ascontiguousarray(a).view(np.uint8), np.ascontiguousarray(b).view(np.uint8))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("approximate", APPROX)
@pytest.mark.parametrize("shape", [(7,), (3, 5), (64, 3072), (2, 3, 4), (1000, 37), (40000, 3)])
def test_bias_equals_gelu_of_sum(dtype, approximate, shape, rng):
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    b = rng.standard_normal(shape[-1]).astype(dtype)
    dy = rng.standard_normal(shape).astype(dtype)
    want = fastgelu.gelu(x + b, approximate)
    assert same_bits(fastgelu.gelu(x, approximate, bias=b), want)
    assert same_bits(fastgelu.gelu_grad(x, dy, approximate, bias=b), fastgelu.gelu_grad(x + b, dy, approximate))
    assert same_bits(fastgelu.gelu_grad(x, approximate=approximate, bias=b),
                     fastgelu.gelu_grad(x + b, approximate=approximate))
    xi = x.copy()
    assert fastgelu.gelu(xi, approximate, bias=b, out=xi) is xi
    assert same_bits(xi, want)
    dyi = dy.copy()
    assert fastgelu.gelu_grad(x, dyi, approximate, bias=b, out=dyi) is dyi
    assert same_bits(dyi, fastgelu.gelu_grad(x + b, dy, approximate))


def test_bias_fallback_layouts_agree(rng):
    """Non-contiguous x, mixed dtypes, lists and ufunc keywords take NumPy's x + b first: same values."""
    x = rng.standard_normal((50, 40))
    b = rng.standard_normal(40)
    assert same_bits(fastgelu.gelu(x.T.copy().T, bias=b), fastgelu.gelu(x + b))
    assert same_bits(fastgelu.gelu(x[:, ::-1], bias=b), fastgelu.gelu(x[:, ::-1] + b))
    x32 = x.astype(np.float32)
    assert same_bits(fastgelu.gelu(x32, bias=b), fastgelu.gelu(x32 + b))       # promotes to float64
    assert same_bits(fastgelu.gelu(x32, bias=b.astype(np.float32), dtype=np.float64),
                     fastgelu.gelu(x32 + b.astype(np.float32), dtype=np.float64))
    assert same_bits(fastgelu.gelu(x.tolist(), bias=b.tolist()), fastgelu.gelu(x + b))
    out = np.zeros_like(x)
    mask = x > 0
    fastgelu.gelu(x, bias=b, out=out, where=mask)
    assert np.array_equal(out[mask], fastgelu.gelu(x + b)[mask]) and not out[~mask].any()


def test_bias_with_shifted_overlap_is_safe(rng):
    buf = rng.standard_normal(1001)
    x = buf[:1000].reshape(10, 100)
    b = rng.standard_normal(100)
    want = fastgelu.gelu(x + b)
    out = buf[1:].reshape(10, 100)
    fastgelu.gelu(x, bias=b, out=out)
    assert np.array_equal(out, want)


@pytest.mark.parametrize("bad", [np.ones(4), np.ones((1, 5)), np.ones((5, 1)), np.ones(()), np.ones(6)])
def test_bias_wrong_shape_names_both_shapes(bad):
    x = np.ones((3, 5))
    out = np.full((3, 5), 7.0)
    with pytest.raises(ValueError, match=r"bias.*\(5,\).*\(3, 5\).*" + str(bad.shape).replace("(", r"\(")
                       .replace(")", r"\)")):
        fastgelu.gelu(x, bias=bad, out=out)
    assert (out == 7.0).all()
    with pytest.raises(ValueError, match="bias"):
        fastgelu.gelu_grad(x, x, bias=bad, out=out)
    assert (out == 7.0).all()


def test_bias_on_0d_and_bad_types():
    with pytest.raises(ValueError, match="bias"):
        fastgelu.gelu(np.float64(1.0), bias=np.ones(1))
    with pytest.raises(TypeError, match="gelu: bias "):
        fastgelu.gelu(np.ones((2, 2)), bias=np.ones(2, complex))
    with pytest.raises(TypeError, match="gelu: bias "):
        fastgelu.gelu(np.ones((2, 2)), bias="ab")


def test_bias_read_only_out_untouched():
    x = np.ones((4, 8), np.float32)
    out = np.zeros((4, 8), np.float32)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        fastgelu.gelu(x, bias=np.ones(8, np.float32), out=out)
    assert not out.any()


def test_bias_large_parallel_matches_serial(rng):
    x = rng.standard_normal((512, 3072)).astype(np.float32)
    b = rng.standard_normal(3072).astype(np.float32)
    before = fastgelu.get_num_threads()
    try:
        fastgelu.set_num_threads(1)
        one = fastgelu.gelu(x, bias=b)
        fastgelu.set_num_threads(2)
        two = fastgelu.gelu(x, bias=b)
    finally:
        fastgelu.set_num_threads(before)
    assert np.array_equal(one, two)
    assert np.array_equal(one, fastgelu.gelu(x + b))
