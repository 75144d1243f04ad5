"""The NumPy layer object fastgelu._module.GELU (exported as fastgelu.GELU): values, in place, backward,
repr and errors."""
import numpy as np
import pytest

import fastgelu
from fastgelu._module import GELU

from common import APPROXIMATE, DTYPES


@pytest.mark.parametrize("approximate", APPROXIMATE)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_forward_values_and_input_untouched(approximate, dtype, rng):
    x = (rng.standard_normal((7, 33)) * 3).astype(dtype)
    keep = x.copy()
    m = GELU(approximate)
    y = m(x)
    assert y.dtype == x.dtype and y.shape == x.shape
    assert np.array_equal(y, fastgelu.gelu(x, approximate))
    assert np.array_equal(m.forward(x), y)
    assert np.array_equal(x, keep)


def test_seed_doc_example():
    y = GELU()(np.array([-2.0, -1.0, 0.0, 1.0, 2.0]))
    np.testing.assert_allclose(y, [-0.0455, -0.1587, 0.0, 0.8413, 1.9545], atol=1e-4)
    y = GELU(approximate="tanh")(np.random.default_rng(0).standard_normal((4, 512)))
    assert y.shape == (4, 512)


@pytest.mark.parametrize("approximate", APPROXIMATE)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_inplace_returns_the_input_with_the_result(approximate, dtype, rng):
    x = (rng.standard_normal(1000) * 3).astype(dtype)
    want = fastgelu.gelu(x, approximate)
    m = GELU(approximate, inplace=True)
    res = m(x)
    assert res is x
    assert np.array_equal(x, want)


def test_inplace_on_a_strided_view_writes_only_the_view(rng):
    base = rng.standard_normal((6, 8))
    keep = base.copy()
    view = base[::2, 1::3]
    want = fastgelu.gelu(view)
    assert GELU(inplace=True)(view) is view
    assert np.array_equal(base[::2, 1::3], want)
    mask = np.ones(base.shape, bool)
    mask[::2, 1::3] = False
    assert np.array_equal(base[mask], keep[mask])


@pytest.mark.parametrize("approximate", APPROXIMATE)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_backward_is_gelu_grad_at_the_forward_input(approximate, dtype, rng):
    x = (rng.standard_normal((5, 40)) * 3).astype(dtype)
    dy = rng.standard_normal((5, 40)).astype(dtype)
    m = GELU(approximate)
    m(x)
    dx = m.backward(dy)
    assert dx.dtype == x.dtype
    assert np.array_equal(dx, fastgelu.gelu_grad(x, dy, approximate))
    # ones: the derivative itself; backward can be called again (the input stays saved)
    assert np.array_equal(m.backward(np.ones_like(dy)), fastgelu.gelu_grad(x, approximate=approximate))


@pytest.mark.parametrize("approximate", APPROXIMATE)
def test_inplace_backward_uses_the_input_before_it_was_overwritten(approximate, rng):
    x = rng.standard_normal(500) * 3
    original = x.copy()
    dy = rng.standard_normal(500)
    m = GELU(approximate, inplace=True)
    m(x)
    assert not np.array_equal(x, original)  # overwritten by the result
    assert np.array_equal(m.backward(dy), fastgelu.gelu_grad(original, dy, approximate))


def test_inplace_saves_a_copy_and_out_of_place_saves_a_reference(rng):
    x = rng.standard_normal(10)
    m = GELU()
    m(x)
    assert m._saved is x
    mi = GELU(inplace=True)
    mi(x)
    assert mi._saved is not x and not np.shares_memory(mi._saved, x)


def test_backward_follows_the_latest_forward(rng):
    m = GELU()
    a, b = rng.standard_normal(20), rng.standard_normal(20)
    m(a)
    m(b)
    assert np.array_equal(m.backward(np.ones(20)), fastgelu.gelu_grad(b))


def test_backward_broadcasts_grad_output(rng):
    x = rng.standard_normal((3, 4))
    m = GELU()
    m(x)
    assert np.array_equal(m.backward(2.0), fastgelu.gelu_grad(x, 2.0))
    dy = rng.standard_normal(4)
    assert np.array_equal(m.backward(dy), fastgelu.gelu_grad(x, np.broadcast_to(dy, x.shape)))


def test_scalars_and_lists():
    m = GELU()
    assert abs(m(1.0) - 0.8413447460685429) < 1e-15
    assert abs(m.backward(1.0) - 1.0833154705876864) < 1e-15
    np.testing.assert_array_equal(m([0.0, 1.0]), fastgelu.gelu(np.array([0.0, 1.0])))


def test_backward_before_forward_is_a_clear_runtime_error():
    m = GELU()
    with pytest.raises(RuntimeError, match="backward called before forward"):
        m.backward(np.ones(3))
    m(np.ones(3))
    m.clear()
    with pytest.raises(RuntimeError, match="before forward"):
        m.backward(np.ones(3))


def test_repr_and_extra_repr():
    assert repr(GELU()) == "GELU(approximate='none')"
    assert GELU().extra_repr() == "approximate='none'"
    assert repr(GELU("tanh")) == "GELU(approximate='tanh')"
    assert repr(GELU(approximate="tanh", inplace=True)) == "GELU(approximate='tanh', inplace=True)"
    assert GELU("sigmoid", True).extra_repr() == "approximate='sigmoid', inplace=True"
    m = GELU("sigmoid")
    assert (m.approximate, m.inplace) == ("sigmoid", False)


@pytest.mark.parametrize("bad", ["exact", "Tanh", "", None, 1, "erf", ["none"]])
def test_invalid_approximate_at_construction(bad):
    with pytest.raises(ValueError, match="approximate must be one of 'none', 'tanh', 'sigmoid'"):
        GELU(bad)


def test_inplace_needs_a_writable_floating_array():
    with pytest.raises(TypeError, match="NumPy array"):
        GELU(inplace=True)([1.0, 2.0])
    with pytest.raises(TypeError, match="floating dtype"):
        GELU(inplace=True)(np.arange(3))
    x = np.ones(3)
    x.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        GELU(inplace=True)(x)
    m = GELU(inplace=True)
    with pytest.raises(TypeError):
        m(np.ones(3, complex))
    with pytest.raises(RuntimeError, match="before forward"):  # a failed forward saves nothing
        m.backward(1.0)


def test_bad_input_is_a_type_error_and_saves_nothing():
    m = GELU()
    with pytest.raises(TypeError, match="gelu: x "):
        m(np.array(["a"]))
    with pytest.raises(RuntimeError, match="before forward"):
        m.backward(1.0)


def test_exported_from_the_package():
    if not hasattr(fastgelu, "GELU"):
        pytest.fail("fastgelu.GELU is not exported yet: add `from ._module import GELU` to fastgelu/__init__.py")
    assert fastgelu.GELU is GELU and "GELU" in fastgelu.__all__
