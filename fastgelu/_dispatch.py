"""Pick the kernel module for this CPU: the best ISA build it can run, or FASTGELU_ISA if set.

The CPU check lives in the generic (baseline) module, so asking never executes an instruction the CPU
lacks; only then is a faster module imported.
"""
import importlib
import importlib.util
import os

from . import _lists

ISA_ORDER = tuple(_lists.ISAS)      # best first

# bfloat16 is ml_dtypes' dtype, not NumPy's: its loops are added when ml_dtypes is installed
if importlib.util.find_spec("ml_dtypes") is not None:
    import ml_dtypes
    import numpy as np

    BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
else:
    BFLOAT16 = None

_loaded = {}


def _module(isa):
    if isa not in _loaded:
        mod = importlib.import_module(f"fastgelu._kernels_{isa}")
        if BFLOAT16 is not None:
            mod._register_bfloat16(BFLOAT16.num)
        _loaded[isa] = mod
    return _loaded[isa]


def built():
    """ISA levels that were compiled into this installation."""
    return [isa for isa in ISA_ORDER if importlib.util.find_spec(f"fastgelu._kernels_{isa}") is not None]


def available():
    """ISA levels that are both built and supported by this CPU, best first."""
    have = _module("generic").cpu_features()
    return [isa for isa in built() if have[isa]]


def load(isa=None):
    """Import the kernel module for `isa` (default: FASTGELU_ISA, else the best available)."""
    isa = isa or os.environ.get("FASTGELU_ISA", "").strip().lower() or None
    usable = available()
    if isa is None:
        return usable[0], _module(usable[0])
    if isa not in ISA_ORDER:
        raise ValueError(f"FASTGELU_ISA={isa!r} is not one of {', '.join(ISA_ORDER)}")
    if isa not in usable:
        why = "was not built" if isa not in built() else "is not supported by this CPU"
        raise RuntimeError(f"FASTGELU_ISA={isa!r} {why}; usable here: {', '.join(usable)}")
    return isa, _module(isa)
