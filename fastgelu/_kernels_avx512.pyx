# Kernel module built with the avx512 flags of setup.py; everything is in _kernels.pxi.
include "_kernels.pxi"
