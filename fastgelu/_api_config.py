"""Thread control and the configuration: set_num_threads (and its ThreadsSetting), get_num_threads,
get_config, show_config. The thread count itself is decided per call by the kernels' policy
(_threads_policy.pxi); this module only sets its limit in every loaded kernel module."""
import operator
import sys

import numpy as np

from . import ufuncs


def _kernel_modules():
    return [m for name, m in sys.modules.items() if name.startswith("fastgelu._kernels_") and m is not None]


_threads_setting = None     # what set_num_threads set last: an int, or None for the default


class ThreadsSetting:
    """What `set_num_threads` returns: the setting is made already; used in a ``with`` statement, leaving
    the block puts back the setting that was in force before the call."""

    def __init__(self, n, previous):
        self.n, self.previous = n, previous

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _apply_threads(self.previous)

    def __repr__(self):
        return f"<fastgelu threads setting: {self.n} (was {self.previous})>"


def _apply_threads(n):
    global _threads_setting
    _threads_setting = n
    for m in _kernel_modules():
        m._set_threads(0 if n is None else n)


def set_num_threads(n):
    """Use at most `n` threads per call, in every thread of this process; None goes back to the default.

    Parameters
    ----------
    n : int or None
        The thread count (>= 1). It replaces OpenMP's default, so it may exceed ``OMP_NUM_THREADS``; a
        thread's own OpenMP limit set below that default (``threadpoolctl.threadpool_limits``) still caps
        that thread. None: the default again, the smallest of OpenMP's limit (``OMP_NUM_THREADS``,
        threadpoolctl) and the CPUs the process may use (affinity mask, cgroup CPU quota).

    Returns
    -------
    ThreadsSetting
        The setting is made when the call returns. Used as a context manager, the previous setting comes
        back when the ``with`` block ends.

    Raises
    ------
    TypeError
        `n` is neither an integer nor None.
    ValueError
        `n` is below 1.

    See Also
    --------
    get_num_threads : the threads a large call would use now.

    Notes
    -----
    Results do not depend on the thread count. Even with a setting, calls may use fewer threads while
    other processes hold the cores (docs/threads.md).

    Examples
    --------
    >>> import fastgelu
    >>> with fastgelu.set_num_threads(1):
    ...     fastgelu.get_num_threads()
    1
    >>> _ = fastgelu.set_num_threads(1)      # until changed
    >>> _ = fastgelu.set_num_threads(None)   # the default again
    """
    if n is not None:
        try:
            n = operator.index(n)
        except TypeError:
            raise TypeError(f"set_num_threads: n must be an integer or None; got {type(n).__name__}") from None
        if n < 1:
            raise ValueError(f"set_num_threads: n must be >= 1, got {n}")
    previous = _threads_setting
    _apply_threads(n)
    return ThreadsSetting(n, previous)


def get_num_threads():
    """The number of threads a large call from this thread would use now.

    The smallest of OpenMP's limit (``OMP_NUM_THREADS``, threadpoolctl) or `set_num_threads`'s setting, the
    CPUs this process may use (affinity mask, cgroup CPU quota), and, for a while, fewer when other
    processes hold the cores. ``get_config()["threads_from"]`` says which of these decided.

    Returns
    -------
    int
        At least 1 (1 in a build without OpenMP).

    Examples
    --------
    >>> import fastgelu
    >>> fastgelu.get_num_threads() >= 1
    True
    """
    return ufuncs._kernels._max_threads()


def get_config():
    """What this installation runs: version, kernel build, OpenMP and threads.

    Returns
    -------
    dict
        ``version``; ``isa``, the kernel build this CPU runs ("avx512", "avx2" or "generic", chosen at import;
        ``FASTGELU_ISA`` overrides it); ``isa_available``, the builds this CPU can run; ``isa_built``, the
        builds installed; ``float32``, how float32 is computed (SIMD width, or in double); ``openmp`` (bool)
        and ``build`` ("parallel (OpenMP)" or a SERIAL notice); ``num_threads`` and ``threads_from``, what
        `get_num_threads` gives and why; ``numpy``, NumPy's version.

    See Also
    --------
    show_config : the same, printed.

    Examples
    --------
    >>> import fastgelu
    >>> config = fastgelu.get_config()
    >>> config["isa"] in config["isa_available"]
    True
    """
    from . import __version__, _dispatch, _threads
    return {
        "version": __version__,
        "isa": ufuncs.ISA,
        "isa_available": _dispatch.available(),
        "isa_built": _dispatch.built(),
        "float32": (f"float32 arithmetic, {ufuncs._kernels.F32_SIMD}" if ufuncs._kernels.F32_SIMD else
                    "computed in double, rounded once"),
        "openmp": ufuncs._kernels.OPENMP,
        "build": "parallel (OpenMP)" if ufuncs._kernels.OPENMP else
                 "SERIAL: built without OpenMP, every call runs on one thread (rebuild with an OpenMP compiler)",
        "num_threads": get_num_threads(),
        "threads_from": _threads.explain(ufuncs._kernels._backoff()),
        "numpy": np.__version__,
    }


def show_config():
    """Print `get_config`, one line a key (what ``fastgelu info`` prints first).

    Examples
    --------
    >>> import fastgelu
    >>> fastgelu.show_config()  # doctest: +ELLIPSIS
           version: ...
               isa: ...
    """
    for key, value in get_config().items():
        if isinstance(value, list):
            value = ", ".join(value)
        print(f"{key:>14}: {value}")
