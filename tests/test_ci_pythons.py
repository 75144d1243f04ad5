"""The CPythons fastgelu claims are the ones CI tests: pyproject.toml's classifiers, requires-python and
cibuildwheel list against .ci/run's stages, and the lower bounds CI builds with against the requirements."""
import pathlib
import re
import sys
import tomllib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
CI = ROOT / ".ci" / "run"

pytestmark = pytest.mark.skipif(not CI.exists(), reason="needs the source checkout (.ci/run)")


def _version(text):
    return tuple(int(p) for p in text.split("."))


@pytest.fixture(scope="module")
def meta():
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


@pytest.fixture(scope="module")
def ci_pythons():
    """{(3, 11), ...}: the host's CPython and one per Debian-root stage of .ci/run."""
    text = CI.read_text()
    host = re.findall(r"^host_python=(3\.\d+)$", text, re.M)
    roots = re.findall(r"^if fits \d+ \"[^\"]*\"; then debian_python_stage (3\.\d+) \w+; fi$", text, re.M)
    assert len(host) == 1 and len(roots) >= 2, (host, roots)
    return {_version(v) for v in host + roots}


def test_classifiers_name_the_tested_pythons(meta, ci_pythons):
    prefix = "Programming Language :: Python :: "
    claimed = {_version(c[len(prefix):]) for c in meta["project"]["classifiers"]
               if re.fullmatch(re.escape(prefix) + r"3\.\d+", c)}
    assert claimed == ci_pythons


def test_requires_python_starts_at_the_oldest_tested(meta, ci_pythons):
    m = re.fullmatch(r">=(3\.\d+)", meta["project"]["requires-python"])
    assert m and _version(m[1]) == min(ci_pythons)


def test_cibuildwheel_builds_requires_pythons_range(meta, ci_pythons):
    built = {(3, int(m)) for m in re.findall(r"\bcp3(\d+)-\*", meta["tool"]["cibuildwheel"]["build"])}
    assert built == {(3, m) for m in range(min(ci_pythons)[1], max(ci_pythons)[1] + 1)}


def test_min_requirements_pins_every_lower_bound(meta):
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import min_requirements
    finally:
        sys.path.pop(0)
    bounds = min_requirements.lower_bounds(ROOT / "pyproject.toml")
    reqs = meta["build-system"]["requires"] + meta["project"]["dependencies"]
    assert set(bounds) == {"setuptools", "Cython", "numpy"}
    for req in reqs:
        name, low = req.split(">=")
        assert bounds[name] == low, req   # one lower bound per package, build and run alike


def test_docs_matrix_names_every_tested_python(ci_pythons):
    text = (ROOT / "docs" / "install.md").read_text()
    table = text[text.index("## What is tested where"):]
    for v in ci_pythons:
        assert re.search(rf"^\| [^|\n]*\b{v[0]}\.{v[1]}\b", table, re.M), v
