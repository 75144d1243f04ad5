import os
import sys

import numpy as np
import pytest

# the hostile-input test files share tests/hostile_common.py; importlib mode puts no test folder on sys.path
sys.path.insert(0, os.path.dirname(__file__))

from fastgelu import _dispatch  # noqa: E402

# Tests start `python -c ...` / `python -m fastgelu` from the checkout: without this, Python would put the
# checkout first on sys.path and import the uncompiled source folder instead of the installed package
# (PYTHONSAFEPATH: Python >= 3.11, the oldest fastgelu supports).
os.environ.setdefault("PYTHONSAFEPATH", "1")

ISAS = _dispatch.available()
HUGE_BYTES = 9 << 30  # the > 2**31-element test holds 8.6 GB at once


def pytest_addoption(parser):
    parser.addoption("--run-huge", action="store_true",
                     help="also run tests that need ~9 GiB of memory (arrays of more than 2**31 elements)")


def available_memory():
    """Bytes the kernel says a new allocation can get without swapping (None where unknown)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def pytest_collection_modifyitems(config, items):
    if config.getoption("--run-huge"):
        avail = available_memory()
        if avail is None or avail >= HUGE_BYTES:
            return
        skip = pytest.mark.skip(reason=f"needs ~9 GiB free, this machine has {avail / 2**30:.1f} GiB available")
    else:
        skip = pytest.mark.skip(reason="needs ~9 GiB of memory: opt in with `pytest --run-huge`")
    for item in items:
        if "huge" in item.keywords:
            item.add_marker(skip)


def pytest_configure(config):
    config.addinivalue_line("markers", "huge: needs ~9 GiB of memory; runs only with --run-huge")


@pytest.fixture(autouse=True, scope="session")
def _outside_the_checkout(tmp_path_factory):
    """Run from an empty folder, so `python -c` subprocesses (which put their folder first on sys.path) import
    the installed fastgelu, not the checkout's uncompiled source folder."""
    old = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("cwd"))
    yield
    os.chdir(old)


@pytest.fixture(params=ISAS)
def uf(request):
    """The six ufuncs of one ISA build (every build this CPU can run), as a dict by name."""
    return _dispatch.load(request.param)[1].UFUNCS


@pytest.fixture
def rng():
    return np.random.default_rng(20261122)


@pytest.fixture
def fed_policy():
    """The kernel module with its threading policy reset and fed only by the test: no load samples from this
    machine (a busy test machine would cap the team), a team of 2 even on a 1-CPU machine; all restored after."""
    import fastgelu
    k = fastgelu.ufuncs._kernels
    if not fastgelu.get_config()["openmp"]:
        pytest.skip("built without OpenMP")
    before = fastgelu.get_num_threads()
    k._load_source(None)
    k._backoff(adaptive=True, reset=True, cpus=(0, 0))
    fastgelu.set_num_threads(2)
    yield k
    k._load_source()
    k._backoff(adaptive=True, reset=True, cpus=(0, 0))
    fastgelu.set_num_threads(before)
