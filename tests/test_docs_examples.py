"""Every example a user reads runs: each Python block of README.md and docs/*.md (the blocks of a page in
order, in one namespace, in a scratch directory, without network), and every docstring example of the public
names of fastgelu and fastgelu.torch (numpydoc sections, doctests).

A block that cannot run here is marked by the line `<!-- not run: reason -->` right before it; the project
allows two such marks in all. A page whose blocks import an optional package that is not installed (torch,
dask, onnxruntime, transformers) is skipped with its name."""
import doctest
import inspect
import os
import pathlib
import re
import socket

import pytest

import fastgelu

ROOT = pathlib.Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
NOT_RUN = "<!-- not run:"
OPTIONAL = ("torch", "dask", "distributed", "onnxruntime", "onnx", "onnxscript", "transformers", "ml_dtypes",
            "matplotlib", "threadpoolctl")
pytestmark = pytest.mark.skipif(not (ROOT / "docs").is_dir(), reason="needs the source checkout")


def python_blocks(text):
    """[(line number, code, skip reason or None)] of the ```python blocks of a Markdown text."""
    blocks, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        if lines[i].strip() == "```python":
            mark = lines[i - 1].strip() if i else ""
            reason = mark[len(NOT_RUN):].rstrip("->").strip() if mark.startswith(NOT_RUN) else None
            j = i + 1
            while lines[j].strip() != "```":
                j += 1
            blocks.append((i + 1, "\n".join(lines[i + 1:j]) + "\n", reason))
            i = j
        i += 1
    return blocks


@pytest.fixture
def no_network(monkeypatch):
    """Connections beyond this machine fail (a local dask cluster talks over loopback, which stays open)."""
    real = socket.socket.connect

    def connect(self, address):
        host = address[0] if isinstance(address, tuple) else address
        if self.family in (socket.AF_INET, socket.AF_INET6) and host not in ("127.0.0.1", "::1", "localhost"):
            raise OSError(f"the documentation's examples must not use the network (connect to {address!r})")
        return real(self, address)
    monkeypatch.setattr(socket.socket, "connect", connect)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_pages_python_blocks_run(page, tmp_path, monkeypatch, no_network):
    blocks = [b for b in python_blocks(page.read_text()) if b[2] is None]
    if not blocks:
        pytest.skip("no Python block")
    monkeypatch.chdir(tmp_path)
    before = fastgelu._api_config._threads_setting
    namespace = {"__name__": f"docs_{page.stem}"}
    try:
        for line, code, _ in blocks:
            try:
                exec(compile(code, f"{page.name}:{line}", "exec"), namespace)
            except ModuleNotFoundError as e:
                if e.name and e.name.split(".")[0] in OPTIONAL:
                    pytest.skip(f"{page.name}:{line} needs {e.name}")
                raise
    finally:
        client = namespace.get("client")
        if client is not None and hasattr(client, "close"):   # a dask Client started by an example
            client.close()
        fastgelu.set_num_threads(before)


def test_at_most_two_blocks_are_not_run():
    marked = [(p.name, line, why) for p in PAGES for line, _, why in python_blocks(p.read_text()) if why]
    assert len(marked) <= 2, marked
    assert all(why for _, _, why in marked), "a not-run mark must say why"


def test_the_block_finder_sees_marks():
    text = "a\n<!-- not run: needs a cluster -->\n```python\nx = 1\n```\n\n```python\ny = 2\n```\n"
    assert python_blocks(text) == [(3, "x = 1\n", "needs a cluster"), (7, "y = 2\n", None)]


# ---- docstrings ---------------------------------------------------------------------------------------------

def _public():
    """(qualified name, object) of every public function and class of fastgelu and fastgelu.torch."""
    found = [(f"fastgelu.{n}", getattr(fastgelu, n)) for n in fastgelu.__all__]
    try:
        import fastgelu.torch as fgt
    except ImportError:
        fgt = None
    if fgt is not None:
        found += [(f"fastgelu.torch.{n}", getattr(fgt, n)) for n in fgt.__all__]
    return [(n, o) for n, o in found if inspect.isfunction(o) or inspect.isclass(o)]


def _report_types():
    """The types of a PatchReport's entries: in the API reference beside fastgelu.torch's names, not in its
    __all__ (examples only: a named tuple's fields are its Attributes, it checks nothing)."""
    try:
        import fastgelu.torch as fgt
    except ImportError:
        return []
    return [(f"fastgelu.torch.{n}", getattr(fgt, n)) for n in ("Replacement", "LeftAlone")]


PUBLIC = _public()
REPORT_TYPES = _report_types()


@pytest.mark.parametrize("name, obj", PUBLIC, ids=[n for n, _ in PUBLIC])
def test_docstring_has_the_numpydoc_sections(name, obj):
    doc = inspect.getdoc(obj) or ""
    sections = set(re.findall(r"^(\w[\w ]*)\n-{3,}$", doc, re.M))
    assert "Examples" in sections, f"{name}: no Examples section"
    params = [p for p in inspect.signature(obj).parameters if p not in ("self",)]
    if params:
        assert "Parameters" in sections, f"{name}: no Parameters section"
    if inspect.isfunction(obj) and obj.__name__ != "show_config":
        assert "Returns" in sections, f"{name}: no Returns section"
    # every call that checks its arguments says what it raises (a class: its constructor's checks)
    if obj.__name__ not in ("get_num_threads", "get_config", "show_config", "PatchReport"):
        assert "Raises" in sections, f"{name}: no Raises section"


@pytest.mark.parametrize("name, obj", PUBLIC + REPORT_TYPES, ids=[n for n, _ in PUBLIC + REPORT_TYPES])
def test_docstring_examples_run(name, obj):
    finder = doctest.DocTestFinder(recurse=True)
    tests = [t for t in finder.find(obj, name, globs={}) if t.examples]
    assert tests, f"{name}: no doctest example"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    before = fastgelu._api_config._threads_setting
    try:
        for t in tests:
            runner.run(t)
    finally:
        fastgelu.set_num_threads(before)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed (output above)"
