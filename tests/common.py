"""Helpers shared by the test files (importable: conftest.py puts this folder on sys.path). The lists are
written out here, not taken from fastgelu, so that the tests check the code's lists against the contract."""
import numpy as np
import pytest

from fastgelu import ufuncs

APPROXIMATE = ("none", "tanh", "sigmoid")
# approximate= -> its (forward, gradient) ufuncs
RAW = {"none": (ufuncs.gelu, ufuncs.gelu_grad), "tanh": (ufuncs.gelu_tanh, ufuncs.gelu_tanh_grad),
       "sigmoid": (ufuncs.gelu_sigmoid, ufuncs.gelu_sigmoid_grad)}

try:
    import ml_dtypes
    HAVE_ML_DTYPES = True
except ImportError:
    ml_dtypes = None
    HAVE_ML_DTYPES = False

# the NumPy float types fastgelu has loops for (bfloat16 with ml_dtypes)
DTYPES = [np.float16, np.float32, np.float64] + ([ml_dtypes.bfloat16] if HAVE_ML_DTYPES else [])


def dtype_id(d):
    return np.dtype(d).name


def torch_bf16(torch):
    """torch.bfloat16 as a test parameter: bfloat16 tensors go through ml_dtypes (the optional [bf16] extra),
    and without it they raise a TypeError, so the case skips."""
    return pytest.param(torch.bfloat16, id="torch.bfloat16", marks=pytest.mark.skipif(
        not HAVE_ML_DTYPES, reason='bfloat16 needs ml_dtypes: pip install "fastgelu[bf16]"'))
