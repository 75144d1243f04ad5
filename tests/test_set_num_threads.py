"""set_num_threads: None goes back to the default, and the returned setting restores the previous one as a
context manager. Each case runs in a fresh process with OMP_NUM_THREADS=1, so the default is known (1) and a
setting of 2 differs from it; the policy's caps are off there, so a busy machine does not lower the counts."""
import os
import subprocess
import sys

import pytest

import fastgelu

PRELUDE = ("import fastgelu; from fastgelu import ufuncs; ufuncs._kernels._backoff(adaptive=False); "
           "n = fastgelu.get_num_threads\n")


def run(code):
    if not fastgelu.get_config()["openmp"]:
        pytest.skip("built without OpenMP: every call runs on one thread")
    env = {"OMP_NUM_THREADS": "1", "PATH": ""} | {k: v for k, v in os.environ.items() if k == "PYTHONPATH"}
    out = subprocess.run([sys.executable, "-c", PRELUDE + code], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_none_goes_back_to_the_default():
    assert run("print(n()); fastgelu.set_num_threads(2); print(n()); fastgelu.set_num_threads(None); print(n(), "
               "ufuncs._kernels._backoff()['user'])") == ["1", "2", "1", "0"]


def test_the_setting_restores_the_previous_one_as_a_context_manager():
    assert run("fastgelu.set_num_threads(2)\n"
               "with fastgelu.set_num_threads(None):\n    print(n())\n"
               "print(n())\n"
               "with fastgelu.set_num_threads(2) as s:\n"
               "    with fastgelu.set_num_threads(3):\n        print(n())\n"
               "    print(n(), s.n, s.previous)\n"
               "fastgelu.set_num_threads(None)\n"
               "with fastgelu.set_num_threads(2):\n    print(n())\n"
               "print(n())") == ["1", "2", "3", "2", "2", "2", "2", "1"]


def test_the_setting_comes_back_when_the_block_raises():
    assert run("try:\n    with fastgelu.set_num_threads(2):\n        raise KeyError\n"
               "except KeyError:\n    print(n())") == ["1"]


@pytest.mark.parametrize("bad, error, match", [("2", TypeError, "n must be an integer or None; got str"),
                                               (1.5, TypeError, "n must be an integer or None; got float"),
                                               (0, ValueError, "n must be >= 1, got 0")])
def test_bad_values_name_the_argument_and_change_nothing(bad, error, match):
    before = fastgelu._api_config._threads_setting
    with pytest.raises(error, match=f"set_num_threads: {match}"):
        fastgelu.set_num_threads(bad)
    assert fastgelu._api_config._threads_setting == before
