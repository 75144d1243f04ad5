"""fastgelu: GELU and its gradient as parallel NumPy ufuncs, in place, accurate to 2 ULP in float32."""
__version__ = "0.1.0"

from . import ufuncs
from ._api import gelu, gelu_grad, get_config, get_num_threads, set_num_threads, show_config
from ._module import GELU

__all__ = ["gelu", "gelu_grad", "GELU", "ufuncs", "get_config", "show_config", "set_num_threads",
           "get_num_threads", "__version__"]
