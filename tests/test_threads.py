"""Thread control: OMP/threadpoolctl/set_num_threads, and results independent of the thread count."""
import subprocess
import sys

import numpy as np
import pytest

import fastgelu
from fastgelu._reference import NAMES


@pytest.fixture
def restore_threads():
    before = fastgelu.get_num_threads()
    yield
    fastgelu.set_num_threads(before)


def test_results_do_not_depend_on_thread_count(uf, rng, restore_threads):
    x = (rng.standard_normal(1_000_003) * 4).astype(np.float32)
    dy = rng.standard_normal(x.size).astype(np.float32)
    for name in NAMES:
        args = (x, dy) if name.endswith("_grad") else (x,)
        fastgelu.set_num_threads(1)
        one = uf[name](*args)
        fastgelu.set_num_threads(2)
        two = uf[name](*args)
        assert np.array_equal(one, two), name


def test_set_get_num_threads(restore_threads):
    fastgelu.set_num_threads(1)
    assert fastgelu.get_num_threads() == 1
    assert fastgelu.get_config()["num_threads"] == 1
    with pytest.raises(ValueError, match="n must be >= 1"):
        fastgelu.set_num_threads(0)
    with pytest.raises(TypeError):
        fastgelu.set_num_threads(1.5)


def test_threadpoolctl_sees_and_limits_openmp():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    if not fastgelu.get_config()["openmp"]:
        pytest.skip("built without OpenMP")
    info = threadpoolctl.threadpool_info()
    assert any(p["user_api"] == "openmp" for p in info), info
    with threadpoolctl.threadpool_limits(1):
        assert fastgelu.get_num_threads() == 1
    with threadpoolctl.threadpool_limits(1, user_api="openmp"):
        assert fastgelu.get_num_threads() == 1


def test_omp_num_threads_is_followed():
    if not fastgelu.get_config()["openmp"]:
        pytest.skip("built without OpenMP")
    code = "import fastgelu; print(fastgelu.get_num_threads())"
    out = subprocess.run([sys.executable, "-c", code], env={"OMP_NUM_THREADS": "1", "PATH": ""},
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == "1"


def test_config_keys():
    cfg = fastgelu.get_config()
    assert {"isa", "isa_available", "openmp", "num_threads", "version"} <= set(cfg)
    assert cfg["isa"] in cfg["isa_available"]
    assert cfg["version"] == fastgelu.__version__
