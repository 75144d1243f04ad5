"""fastgelu: GELU and its gradient as parallel NumPy ufuncs, in place, accurate to 2 ULP in float32."""
__version__ = "0.1.0"

import importlib.machinery as _ilm
import os as _os

_here = _os.path.dirname(_os.path.abspath(__file__))
if not any(_os.path.exists(_os.path.join(_here, "_kernels_generic" + _s)) for _s in _ilm.EXTENSION_SUFFIXES):
    # The source folder is being imported instead of an installed fastgelu (e.g. `python -m pytest` from a
    # checkout puts the checkout first on sys.path), or the build did not finish.
    raise ImportError(
        f"fastgelu's compiled kernels are missing in {_here}. If that is a source checkout, Python imported "
        "it instead of the installed package: run `pytest` (not `python -m pytest`) and the `fastgelu` "
        "command (not `python -m fastgelu`), or change to another directory. To build the checkout itself "
        "in place, run `pip install -e .` in it.")

from . import ufuncs  # noqa: E402
from ._api import gelu, gelu_grad  # noqa: E402
from ._api_config import get_config, get_num_threads, set_num_threads, show_config  # noqa: E402
from ._api_gated import geglu, geglu_grad, gelu_mul, gelu_mul_grad  # noqa: E402
from ._module import GELU, GeGLU  # noqa: E402

__all__ = ["gelu", "gelu_grad", "gelu_mul", "gelu_mul_grad", "geglu", "geglu_grad", "GELU", "GeGLU", "ufuncs",
           "get_config", "show_config", "set_num_threads", "get_num_threads", "__version__"]
