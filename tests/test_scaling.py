"""The thread-scaling report (fastgelu.bench.scaling, `fastgelu bench`, tools/scaling.py): what it measures and
how it reads the figures. Its speed figures are not judged here (benches/ and docs/threads.md)."""
import numpy as np
import pytest

import fastgelu
from fastgelu.bench import scaling


def test_thread_counts():
    assert scaling.thread_counts(16) == [1, 2, 4, 8, 16]
    assert scaling.thread_counts(12) == [1, 2, 4, 8, 12]
    assert scaling.thread_counts(2) == [1, 2]
    assert scaling.thread_counts(1) == [1]


def test_reading_finds_where_threads_stop_paying():
    rates = {"fastgelu": {1: 2.0, 2: 3.9, 4: 7.5, 8: 8.4, 16: 8.6}, "torch": {1: 1, 2: 2, 4: 4, 8: 7, 16: 8}}
    text = scaling.reading(rates)
    assert "4.3x from 1 to 16 threads" in text
    assert "more than 4 threads gain under 1.2x" in text
    assert "OVERSUBSCRIBED" not in text


def test_reading_says_oversubscribed_from_the_load_sample():
    rates = {"fastgelu": {1: 2.0, 2: 3.9}}
    assert "OVERSUBSCRIBED: 40 runnable threads on 16 CPUs" in scaling.reading(
        rates, {"runnable": 40, "online": 16})
    assert "OVERSUBSCRIBED" not in scaling.reading(rates, {"runnable": 12, "online": 16})


def test_table_columns():
    rates = {"fastgelu": {1: 2.0, 2: 4.0}, "torch": {1: 1.0, 2: 1.6}}
    lines = scaling.table(rates)
    assert lines[0].split()[0] == "threads" and "vs" in lines[0]
    assert lines[2].split() == ["2", "4.00", "1.60", "2.50x"]


def test_measure_restores_the_policy_and_threads():
    if not fastgelu.get_config()["openmp"]:
        pytest.skip("built without OpenMP")
    before = fastgelu.get_num_threads()
    rates = scaling.measure(1 << 15, 3, counts=[1, 2], rounds=1, adaptive=None, min_round=0.001)
    assert set(rates) == {"fastgelu", "fastgelu (fixed)"}
    assert all(v > 0 for r in rates.values() for v in r.values())
    assert fastgelu.ufuncs._kernels._backoff()["adaptive"]
    assert fastgelu.get_num_threads() == before
    x = np.linspace(-4, 4, 1000, dtype=np.float32)
    assert np.array_equal(fastgelu.gelu(x), fastgelu.gelu(x.copy()))
