"""`fastgelu bench --models` (fastgelu.bench.models): the table from a whole model, and the message when
transformers is missing."""
import sys

import pytest

from fastgelu.bench import models


def test_table_for_one_model():
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    lines = []
    rows = models.run(layers=1, batch=1, seq=8, rounds=2, dtypes=("float32",), models=("GPT-2",),
                             out=lines.append)
    assert len(rows) == 1
    name, dtype, stock, patched, diff = rows[0]
    assert (name, dtype) == ("GPT-2", "float32") and stock > 0 and patched > 0
    assert diff < 1e-4  # float32 outputs agree to the kernels' rounding
    assert "PyTorch threads" in lines[0] and "1 layers, batch 1 x 8 tokens" in lines[1]
    assert lines[2].split()[:3] == ["model", "(its", "GELU)"]
    cells = lines[3].split()
    assert cells[:5] == ["GPT-2", "(composite", "tanh)", "float32", f"{stock * 1e3:.1f}"]
    assert cells[6] == f"{stock / patched:.2f}x" and cells[-2:] == ["1", "activation"]


def test_skipped_with_a_message_without_transformers(monkeypatch):
    monkeypatch.setitem(sys.modules, "transformers", None)  # import transformers raises ImportError
    lines = []
    assert models.run(out=lines.append) is None
    assert len(lines) == 1 and "skipped" in lines[0] and "pip install" in lines[0]
