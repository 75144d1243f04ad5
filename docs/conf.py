"""Sphinx configuration of fastgelu's documentation site: the Markdown pages of docs/ (MyST), the API
reference from the installed package's numpydoc docstrings (autosummary). Build it with
`pip install ".[docs]" && sphinx-build -W --keep-going docs docs/_build/html` (CI does, warnings as errors)."""
import fastgelu

project = "fastgelu"
author = "the fastgelu authors"
copyright = "fastgelu authors"
release = version = fastgelu.__version__

extensions = ["myst_parser", "numpydoc", "sphinx.ext.autodoc", "sphinx.ext.autosummary"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}   # .rst: autosummary's stubs
root_doc = "index"
exclude_patterns = ["_build", "data"]

default_role = "py:obj"                 # `name` in a docstring links to that object where it is documented
myst_heading_anchors = 4               # the pages link to each other's sections as GitHub does (page.md#anchor)
myst_enable_extensions = ["colon_fence"]

autosummary_generate = True
autodoc_typehints = "none"              # numpydoc's Parameters sections say the types
autodoc_docstring_signature = False     # signatures from the objects (a ufunc's docstring opens with two
                                        # signature lines, "[, signature]" and "...", which autodoc cannot parse)
numpydoc_show_class_members = False     # methods are documented on the class page itself
numpydoc_class_members_toctree = False

html_theme = "furo"
html_title = f"fastgelu {release}"
html_static_path = []

