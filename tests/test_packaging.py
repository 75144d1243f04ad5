"""Packaging facts a newcomer relies on: metadata in current form, the README's commands, the test tools."""
import pathlib
import re
import tomllib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PYPROJECT = ROOT / "pyproject.toml"
pytestmark = pytest.mark.skipif(not PYPROJECT.exists(), reason="needs the source checkout")


def _project():
    return tomllib.loads(PYPROJECT.read_text())


def test_license_is_an_spdx_string():
    # a TOML table here makes setuptools >= 77 warn on every build
    assert isinstance(_project()["project"]["license"], str)


def test_fastgelu_warnings_are_errors_in_tests():
    assert "error:::fastgelu" in _project()["tool"]["pytest"]["ini_options"]["filterwarnings"]


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


def test_cibuildwheel_covers_the_release_platforms():
    cfg = _project()["tool"]["cibuildwheel"]
    assert set(cfg["linux"]["archs"]) == {"x86_64", "aarch64"}
    assert set(cfg["macos"]["archs"]) == {"arm64", "x86_64"}
    assert cfg["windows"]["archs"] == ["AMD64"]
    assert "cp310-*" in cfg["build"]


def test_comments_cite_only_documents_that_exist():
    """A comment sending the reader to a .md file must name one that is in the checkout."""
    generated = {"_kernels_generic.c", "_kernels_avx2.c", "_kernels_avx512.c"}  # Cython's output
    sources = [p for d in ("fastgelu", "tools", "tests", "benches") for p in (ROOT / d).glob("*")
               if p.suffix in (".py", ".pyx", ".pxi", ".c") and p.name not in generated]
    cited = {(p.name, m) for p in sources for m in re.findall(r"\b([\w./-]+\.md)\b", p.read_text())}
    missing = {(f, m) for f, m in cited if not any((ROOT / d / m).exists() for d in (".", "docs"))}
    assert not missing, missing


def test_readme_speed_summary_is_the_data_files_min_max(capsys):
    """Each row of the README's summary table is the exact min-max of the speed table it summarises
    (docs/data/, the tables of docs/performance.md): nothing rounded up on the way to the summary."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("plot_speed", ROOT / "tools" / "plot_speed.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    data = sorted((ROOT / "docs" / "data").glob("speed-*.csv"))
    assert data
    tool.readme_rows([str(p) for p in data])
    rows = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("| ") and "·" in ln]
    readme = (ROOT / "README.md").read_text().splitlines()
    builds = sum(len({ln.split(",")[4] for ln in p.read_text().splitlines()[1:] if ln and not ln.startswith("#")
                      and not ln.startswith("function,")}) for p in data)
    assert len(rows) == 1 + builds  # the heading and a row per build and CPU
    assert [r for r in rows if r not in readme] == []
