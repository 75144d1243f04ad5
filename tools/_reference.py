"""Reference math for the accuracy tools (float64 references of the six functions, mpmath references,
the ULP error measure, the IEEE special cases).

The definitions live in the package, fastgelu/_reference.py, so tests, `python -m fastgelu check` and these
tools judge by the same code. This module loads that file by path, so the tools work without building or
importing the compiled package (e.g. on a kernel harness via --module).
"""
import importlib.util
import os

_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "fastgelu", "_reference.py")
_spec = importlib.util.spec_from_file_location("_fastgelu_reference", _path)
_mod = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_mod)

ref64 = _mod.ref64
ref_mp = _mod.ref_mp
ulp_error = _mod.ulp_error
dense_sample = _mod.dense_sample
NAMES = _mod.NAMES

special_failures_one = _mod.special_failures_one
