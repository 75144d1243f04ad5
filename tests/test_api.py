"""The Python wrapper: variant choice, dtypes, scalars, in place, errors, ufunc protocol."""
import pickle
import tracemalloc

import numpy as np
import pytest

import fastgelu
from fastgelu import ufuncs

from common import RAW as VARIANTS


@pytest.mark.parametrize("approximate", VARIANTS)
def test_wrapper_picks_variant(approximate, rng):
    x = rng.standard_normal(1000)
    dy = rng.standard_normal(1000)
    fwd, grad = VARIANTS[approximate]
    assert np.array_equal(fastgelu.gelu(x, approximate), fwd(x))
    assert np.array_equal(fastgelu.gelu_grad(x, dy, approximate), grad(x, dy))
    assert np.array_equal(fastgelu.gelu_grad(x, approximate=approximate), grad(x, 1.0))


def test_default_is_exact(rng):
    x = rng.standard_normal(100)
    assert np.array_equal(fastgelu.gelu(x), ufuncs.gelu(x))


@pytest.mark.parametrize("bad", ["exact", "Tanh", "", None, 1, "erf"])
def test_bad_approximate(bad):
    with pytest.raises(ValueError, match="'none', 'tanh', 'sigmoid'"):
        fastgelu.gelu(np.ones(3), approximate=bad)
    with pytest.raises(ValueError, match="'none', 'tanh', 'sigmoid'"):
        fastgelu.gelu_grad(np.ones(3), approximate=bad)


def test_ufunc_identity():
    for name in ufuncs.__all__:
        u = getattr(ufuncs, name)
        assert isinstance(u, np.ufunc)
        assert u.__name__ == name
        assert pickle.loads(pickle.dumps(u)) is u
        if "_mul" in name:   # the gated ones: (gate, up) -> y, (gate, up, dy) -> (dgate, dup)
            assert (u.nin, u.nout) == ((3, 2) if name.endswith("_grad") else (2, 1))
            continue
        assert u.nin == (2 if name.endswith("_grad") else 1) and u.nout == 1
        assert {"f->f", "d->d"} <= set(u.types) or {"ff->f", "dd->d"} <= set(u.types)


def test_scalars_give_scalars():
    y = fastgelu.gelu(1.0)
    assert isinstance(y, np.float64) and abs(y - 0.8413447460685429) < 1e-15
    y32 = fastgelu.gelu(np.float32(1.0))
    assert isinstance(y32, np.float32)
    assert isinstance(fastgelu.gelu_grad(np.float32(0.5)), np.float32)
    assert fastgelu.gelu(np.array(2.0)).ndim == 0


def test_integers_give_float64_like_exp():
    for dt in (np.int32, np.int64, np.uint64):
        x = np.arange(-3, 4).astype(dt) if dt != np.uint64 else np.arange(7, dtype=dt)
        assert fastgelu.gelu(x).dtype == np.exp(x).dtype == np.float64
        np.testing.assert_allclose(fastgelu.gelu(x), fastgelu.gelu(x.astype(np.float64)), rtol=0)
    assert fastgelu.gelu([1, 2, 3]).dtype == np.float64


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("approximate", VARIANTS)
def test_in_place_returns_x_and_allocates_nothing(dtype, approximate, rng):
    x = rng.standard_normal(1 << 20).astype(dtype)
    want = fastgelu.gelu(x, approximate)
    tracemalloc.start()
    try:
        res = fastgelu.gelu(x, approximate, out=x)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert res is x
    assert np.array_equal(x, want)
    assert peak < 64 * 1024, peak  # NumPy reports its data allocations to tracemalloc


def test_gradient_in_place_over_dy(rng):
    x = rng.standard_normal(100000)
    dy = rng.standard_normal(100000)
    want = fastgelu.gelu_grad(x, dy)
    assert fastgelu.gelu_grad(x, dy, out=dy) is dy
    assert np.array_equal(dy, want)


def test_ufunc_keywords_pass_through(rng):
    x = rng.standard_normal(10)
    mask = x > 0
    out = np.full(10, 7.0)
    fastgelu.gelu(x, where=mask, out=out)
    assert np.array_equal(out[mask], ufuncs.gelu(x)[mask]) and (out[~mask] == 7.0).all()
    assert fastgelu.gelu(x, dtype=np.float32).dtype == np.float32
    assert fastgelu.gelu(x.astype(np.float32), dtype=np.float64).dtype == np.float64


def test_array_ufunc_objects_reach_the_ufunc():
    seen = {}

    class Duck:
        dtype = np.dtype(np.float64)

        def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
            seen["call"] = (ufunc, method, inputs, kwargs)
            return "handled"

    d = Duck()
    assert fastgelu.gelu(d, "tanh") == "handled"
    assert seen["call"][0] is ufuncs.gelu_tanh and seen["call"][2][0] is d
    assert fastgelu.gelu_grad(d, d) == "handled"
    assert seen["call"][0] is ufuncs.gelu_grad


@pytest.mark.parametrize("bad", [np.ones(3, complex), np.array(["a", "b"]), np.array([1.0, None]), None,
                                 "text", 1 + 2j])
def test_non_real_inputs_are_type_errors_naming_the_argument(bad):
    with pytest.raises(TypeError, match="gelu: x "):
        fastgelu.gelu(bad)
    with pytest.raises(TypeError, match="gelu_grad: x "):
        fastgelu.gelu_grad(bad)
    if bad is not None:  # grad_output=None means "no upstream gradient"
        with pytest.raises(TypeError, match="gelu_grad: grad_output "):
            fastgelu.gelu_grad(np.ones(2), bad)
