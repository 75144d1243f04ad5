"""Sphinx configuration of fastgelu's documentation site: the Markdown pages of docs/ (MyST), the API
reference from the installed package's numpydoc docstrings (autosummary). Build it with
`pip install ".[docs]" && sphinx-build -W --keep-going docs docs/_build/html` (CI does, warnings as errors)."""
import fastgelu

project = "fastgelu"
author = "the fastgelu authors"
copyright = "fastgelu authors"
release = version = fastgelu.__version__

extensions = ["myst_parser", "numpydoc", "sphinx.ext.autodoc", "sphinx.ext.autosummary"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "data", "generated/*.rst.txt"]

myst_heading_anchors = 4               # the pages link to each other's sections as GitHub does (page.md#anchor)
myst_enable_extensions = ["colon_fence"]

autosummary_generate = True
autodoc_typehints = "none"              # numpydoc's Parameters sections say the types
numpydoc_show_class_members = False     # methods are documented on the class page itself
numpydoc_class_members_toctree = False

html_theme = "furo"
html_title = f"fastgelu {release}"
html_static_path = []
