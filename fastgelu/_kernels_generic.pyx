# Kernel module built with the generic flags of setup.py; everything is in _kernels.pxi.
include "_kernels.pxi"
