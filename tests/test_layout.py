"""The package's layout rules, read from the checkout's files: no import circle among its modules, no source
file over 400 lines (generated tables aside), and the kernels' tables generated from the one list."""
import ast
import pathlib

import pytest

import fastgelu
from fastgelu import _lists, ufuncs

ROOT = pathlib.Path(__file__).resolve().parent.parent
PKG = ROOT / "fastgelu"
MAX_LINES = 400
# written by tools (tools/fit_*.py) or setup.py, never by hand: their length is the data's
GENERATED = {"_gelu_exact_coeffs.pxi", "_lists.pxi", "_ufuncs.pxi", "_forms.pxi", "fg_f32_tables.h"}

if not (PKG / "_lists.py").exists():
    pytest.skip("needs the checkout's sources beside the tests", allow_module_level=True)


def _module_name(path):
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports_at_import_time(path):
    """The fastgelu modules a module imports while it is itself being imported: module-level statements
    (also inside if/try there), not the lazy imports inside functions."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    todo = list(ast.parse(path.read_text()).body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.If, ast.Try)):
            todo += node.body + node.orelse + getattr(node, "finalbody", [])
            todo += [s for h in getattr(node, "handlers", []) for s in h.body]
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("fastgelu")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                mod = f"{base}.{node.module}" if node.module else base
            else:
                mod = node.module or ""
            if mod.startswith("fastgelu"):
                # `from . import x` imports the submodule x where there is one
                found |= {f"{mod}.{a.name}" for a in node.names} | {mod}
    return found


def test_no_import_circle():
    modules = {_module_name(p): p for p in PKG.rglob("*.py")}
    graph = {m: sorted(d for d in _imports_at_import_time(p) if d in modules and d != m)
             for m, p in modules.items()}
    # a package imports its parent's __init__ first in any case: only module-to-module edges count
    graph = {m: [d for d in deps if not m.startswith(d + ".")] for m, deps in graph.items()}
    state, path = {}, []

    def visit(m):
        state[m] = "open"
        path.append(m)
        for d in graph[m]:
            if state.get(d) == "open":
                pytest.fail("import circle: " + " -> ".join(path[path.index(d):] + [d]))
            if d not in state:
                visit(d)
        path.pop()
        state[m] = "done"

    for m in sorted(graph):
        if m not in state:
            visit(m)


def test_no_source_file_over_400_lines():
    sources = [p for pattern in ("*.py", "*.pxi", "*.pxi.in", "*.pxd", "bench/*.py")
               for p in PKG.glob(pattern) if p.name not in GENERATED]
    long = {str(p.relative_to(ROOT)): n for p in sources if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, f"split by job (docs/architecture.md): {long}"


def test_every_family_and_form_has_its_ufunc_with_a_loop_per_dtype():
    """The ufunc tables rendered from _lists.py: a ufunc per (family, form), its docstring, and a loop per
    dtype of the list (NumPy's in the table, in the list's order; bfloat16 registered where ml_dtypes is)."""
    letters = [letter for _, letter, _, code in _lists.DTYPES if code]   # NumPy's type characters
    for suffix, _, nin, nout in _lists.KINDS:
        for v in _lists.VARIANTS:
            name = _lists.ufunc_name(v, suffix)
            f = getattr(ufuncs, name)
            assert (f.__name__, f.nin, f.nout) == (name, nin, nout)
            assert f.__doc__.rstrip().endswith(_lists.DOCS[name].split("\n\n", 1)[1])
            assert f.types[:len(letters)] == [c * nin + "->" + c * nout for c in letters]
            if ufuncs.BFLOAT16 is not None:
                assert f.resolve_dtypes((ufuncs.BFLOAT16,) * nin + (None,) * nout)[-1] == ufuncs.BFLOAT16
    assert ufuncs.__all__ == [_lists.ufunc_name(v, k[0]) for k in _lists.KINDS for v in _lists.VARIANTS]


def test_forms_and_builds_follow_the_lists():
    assert tuple(fastgelu._api.VARIANTS) == _lists.VARIANTS == ufuncs._kernels.VARIANTS
    assert fastgelu._dispatch.ISA_ORDER == tuple(_lists.ISAS)


def test_the_float32_kernels_python_declares_are_those_c_makes():
    """_forms.pxi declares fg_f_<name>_block, _grad_block and _mul_block for each name of _lists.F32_KERNELS;
    fg_f32_kernels.h makes them for each form of FG_F32_FORMS: one list in each language, the same names in
    the same order; every form has a family file."""
    import re
    text = (PKG / "src" / "fg_f32_fns.h").read_text()
    body = text[text.index("#define FG_F32_FORMS(X)"):]
    body = body[:body.index("\n\n")]
    made = re.findall(r"X\((\w+),", body)
    assert made == [_lists.F32_KERNELS[v] for v in _lists.VARIANTS if v in _lists.F32_KERNELS]
    assert set(_lists.FAMILIES) == set(_lists.VARIANTS) >= set(_lists.F32_KERNELS)
    assert all((PKG / f).exists() for f in _lists.FAMILIES.values())
