"""tools/mca_loops.py models the float32 kernels' compiled loops with llvm-mca (issue 42's Intel figures where
no Intel machine ran): it finds each function's loops of whole vectors, and its per-vector figure is the
iteration's over the vectors the loop's lookups hold; an A/B build of the same headers models the same."""
import os
import platform
import re
import subprocess
import sys

import pytest

TOOLS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools")
TOOL = os.path.join(TOOLS, "mca_loops.py")

sys.path.insert(0, TOOLS)
import mca_loops  # noqa: E402

needs_x86_and_mca = pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64") or mca_loops.find_mca() is None,
                                       reason="needs an x86-64 compiler target and llvm-mca (apt-get install llvm)")


@needs_x86_and_mca
def test_models_the_chunk_loops_of_whole_vectors():
    src = os.path.join(os.path.dirname(TOOLS), "fastgelu", "src")
    r = subprocess.run([sys.executable, TOOL, "fg_f_gelu_block", "fg_f_gelu_grad_block", "--mcpu", "alderlake,znver3",
                        "--cflags", f"same=-iquote {src}"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    rows = [line.strip("|").split("|") for line in r.stdout.splitlines()
            if line.startswith("| package |") or line.startswith("| same |")]
    per = {"fg_f_gelu_block": mca_loops.lookups_a_vector("fg_f_gelu_block", "avx2"),
           "fg_f_gelu_grad_block": mca_loops.lookups_a_vector("fg_f_gelu_grad_block", "avx2")}
    seen = {}
    for build, func, loop, *cells in (map(str.strip, row) for row in rows):
        n, lookups = map(int, re.fullmatch(r"0x[0-9a-f]+ \((\d+), (\d+)\)", loop).groups())
        assert lookups % per[func] == 0 and n > lookups
        for cell in cells:
            it, vec = map(float, cell.split(" / "))
            assert it > 0 and vec == pytest.approx(it / (lookups // per[func]), abs=0.06)
        seen.setdefault((build, func), []).append((n, lookups, cells))
    # a chunk loop of one vector and one of two (AVX2: two vectors a cache line) for each function
    for func, p in per.items():
        assert {lk // p for _, lk, _ in seen["package", func]} >= {1, 2}, r.stdout
        # the same headers through -iquote: the same loops, the same model
        assert [(n, lk, c) for n, lk, c in seen["same", func]] == [(n, lk, c) for n, lk, c in seen["package", func]]


def test_without_llvm_mca_it_says_what_to_install(monkeypatch, capsys):
    monkeypatch.setattr(mca_loops, "find_mca", lambda: None)
    monkeypatch.setattr(sys, "argv", ["mca_loops.py", "fg_f_gelu_block"])
    assert mca_loops.main() == 2
    assert "apt-get install llvm" in capsys.readouterr().err
