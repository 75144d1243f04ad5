"""The documentation's tables are their data: README.md's speed table and docs/accuracy.md's maxima equal
what tools/doc_tables.py makes of docs/data/, and a speed file measured at replaced kernels drops out."""
import importlib.util
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
DATA = ROOT / "docs" / "data"
pytestmark = pytest.mark.skipif(not (ROOT / "tools" / "doc_tables.py").exists(), reason="needs the source checkout")


@pytest.fixture(scope="module")
def tool():
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        spec = importlib.util.spec_from_file_location("doc_tables", ROOT / "tools" / "doc_tables.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        yield mod
    finally:
        sys.path.remove(str(ROOT / "tools"))


@pytest.mark.parametrize("name", ["speed", "accuracy"])
def test_each_page_holds_the_table_its_data_gives(tool, name):
    page, make = tool.PAGES[name]
    text = page.read_text()
    assert tool.splice(text, name, make()) == text, f"run: python tools/doc_tables.py --write ({page.name})"


def test_the_readme_shows_a_row_for_every_cpu_measured_at_the_current_kernels(tool):
    current = tool.current_kernels()
    shown = [label for label, _ in tool.speed_rows(sorted(DATA.glob("speed-*.csv")), current)]
    assert shown, "no speed file measured at the current kernels: the README would have an empty table"
    readme = (ROOT / "README.md").read_text()
    assert all(f"| {label} |" in readme for label in shown)


def _speed_file(tmp_path, name, kernels, default="avx2"):
    p = tmp_path / name
    p.write_text(f"# short: CPU {name}\n# default: {default}; kernels: {kernels}\n"
                 "function,dtype,elements,vs,build,threads,sigma,gelem_s,ratio\n"
                 "gelu,float32,262144,PyTorch,avx2,1,1,2.00,1.50\n"
                 "gelu,float32,262144,PyTorch,avx2,2,1,4.00,1.70\n"
                 "gelu,float32,262144,PyTorch,avx512,1,1,4.00,2.50\n")
    return str(p)


def test_figures_of_replaced_kernels_are_not_shown(tool, tmp_path):
    """A kernel change bumps its build's generation in docs/data/kernels.txt: files measured before it leave
    the table; a file shows its CPU's default build only, one thread."""
    paths = [_speed_file(tmp_path, "old", "avx2 1"), _speed_file(tmp_path, "new", "avx2 2"),
             _speed_file(tmp_path, "none", ""), _speed_file(tmp_path, "wide", "avx512 2, avx2 2", "avx512")]
    rows = dict(tool.speed_rows(paths, {"avx2": "2", "avx512": "2"}))
    assert list(rows) == ["CPU new (AVX2)", "CPU wide (AVX-512)"]
    assert rows["CPU new (AVX2)"][0] == "1.50x" and rows["CPU new (AVX2)"][1] == "–"
    assert rows["CPU wide (AVX-512)"][0] == "2.50x"
    assert list(dict(tool.speed_rows(paths, {"avx2": "1", "avx512": "2"}))) == ["CPU old (AVX2)",
                                                                                   "CPU wide (AVX-512)"]


def test_every_speed_file_names_its_default_build_and_kernels(tool):
    current = tool.current_kernels()
    for path in sorted(DATA.glob("speed-*.csv")):
        meta, rows = tool.plot_speed.load(path)
        assert meta.get("default") in current, (path.name, meta.get("default"))
        measured = tool.measured_kernels(meta)
        assert set(measured) == {r["build"] for r in rows}, path.name


def test_kernels_txt_names_every_build(tool):
    from fastgelu import _dispatch
    assert set(tool.current_kernels()) == set(_dispatch.ISA_ORDER)


def test_each_recorded_maximum_is_within_its_bound(tool):
    rows = tool.accuracy_data.load()
    assert rows
    over = [r for r in rows if float(r["max_ulp"]) > float(r["bound"])]
    assert not over, over
    assert {r["check"] for r in rows} <= set(tool.accuracy_data.CHECKS)


def test_splice_needs_both_markers(tool):
    with pytest.raises(ValueError, match="expected one"):
        tool.splice("text\n<!-- begin generated: speed x -->\n", "speed", "| t |")
    text = "a\n<!-- begin generated: speed x -->\nold\n<!-- end generated: speed -->\nb\n"
    assert tool.splice(text, "speed", "| t |") == ("a\n<!-- begin generated: speed x -->\n| t |\n"
                                                     "<!-- end generated: speed -->\nb\n")


def test_speed_table_csv_is_what_the_tables_read(tool, tmp_path, monkeypatch):
    """tools/speed_table.py --csv writes the format tools/doc_tables.py reads, naming the CPU's default build
    and the current kernels: its rows reach the README table (figures made up, no timing)."""
    spec = importlib.util.spec_from_file_location("speed_table", ROOT / "tools" / "speed_table.py")
    st = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(st)
    from fastgelu import _dispatch
    isa = _dispatch.available()[0]
    res = {"isa": isa, "threads": 1, "cpu": "Test CPU"}
    for key in ("none-fwd", "none-grad", "tanh-fwd", "tanh-grad", "sigmoid-fwd", "sigmoid-grad", "none-mul"):
        for spread in ("s1", "s3", "u8"):
            other = "onnxruntime" if key == "tanh-fwd" else "torch"
            res[f"{key}-f32-{spread}"] = {"fastgelu": 2.0, other: 1.0, f"ratio_{other}": 2.0}
    res["none-fwd-f64-s1"] = {"fastgelu": 1.0, "torch": 0.5, "ratio_torch": 2.0}
    for s in ("s1", "s3"):
        res[f"64M-{s}"] = {"fastgelu": 3.0, "floor": 4.0, "ratio_floor": 0.75}
    monkeypatch.setenv("SPEED_CPU_SHORT", "Test CPU")
    path = tmp_path / "speed-test.csv"
    st.write_csv([res], str(path), repeat=1, rounds=3)
    meta, rows = tool.plot_speed.load(path)
    assert meta["default"] == isa and tool.measured_kernels(meta) == {isa: tool.current_kernels()[isa]}
    assert {r["sigma"] for r in rows} == {1, 3, "u8"}
    ((label, cells),) = tool.speed_rows([str(path)], tool.current_kernels())
    assert label == f"Test CPU ({tool.BUILD_NAMES[isa]})" and cells[:3] == ["2.00x"] * 3


def test_accuracy_rows_of_replaced_kernels_are_not_shown(tool, tmp_path, monkeypatch):
    rows = tool.accuracy_data.load()
    row = next(r for r in rows if (r["function"], r["dtype"], r["check"], r["build"]) == ("gelu", "float32", "all",
                                                                                       "avx2"))
    path = tmp_path / "accuracy.csv"
    path.write_text(tool.accuracy_data.HEADER + ",".join(tool.accuracy_data.FIELDS) + "\n"
                    + ",".join(f'"{row[k]}"' for k in tool.accuracy_data.FIELDS) + "\n")
    assert f"{row['max_ulp']} at {row['worst']}" in tool.accuracy_table(path)
    monkeypatch.setattr(tool, "current_kernels", lambda: {"avx2": "99"})
    assert row["max_ulp"] not in tool.accuracy_table(path)
