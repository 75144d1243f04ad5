"""Paths that used to warn from fastgelu's own code (pytest's filterwarnings turns any such warning into an
error, so these fail if the warning comes back)."""
import warnings

import numpy as np
import pytest

import fastgelu


@pytest.mark.parametrize("func", ["gelu", "gelu_grad"])
def test_bias_fallback_with_overflow_is_silent(func):
    x = np.array([3e38, -3e38, np.inf, 1.0, np.nan, 2.0] * 4, np.float32).reshape(4, 6)[:, ::2]  # strided
    b = np.array([3e38, -3e38, -np.inf], np.float32)
    want = getattr(fastgelu, func)(np.ascontiguousarray(x), bias=b)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = getattr(fastgelu, func)(x, bias=b)
        out = np.zeros((4, 3), np.float32)
        getattr(fastgelu, func)(x, bias=b, out=out)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("approximate", ["none", "tanh", "sigmoid"])
def test_torch_tensor_in_tensor_out_without_deprecation_warning(approximate):
    torch = pytest.importorskip("torch")
    t = torch.linspace(-4, 4, 50)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = fastgelu.gelu(t, approximate=approximate)
        g = fastgelu.gelu_grad(t, torch.ones(50), approximate=approximate, bias=torch.zeros(50))
    assert isinstance(y, torch.Tensor) and isinstance(g, torch.Tensor)
    np.testing.assert_array_equal(y.numpy(), fastgelu.gelu(t.numpy(), approximate=approximate))
    np.testing.assert_array_equal(g.numpy(), fastgelu.gelu_grad(t.numpy(), approximate=approximate))
