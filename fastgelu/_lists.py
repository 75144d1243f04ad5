"""The lists the build, the kernels' generated tables, the dispatcher and the tools read, each in one place:
the GELU forms, the ufunc families and their docstrings, the dtypes with a loop, the instruction-set builds.
Plain data and no imports: setup.py and tools/ load this file alone, without the package (which needs the
compiled kernels)."""

# approximate= names, in the order of their codes in the kernels (V_NONE, V_TANH, V_SIGMOID) and of every
# per-form table. A form's ufuncs are named gelu[_form]<suffix> ("none" has no _form).
VARIANTS = ("none", "tanh", "sigmoid")

# each form's family: the .pxi file that defines its block functions (the names _lists.pxi dispatches to;
# forms may share one), included by _kernels.pxi through the rendered _forms.pxi
FAMILIES = {"none": "_gelu_exact.pxi", "tanh": "_gelu_sigmoid.pxi", "sigmoid": "_gelu_sigmoid.pxi"}

# the C name of each form's float32 SIMD kernels, fg_f_<name>_block, _grad_block and _mul_block
# (fg_f32_kernels.h makes them from its list FG_F32_FORMS); _forms.pxi declares them. A form without an
# entry here computes float32 in double in its family file.
F32_KERNELS = {"none": "gelu", "tanh": "tanh", "sigmoid": "sig"}

# ufunc families: (name suffix, the Cython loop that runs it, inputs, outputs)
KINDS = (("", "fwd_loop", 1, 1),
         ("_grad", "grad_loop", 2, 1),
         ("_mul", "gm_fwd_loop", 2, 1),
         ("_mul_grad", "gm_grad_loop", 3, 2))

# dtypes with a loop: (NumPy name, a letter for the loop's name, the kernels' storage type, NumPy's type
# number; None for bfloat16, ml_dtypes' type, whose loops are registered at import where it is installed)
DTYPES = (("float16", "e", "Half", "NPY_FLOAT16"),
          ("float32", "f", "float", "NPY_FLOAT"),
          ("float64", "d", "double", "NPY_DOUBLE"),
          ("bfloat16", "b", "BFloat", None))

# instruction-set builds, best first, with their compiler flags (x86-64 only but for "generic", the
# baseline, which every platform builds): setup.py compiles fastgelu._kernels_<isa> with them, _dispatch picks
# the first this CPU runs, tools/gelu_f32_kernel.py compiles the float32 kernels alone with them.
ISAS = {
    "avx512": ["-mavx512f", "-mavx512bw", "-mavx512vl", "-mavx512dq", "-mavx2", "-mfma", "-mf16c",
               "-mprefer-vector-width=512"],
    "avx2": ["-mavx2", "-mfma", "-mf16c"],
    "generic": [],
}


# each ufunc's docstring (NumPy shows it as help(fastgelu.ufuncs.NAME))
DOCS = {
    "gelu": "gelu(x, /, out=None, *, where=True, ...)\n\nExact GELU, x*Phi(x), Phi the standard normal CDF.",
    "gelu_tanh": "gelu_tanh(x, /, out=None, *, where=True, ...)\n\n"
                 "Tanh approximation 0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715*x**3))).",
    "gelu_sigmoid": "gelu_sigmoid(x, /, out=None, *, where=True, ...)\n\nSigmoid approximation x*sigmoid(1.702*x).",
    "gelu_grad": "gelu_grad(x, dy, /, out=None, *, where=True, ...)\n\n"
                 "dy * (Phi(x) + x*phi(x)), the gradient of gelu.",
    "gelu_tanh_grad": "gelu_tanh_grad(x, dy, /, out=None, *, where=True, ...)\n\n"
                      "dy times the derivative of gelu_tanh.",
    "gelu_sigmoid_grad": "gelu_sigmoid_grad(x, dy, /, out=None, *, where=True, ...)\n\n"
                         "dy times the derivative of gelu_sigmoid.",
    "gelu_mul": "gelu_mul(gate, up, /, out=None, *, where=True, ...)\n\nGated GELU: gelu(gate)*up, exact GELU.",
    "gelu_tanh_mul": "gelu_tanh_mul(gate, up, /, out=None, *, where=True, ...)\n\nGated GELU: gelu_tanh(gate)*up.",
    "gelu_sigmoid_mul": "gelu_sigmoid_mul(gate, up, /, out=None, *, where=True, ...)\n\n"
                        "Gated GELU: gelu_sigmoid(gate)*up.",
    "gelu_mul_grad": "gelu_mul_grad(gate, up, dy, /, out1, out2, *, where=True, ...)\n\n"
                     "(dy*up*gelu'(gate), dy*gelu(gate)): the gradients of gelu_mul for its two inputs.",
    "gelu_tanh_mul_grad": "gelu_tanh_mul_grad(gate, up, dy, /, out1, out2, *, where=True, ...)\n\n"
                          "(dy*up*gelu_tanh'(gate), dy*gelu_tanh(gate)).",
    "gelu_sigmoid_mul_grad": "gelu_sigmoid_mul_grad(gate, up, dy, /, out1, out2, *, where=True, ...)\n\n"
                             "(dy*up*gelu_sigmoid'(gate), dy*gelu_sigmoid(gate)).",
}


def ufunc_name(variant, suffix=""):
    """The ufunc of `variant` and a family's suffix: gelu, gelu_tanh, gelu_sigmoid_mul_grad, ..."""
    return ("gelu" if variant == "none" else "gelu_" + variant) + suffix
