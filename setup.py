"""Build the kernel extension once per ISA level, with OpenMP when the compiler has it.

The same Cython source (fastgelu/_kernels.pxi, included by one stub .pyx per ISA) is compiled once per entry
of fastgelu/_lists.py's ISAS, with that entry's flags: _kernels_generic with the baseline flags (x86-64 SSE2,
or whatever the platform's default is), _kernels_avx2 and _kernels_avx512 on x86-64.
fastgelu._dispatch picks the best one the CPU supports at import time. The ufunc tables and the forms' codes
are rendered from the same file's lists first (fastgelu/*.pxi.in, Tempita).

OpenMP is detected by compiling and running a tiny program; without it (or with FASTGELU_NO_OPENMP=1) the
build goes on serial with a warning. No fast-math flags (they break NaN/inf and may set FTZ/DAZ process-wide)
and no tuning for the build machine's own CPU (a wheel that crashes elsewhere): per-ISA modules instead.
"""
import glob
import os
import platform
import re
import runpy
import subprocess
import sys
import sysconfig
import tempfile
import tomllib
import warnings
from importlib.metadata import version

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

OPENMP_TEST = r"""
#include <omp.h>
#include <stdio.h>
int main(void) {
    int n = 0;
    #pragma omp parallel reduction(+:n)
    n += 1;
    printf("%d\n", n > 0 && omp_get_max_threads() > 0);
    return 0;
}
"""

# the lists the build, the dispatcher and the tools share (plain data: read without importing the package)
LISTS = {k: v for k, v in runpy.run_path(os.path.join("fastgelu", "_lists.py")).items() if not k.startswith("__")}
ISA_FLAGS = LISTS["ISAS"]


def _compiler():
    return (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()


def _try_compile(source, flags, run=False):
    """Compile (and optionally run) `source` with `flags`; True if it worked."""
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "t.c")
        exe = os.path.join(tmp, "t.out")
        with open(src, "w") as f:
            f.write(source)
        try:
            subprocess.run(_compiler() + [src, "-o", exe] + flags, check=True, capture_output=True)
            if run:
                out = subprocess.run([exe], check=True, capture_output=True, text=True).stdout
                return out.strip() == "1"
        except (OSError, subprocess.CalledProcessError):
            return False
        return True


def openmp_flags():
    if os.environ.get("FASTGELU_NO_OPENMP", "") not in ("", "0"):
        warnings.warn("FASTGELU_NO_OPENMP is set: building fastgelu without OpenMP (single-threaded).")
        return []
    if sys.platform == "win32":
        return ["/openmp"]
    for flags in (["-fopenmp"], ["-Xpreprocessor", "-fopenmp", "-lomp"]):
        if _try_compile(OPENMP_TEST, flags, run=True):
            return flags
    warnings.warn("No working OpenMP found (compile-and-run test failed): fastgelu is built "
                  "single-threaded. Install an OpenMP runtime (e.g. libgomp) and rebuild for threads.")
    return []


def isa_levels():
    x86 = platform.machine().lower() in ("x86_64", "amd64", "i686", "i386")
    if not x86 or sys.platform == "win32":
        return ["generic"]
    return [isa for isa, flags in ISA_FLAGS.items()
            if not flags or _try_compile("int main(void){return 0;}", flags)]


def check_build_requirements():
    """Stop with the reason when a build requirement is older than pyproject.toml's lower bound.

    pip's isolated build installs them itself; a --no-build-isolation build takes what the environment has,
    and a module compiled against NumPy 1.x is refused at import by the NumPy 2 that pip then installs.
    """
    def release(v):  # "2.0.0" -> (2,): trailing zeros dropped so that 2.0 == 2.0.0
        parts = [int(p) for p in re.match(r"\d+(?:\.\d+)*", v).group().split(".")]
        while parts and parts[-1] == 0:
            parts.pop()
        return tuple(parts)

    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "pyproject.toml"), "rb") as f:
        requires = tomllib.load(f)["build-system"]["requires"]
    for req in requires:
        name, _, low = req.partition(">=")
        if low and release(version(name)) < release(low):
            sys.exit(f"fastgelu needs {req} to build ([build-system] requires of pyproject.toml); this "
                     f"environment has {name} {version(name)}: upgrade it, or build without --no-build-isolation")


def _write_if_changed(path, text):
    # a file rewritten with the same text would make the next build compile everything again
    if not os.path.exists(path) or open(path).read() != text:
        with open(path, "w") as f:
            f.write(text)


def render_sources():
    """The generated Cython sources: fastgelu/X.pxi from fastgelu/X.pxi.in (Tempita, which Cython ships) with
    the names of _lists.py, and one stub _kernels_<isa>.pyx per ISA of its list, which includes the one
    source, _kernels.pxi."""
    from Cython import Tempita
    for template in sorted(glob.glob(os.path.join("fastgelu", "*.pxi.in"))):
        with open(template) as f:
            text = (f"# GENERATED by setup.py from {os.path.basename(template)} and _lists.py: edit those, not "
                    f"this file.\n" + Tempita.sub(f.read(), **LISTS))
        _write_if_changed(template[:-len(".in")], text)
    for isa in ISA_FLAGS:
        _write_if_changed(os.path.join("fastgelu", f"_kernels_{isa}.pyx"),
                          f"# GENERATED by setup.py: the kernel module built with the {isa} flags of _lists.py.\n"
                          f'include "_kernels.pxi"\n')


def extensions():
    render_sources()
    omp = openmp_flags()
    base = ["-O3", "-fno-math-errno", "-fno-semantic-interposition"]
    # The kernel module is one large unit: gcc's default unit-growth budget runs out before the exp helpers
    # are inlined into the block loops, and a loop with a call left in it is not vectorized.
    growth = ["--param=inline-unit-growth=400"]
    if _try_compile("int main(void){return 0;}", ["-Werror"] + growth):
        base += growth
    if sys.platform == "win32":
        base = ["/O2"]
    macros = [("NPY_NO_DEPRECATED_API", "NPY_2_0_API_VERSION")]
    # float32 in float32 arithmetic on SIMD vectors in the AVX-512, AVX2 and aarch64 (NEON) builds
    # (fastgelu/src/fg_simd.h): on unless FASTGELU_F32_FWD=0
    if os.environ.get("FASTGELU_F32_FWD", "1") != "0":
        macros.append(("FG_F32_FWD", "1"))
    exts = []
    for isa in isa_levels():
        stub = os.path.join("fastgelu", f"_kernels_{isa}.pyx")
        exts.append(Extension(
            f"fastgelu._kernels_{isa}", [stub],
            include_dirs=[np.get_include(), os.path.join("fastgelu", "src")],
            depends=sorted(glob.glob(os.path.join("fastgelu", "src", "*.h"))
                           + glob.glob(os.path.join("fastgelu", "*.pxi"))
                           + glob.glob(os.path.join("fastgelu", "*.pxi.in"))
                           + glob.glob(os.path.join("fastgelu", "*.pxd"))),
            define_macros=macros,
            extra_compile_args=base + ISA_FLAGS[isa] + [f for f in omp if f != "-lomp"],
            extra_link_args=omp,
        ))
    return cythonize(exts, compiler_directives={
        "language_level": 3, "boundscheck": False, "wraparound": False, "cdivision": True,
        "initializedcheck": False, "embedsignature": True,
    })


def build_jobs():
    """Compile the ISA modules side by side (threads; a -j on the command line still wins)."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(len(ISA_FLAGS), cpus or 1))


check_build_requirements()
setup(ext_modules=extensions(), options={"build_ext": {"parallel": build_jobs()}})
