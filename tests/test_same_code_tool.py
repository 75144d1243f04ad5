"""tools/same_code.py proves a refactoring of the kernels left their compiled code alone (the AVX-512 build
cannot run on an AVX2 machine, so its bits cannot be compared there): it must call two builds the same when
only names and addresses moved, and different when a constant, a table entry or an instruction did."""
import os
import shutil
import subprocess
import sys

import pytest

TOOLS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools")
sys.path.insert(0, TOOLS)
import same_code  # noqa: E402

SOURCE = r"""
static const float TAB[8] __attribute__((aligned(32))) = {1, 2, 3, 4, 5, 6, 7, 8};
__attribute__((noinline)) static float HELPER(const float* x, int n) {
    float s = 0;
    for (int i = 0; i < n; i++)
        s += x[i] * TAB[i & 7] + 0.25f;
    return s;
}
__attribute__((noinline)) static float OTHER(float v) { return v * 3.0f; }
float ROOT(const float* x, int n) { return OTHER(HELPER(x, n)) + HELPER(x + 1, n - 1); }
"""


def build(tmp_path, name, cc="cc", **subst):
    text = SOURCE
    for k, v in {"TAB": "tab", "HELPER": "helper", "OTHER": "other", "ROOT": "root", **subst}.items():
        text = text.replace(k, v)
    src = tmp_path / f"{name}.c"
    src.write_text(text)
    out = tmp_path / f"{name}.so"
    r = subprocess.run([cc, "-O2", "-fPIC", "-shared", str(src), "-o", str(out)], capture_output=True, text=True)
    if r.returncode:
        pytest.skip(f"{cc} cannot build a shared object here: {r.stderr[-300:]}")
    return str(out)


def same(a, b, *roots, objdump="objdump"):
    return same_code.main([a, b, *roots, "--objdump", objdump]) == 0


needs_tools = pytest.mark.skipif(not (shutil.which("cc") and shutil.which("objdump")), reason="needs cc and objdump")


@needs_tools
def test_names_and_addresses_do_not_count(tmp_path, capsys):
    a = build(tmp_path, "a")
    b = build(tmp_path, "b", TAB="another_table_name", HELPER="renamed_helper", OTHER="o")
    assert same(a, b, "root")
    out = capsys.readouterr().out
    assert "same       helper ~ renamed_helper" in out and "3 functions compared, 0 differ" in out


@needs_tools
@pytest.mark.parametrize("change", [{"0.25f": "0.5f"},                  # a constant from the pool
                                    {"7, 8}": "7, 9}"},                 # an entry of a table
                                    {"3.0f": "3.0f + v"},               # an instruction
                                    {"i & 7": "i & 3"}])
def test_any_other_change_counts(tmp_path, change):
    a = build(tmp_path, "a")
    b = build(tmp_path, "b", **change)
    assert not same(a, b, "root")


@needs_tools
def test_a_renamed_root_is_named_on_both_sides(tmp_path):
    a = build(tmp_path, "a")
    b = build(tmp_path, "b", ROOT="entry")
    assert not same(a, b, "root")                 # not in the second file
    assert same(a, b, "root=entry")


@pytest.mark.skipif(not (shutil.which("aarch64-linux-gnu-gcc") and shutil.which("aarch64-linux-gnu-objdump")),
                    reason="needs gcc-aarch64-linux-gnu")
def test_arm_pages_resolve_to_what_they_read(tmp_path):
    cc, objdump = "aarch64-linux-gnu-gcc", "aarch64-linux-gnu-objdump"
    a = build(tmp_path, "a", cc=cc)
    assert same(a, build(tmp_path, "b", cc=cc, TAB="t2", HELPER="h2"), "root", objdump=objdump)
    assert not same(a, build(tmp_path, "c", cc=cc, **{"7, 8}": "7, 9}"}), "root", objdump=objdump)
