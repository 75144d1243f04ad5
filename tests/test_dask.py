"""dask arrays through fastgelu.gelu / gelu_grad and the raw ufuncs: lazy, then equal to NumPy bit for bit,
with the threaded scheduler and on a distributed cluster of worker processes."""
import logging
import os

import numpy as np
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")

import fastgelu  # noqa: E402
from fastgelu import ufuncs  # noqa: E402

from common import APPROXIMATE, DTYPES, RAW, dtype_id  # noqa: E402

# blocks that are ragged and, for the column splits, strided views of x
SHAPE, CHUNKS = (301, 67), (100, 20)

LOADS = []


def _count_load(block):
    if block.size:  # dask may call with empty arrays to infer metadata
        LOADS.append(block.size)
    return block


def lazy(x):
    """A dask array over x whose blocks record when they are really computed."""
    return da.from_array(x, chunks=CHUNKS).map_blocks(_count_load, dtype=x.dtype)


def data(dtype, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(SHAPE) * 3).astype(dtype)


# ---- threaded scheduler ------------------------------------------------------------------------------------

@pytest.mark.parametrize("approximate", APPROXIMATE)
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_gelu_is_lazy_then_equal_to_numpy(approximate, dtype):
    x = data(dtype)
    LOADS.clear()
    fwd, _ = RAW[approximate]
    results = [fastgelu.gelu(lazy(x), approximate), fwd(lazy(x))]
    for r in results:
        assert isinstance(r, da.Array)
        assert r.dtype == x.dtype and r.shape == x.shape
    assert LOADS == []  # nothing computed yet
    want = fastgelu.gelu(x, approximate)
    for r in results:
        got = r.compute(scheduler="threads")
        assert isinstance(got, np.ndarray) and got.dtype == x.dtype
        assert np.array_equal(got, want)
    assert sum(LOADS) == 2 * x.size


@pytest.mark.parametrize("approximate", APPROXIMATE)
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_gelu_grad_is_lazy_then_equal_to_numpy(approximate, dtype):
    x = data(dtype)
    dy = data(dtype, seed=1)
    LOADS.clear()
    _, grad = RAW[approximate]
    results = {
        "dask dy": fastgelu.gelu_grad(lazy(x), lazy(dy), approximate),
        "numpy dy": fastgelu.gelu_grad(lazy(x), dy, approximate),
        "no dy": fastgelu.gelu_grad(lazy(x), approximate=approximate),
        "raw": grad(lazy(x), lazy(dy)),
    }
    for r in results.values():
        assert isinstance(r, da.Array) and r.dtype == x.dtype
    assert LOADS == []
    want = fastgelu.gelu_grad(x, dy, approximate)
    want_no_dy = fastgelu.gelu_grad(x, approximate=approximate)
    for name, r in results.items():
        got = r.compute(scheduler="threads")
        assert np.array_equal(got, want_no_dy if name == "no dy" else want), name


def test_composes_with_other_dask_operations():
    x = data(np.float64)
    a = da.from_array(x, chunks=CHUNKS)
    r = fastgelu.gelu(a * 2.0 - 1.0, "tanh") + 1.0
    assert isinstance(r, da.Array)
    want = fastgelu.gelu(x * 2.0 - 1.0, "tanh") + 1.0
    np.testing.assert_array_equal(r.compute(scheduler="threads"), want)
    # a reduction sums in another order: equal to rounding
    np.testing.assert_allclose(r.sum(axis=0).compute(scheduler="threads"), want.sum(axis=0), rtol=1e-13)


def test_bias_is_lazy_and_fused():
    x = data(np.float32)
    b = np.random.default_rng(2).standard_normal(SHAPE[-1]).astype(np.float32)
    want = fastgelu.gelu(x, bias=b)
    np.testing.assert_array_equal(want, fastgelu.gelu(x + b))  # the fused pass is gelu(x + b)
    for bias in (b, da.from_array(b, chunks=CHUNKS[-1])):
        LOADS.clear()
        r = fastgelu.gelu(lazy(x), bias=bias)
        assert isinstance(r, da.Array) and r.shape == x.shape
        assert LOADS == []
        np.testing.assert_array_equal(r.compute(scheduler="threads"), want)
    dy = data(np.float32, seed=3)
    LOADS.clear()
    r = fastgelu.gelu_grad(lazy(x), dy, bias=b)
    assert isinstance(r, da.Array) and LOADS == []
    np.testing.assert_array_equal(r.compute(scheduler="threads"), fastgelu.gelu_grad(x, dy, bias=b))


# ---- distributed: worker processes -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    # Workers are spawned processes (not forked: GNU OpenMP is not fork-safe); they unpickle the ufuncs by
    # reference, i.e. import fastgelu themselves, so they need to find it where this process does.
    root = os.path.dirname(os.path.dirname(os.path.abspath(fastgelu.__file__)))
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (root, old) if p)
    try:
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      dashboard_address=None, silence_logs=logging.ERROR) as cluster, \
                distributed.Client(cluster, set_as_default=False) as c:
            yield c
    finally:
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old


def test_workers_are_processes_running_this_fastgelu(client):
    # defined here so that it travels by value: workers cannot import this test module by name
    def worker_info():
        import os
        import sys

        import fastgelu as f
        return os.getpid(), f.__file__, f.get_config()["isa"], "fastgelu._kernels_generic" in sys.modules

    info = client.run(worker_info)
    assert len(info) == 2
    for pid, path, isa, _ in info.values():
        assert pid != os.getpid()
        assert os.path.samefile(path, fastgelu.__file__)
        assert isa == fastgelu.get_config()["isa"]


@pytest.mark.parametrize("approximate", APPROXIMATE)
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=dtype_id)
def test_distributed_equals_numpy(client, approximate, dtype):
    x = data(dtype)
    dy = data(dtype, seed=1)
    a = da.from_array(x, chunks=CHUNKS)
    fwd, grad = RAW[approximate]
    lazy_results = [fastgelu.gelu(a, approximate), fwd(a), fastgelu.gelu_grad(a, dy, approximate),
                    grad(a, da.from_array(dy, chunks=CHUNKS))]
    got = client.compute(lazy_results, sync=True)
    want = [fastgelu.gelu(x, approximate)] * 2 + [fastgelu.gelu_grad(x, dy, approximate)] * 2
    for g, w in zip(got, want):
        assert g.dtype == x.dtype
        assert np.array_equal(g, w)


def test_distributed_low_precision_and_bias(client):
    x16 = data(np.float16)
    got = client.compute(fastgelu.gelu(da.from_array(x16, chunks=CHUNKS)), sync=True)
    assert got.dtype == np.float16 and np.array_equal(got, fastgelu.gelu(x16))
    x = data(np.float32)
    b = np.linspace(-1, 1, SHAPE[-1], dtype=np.float32)
    got = client.compute(fastgelu.gelu(da.from_array(x, chunks=CHUNKS), "tanh", bias=b), sync=True)
    assert np.array_equal(got, fastgelu.gelu(x, "tanh", bias=b))
