"""Sphinx configuration of lucid's API reference (built from the docstrings).

python -m sphinx -W --keep-going -b html docs/api docs/api/_build/html
"""

import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(_HERE.parent.parent))  # the repository: lucid as this tree has it
sys.path.insert(0, str(_HERE / "_ext"))

import lucid  # noqa: E402

project = "lucid"
author = "lucid's authors"
copyright = "lucid's authors, MIT licence"
release = version = lucid.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "lucid_reference",
]
exclude_patterns = ["_build"]
root_doc = "index"

# Docstrings write `name` for code, as Markdown does.
default_role = "literal"

autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "signature"
autodoc_class_signature = "mixed"
napoleon_google_docstring = True
napoleon_numpy_docstring = False

# Every cross-reference to lucid's public API must resolve; names outside it (NumPy's,
# typing's, lucid's private modules in signatures) are not documented here.
nitpicky = True
nitpick_ignore_regex = [
    (r"py:.*", r"(?!lucid\.).*"),
    (r"py:.*", r"lucid\.(.*\.)?_.*"),
    # The type variable of the nn.utils functions that return the module they were given.
    (r"py:class", r"lucid\.nn\.utils\.\w+\.ModuleT"),
]

html_theme = "alabaster"
html_title = f"lucid {release}"
html_show_sourcelink = False
