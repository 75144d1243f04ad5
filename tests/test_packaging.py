"""Packaging facts a newcomer relies on: the sdist holds what the build reads, metadata that agrees with the
code, the README's commands, the test tools."""
import pathlib
import re
import tomllib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PYPROJECT = ROOT / "pyproject.toml"
pytestmark = pytest.mark.skipif(not PYPROJECT.exists(), reason="needs the source checkout")


def _project():
    return tomllib.loads(PYPROJECT.read_text())


def test_requirements_match_the_test_extra():
    extra = _project()["project"]["optional-dependencies"]["test"]
    req = [ln.strip() for ln in (ROOT / "tests" / "requirements.txt").read_text().splitlines()
           if ln.strip() and not ln.startswith("#")]
    assert sorted(req) == sorted(extra)


def test_readme_opens_with_install_bench_and_test_commands():
    text = (ROOT / "README.md").read_text()
    block = re.search(r"```sh\n(.*?)```", text, re.S).group(1).splitlines()
    assert len(block) == 2
    # run in the checkout, `python -m ...` would import the uncompiled source folder: commands instead
    assert block[0].endswith("&& fastgelu bench --quick") and "python -m" not in block[0]
    assert "pytest" in block[1] and "python -m pytest" not in block[1]
    assert "-e " not in block[1]  # the tests run against the installed package, not a second build


def test_fastgelu_command_runs_from_the_checkout():
    """The README's first command ends with the `fastgelu` console script, run in the checkout."""
    import shutil
    import subprocess
    assert _project()["project"]["scripts"]["fastgelu"] == "fastgelu.__main__:main"
    exe = shutil.which("fastgelu")
    if exe is None:
        pytest.skip("fastgelu is not installed as a command here (an install without its scripts)")
    out = subprocess.run([exe, "info"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "isa:" in out.stdout, out.stderr


def _build_inputs():
    """The files a build of the kernel modules reads: the per-ISA stubs, what they `include` and `cimport`
    (transitively), the headers named by `cdef extern from`, and what those headers #include, as paths
    relative to the checkout."""
    pkg, src = ROOT / "fastgelu", ROOT / "fastgelu" / "src"
    todo = sorted(pkg.glob("_kernels_*.pyx"))
    seen = set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        text = path.read_text()
        if path.suffix == ".h":
            todo += [src / n for n in re.findall(r'^#include "([^"]+)"', text, re.M)]
            continue
        # a file setup.py renders is read from its template (and _lists.py)
        names = re.findall(r'^include "([^"]+)"', text, re.M)
        if path.name.endswith(".pxi.in"):
            todo.append(pkg / "_lists.py")
            if "FAMILIES" in text:          # a template that includes the files _lists.py names
                from fastgelu import _lists
                names += list(_lists.FAMILIES.values())
            names = [n for n in names if "{{" not in n]
        todo += [pkg / (n + ".in") if (pkg / (n + ".in")).exists() else pkg / n for n in names]
        todo += [pkg / (m + ".pxd") for m in re.findall(r"^(?:from|cimport) fastgelu\.(\w+)", text, re.M)]
        todo += [src / n for n in re.findall(r'^cdef extern from "(fg_[^"]+)"', text, re.M)]
    missing = [p for p in seen if not p.exists()]
    assert not missing, missing  # the scan itself must find only real files
    return {str(p.relative_to(ROOT)) for p in seen}


def test_build_inputs_cover_every_header():
    """The scan of _build_inputs reaches every header of src/ and both Cython layers (else it is wrong, or
    a file is dead)."""
    found = _build_inputs()
    assert {str(p.relative_to(ROOT)) for p in (ROOT / "fastgelu" / "src").glob("*.h")} <= found
    assert {"fastgelu/_kernels.pxi", "fastgelu/_c.pxd"} <= found


@pytest.fixture(scope="module")
def sdist(tmp_path_factory):
    """The source distribution setup.py makes, as {member name without the top folder: bytes}. Cython is
    stubbed out: an sdist ships the Cython sources, cythonizing is the build's job (and takes minutes)."""
    import subprocess
    import sys
    import tarfile
    out = tmp_path_factory.mktemp("sdist")
    egg = tmp_path_factory.mktemp("egg")
    code = ("import sys, Cython.Build; Cython.Build.cythonize = lambda exts, **kw: exts; "
            f"sys.argv = ['setup.py', '-q', 'egg_info', '--egg-base', {str(egg)!r}, 'sdist', '-d', {str(out)!r}]; "
            "exec(compile(open('setup.py').read(), 'setup.py', 'exec'), "
            f"{{'__name__': '__main__', '__file__': {str(ROOT / 'setup.py')!r}}})")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    (path,) = out.glob("*.tar.gz")
    with tarfile.open(path) as tar:
        return {m.name.split("/", 1)[1]: tar.extractfile(m).read() for m in tar.getmembers()
                if m.isfile() and "/" in m.name}


def test_sdist_holds_what_the_build_and_the_package_read(sdist):
    need = _build_inputs() | {"setup.py", "pyproject.toml", "README.md"}
    need |= {str(p.relative_to(ROOT)) for p in (ROOT / "fastgelu").glob("*.py")}
    assert sorted(need - set(sdist)) == []


def _requirement_floor(reqs, name):
    """The lower bound `name>=X` in a list of requirement strings, as a tuple of ints."""
    (spec,) = [r for r in reqs if re.match(rf"{name}\b", r)]
    return tuple(int(p) for p in re.search(r">=\s*([\d.]+)", spec).group(1).split("."))


def test_metadata_agrees_with_the_code(sdist):
    """The sdist's metadata states what the code relies on: NumPy 2's C API (setup.py compiles against
    NPY_2_0_API_VERSION), the PyTorch release fastgelu.torch refuses to run below, the Python the
    package's own syntax needs, and an SPDX license expression (a TOML table makes setuptools warn)."""
    meta = sdist["PKG-INFO"].decode()
    requires = re.findall(r"^Requires-Dist: (.*)$", meta, re.M)
    assert "NPY_2_0_API_VERSION" in (ROOT / "setup.py").read_text()
    assert _requirement_floor([r for r in requires if "extra" not in r], "numpy") >= (2, 0)
    checked = re.search(r"needs PyTorch >= ([\d.]+)", (ROOT / "fastgelu" / "torch.py").read_text()).group(1)
    torch_reqs = [r.split(";")[0] for r in requires if "extra == \"torch\"" in r]
    assert _requirement_floor(torch_reqs, "torch") >= tuple(int(p) for p in checked.split("."))
    assert re.search(r"^License-Expression: \S", meta, re.M), meta[:2000]
    floor = tuple(int(p) for p in re.search(r"^Requires-Python: >=([\d.]+)", meta, re.M).group(1).split("."))
    import ast
    for p in (ROOT / "fastgelu").glob("*.py"):   # every module parses with the oldest Python it admits
        ast.parse(p.read_text(), feature_version=floor[:2])


def test_comments_cite_only_documents_that_exist():
    """A comment sending the reader to a .md file must name one that is in the checkout."""
    generated = {"_kernels_generic.c", "_kernels_avx2.c", "_kernels_avx512.c"}  # Cython's output
    sources = [p for d in ("fastgelu", "tools", "tests", "benches") for p in (ROOT / d).glob("*")
               if p.suffix in (".py", ".pyx", ".pxi", ".c") and p.name not in generated]
    cited = {(p.name, m) for p in sources for m in re.findall(r"\b([\w./-]+\.md)\b", p.read_text())}
    missing = {(f, m) for f, m in cited if not any((ROOT / d / m).exists() for d in (".", "docs"))}
    assert not missing, missing
