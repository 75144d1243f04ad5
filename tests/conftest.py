import numpy as np
import pytest

from fastgelu import _dispatch

ISAS = _dispatch.available()


def pytest_addoption(parser):
    parser.addoption("--skip-huge", action="store_true",
                     help="skip tests that need ~9 GiB of memory (arrays of more than 2**31 elements)")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--skip-huge"):
        skip = pytest.mark.skip(reason="--skip-huge given")
        for item in items:
            if "huge" in item.keywords:
                item.add_marker(skip)


def pytest_configure(config):
    config.addinivalue_line("markers", "huge: needs ~9 GiB of memory; skipped with --skip-huge")


@pytest.fixture(params=ISAS)
def uf(request):
    """The six ufuncs of one ISA build (every build this CPU can run), as a dict by name."""
    return _dispatch.load(request.param)[1].UFUNCS


@pytest.fixture
def rng():
    return np.random.default_rng(20261122)
