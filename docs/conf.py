"""Sphinx configuration: MyST-NB pages executed at build time, offline MathJax, book theme."""

from __future__ import annotations

import os
import sys
from importlib.metadata import version as _version

import torch

# Notebook kernels inherit this environment: one thread, so that reductions add in the same
# order on every machine and two builds show the same numbers (timings aside).
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
# ... and inductor compiling in the kernel itself: its default on a 2-core machine starts a pool
# of compile workers (another Python importing torch) in every kernel that compiles
os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
os.environ.setdefault("PYTHONHASHSEED", "0")
# Hidden cells import the docs-only helpers in docs/_pages/ (glue, timing): the kernels inherit
# this search path, so no page carries a sys.path cell. Visible cells import only the package
# and its dependencies (tests/site/test_visible_code.py runs them without this path).
_HERE = os.path.dirname(os.path.abspath(__file__))
os.environ["PYTHONPATH"] = os.pathsep.join(
    [os.path.join(_HERE, "_pages")]
    + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
)
sys.path.insert(0, os.path.join(_HERE, "tools"))
import preexecute  # every core executes notebooks before the read, see setup
import search_extra  # synonyms and error messages for the search page, see setup
import visible_code  # the downloadable notebooks, see add_download_notebook

# The one place for the project's repository address: empty by default, and while it is empty
# the theme shows no repository, issue or edit buttons. Set GRADARG_REPOSITORY_URL at build
# time (e.g. on Read the Docs) to turn them on.
REPOSITORY_URL = os.environ.get("GRADARG_REPOSITORY_URL", "").strip()

project = "gradarg"
author = "gradarg developers"
copyright = "2026, gradarg developers"
release = _version("gradarg")

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.autosummary",
    "sphinx.ext.viewcode",
    "sphinx.ext.intersphinx",
    "sphinx_copybutton",
    "sphinx_design",
    "sphinx-mathjax-offline",  # MathJax served from _static: no CDN at view time
]

exclude_patterns = ["_inv", "_build", "**.ipynb_checkpoints", "jupyter_execute", ".jupyter_cache"]

# --- MyST / MyST-NB -------------------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist", "substitution"]
myst_heading_anchors = 3
myst_substitutions = {"torch_version": torch.__version__}
nb_execution_mode = os.environ.get("GRADARG_NB_EXECUTION", "cache")
nb_execution_cache_path = os.path.join(os.path.dirname(__file__), "_build", ".jupyter_cache")
if nb_execution_mode == "cache":
    # Create the cache's database once, here: with `-j auto` on a fresh checkout two parallel
    # readers otherwise race to create its tables ("table settings already exists").
    from jupyter_cache import get_cache

    get_cache(nb_execution_cache_path).list_cache_records()
nb_execution_raise_on_error = True  # a failing cell fails the build
nb_execution_show_tb = True
nb_execution_timeout = 600
nb_merge_streams = True
nb_render_markdown_format = "myst"  # tables and math in Markdown outputs

# --- API reference ----------------------------------------------------------------------------
autosummary_generate = True
autodoc_typehints = "description"
autodoc_member_order = "bysource"
napoleon_numpy_docstring = True
napoleon_google_docstring = False
napoleon_preprocess_types = True
napoleon_type_aliases = {
    "array": "numpy.ndarray",
    "tensor": "torch.Tensor",
    "matplotlib Axes": "matplotlib.axes.Axes",
}
nitpicky = True
nitpick_ignore_regex = [
    # words in NumPy-style type descriptions that are not objects
    (r"py:.*", r'[{"].*|.*["}]|number|array-like|sequence|optional|Blocks|Inputs|Reference'),
    # not in the committed inventories (docs/_inv): named in gradarg.watch, draw_modules and the
    # layout= arguments of the sparsity detectors
    (r"py:class", r"torch\.nn\.Module|matplotlib\.figure\.Figure|torch\.layout"),
]

# Cross-references to Python, NumPy, PyTorch and Matplotlib docs resolve against inventories kept
# in docs/_inv (see docs/_inv/make_inventories.py): links go to the real sites, and the build
# never fetches anything.
_INV = os.path.join(os.path.dirname(__file__), "_inv")
intersphinx_mapping = {
    "python": ("https://docs.python.org/3/", os.path.join(_INV, "python.inv")),
    "numpy": ("https://numpy.org/doc/stable/", os.path.join(_INV, "numpy.inv")),
    "torch": ("https://docs.pytorch.org/docs/stable/", os.path.join(_INV, "torch.inv")),
    "matplotlib": ("https://matplotlib.org/stable/", os.path.join(_INV, "matplotlib.inv")),
}
intersphinx_timeout = 1

# --- HTML -------------------------------------------------------------------------------------
html_theme = "sphinx_book_theme"
html_title = "gradarg: the gradient argument of backward()"
html_static_path = ["_static"]
html_css_files = ["gradarg.css"]
html_context = {"default_mode": "light"}
html_theme_options = {
    "repository_url": REPOSITORY_URL,
    "path_to_docs": "docs",
    "use_download_button": True,
    "use_repository_button": bool(REPOSITORY_URL),
    "use_issues_button": bool(REPOSITORY_URL),
    "use_edit_page_button": False,
    "use_source_button": bool(REPOSITORY_URL),
    "show_toc_level": 2,
    "navigation_with_keys": False,
}
html_last_updated_fmt = None
# Search: the theme's search box opens search.html, where docs/_static/gradarg-search.js ranks
# pages over Sphinx's own index by how many query words each holds (titles, synonyms and
# headings above body text), with the synonyms of each page's front matter
# (``search-synonyms``) and the error messages its outputs quote (docs/tools/search_extra.py).
html_search_language = "en"


def add_download_notebook(app, pagename, templatename, context, doctree):
    """Offer each page as a notebook of its prose and visible code, without the hidden cells
    (they glue numbers into the page with helpers a reader does not have). The theme's
    download button lists it as ".ipynb" (it reads ``ipynb_source``)."""
    source = os.path.join(app.srcdir, pagename + ".md")
    if doctree is None or not os.path.exists(source):
        return
    with open(source, encoding="utf-8") as f:
        if not f.read().startswith("---\nfile_format: mystnb"):
            return
    target = os.path.join(app.outdir, "_sources", pagename + ".ipynb")
    glued = os.path.join(app.outdir, "..", "jupyter_execute", pagename + ".glue.json")
    visible_code.write_notebook(visible_code.Path(source), visible_code.Path(target),
                                visible_code.Path(glued))
    context["ipynb_source"] = pagename + ".ipynb"


def drop_source_download(app, pagename, templatename, context, doctree):
    """Offer a notebook page's ".ipynb" only: its ".md" source holds the hidden cells, which
    import the site's own helpers (``pagekit``) that a reader does not have."""
    if not context.get("ipynb_source"):
        return
    for button in context.get("header_buttons", []):
        if button.get("label") == "download-buttons":
            button["buttons"] = [b for b in button["buttons"]
                                 if b.get("label") != "download-source-button"]


def setup(app):
    app.connect("env-before-read-docs", preexecute.preexecute)
    app.connect("build-finished", preexecute.record)
    app.connect("html-page-context", search_extra.add_scripts)
    app.connect("build-finished", search_extra.write)
    # before the theme builds its header buttons (priority 501)
    app.connect("html-page-context", add_download_notebook, priority=500)
    # after it
    app.connect("html-page-context", drop_source_download, priority=502)
    # Page titles with math appear in every page's navigation: load MathJax on every page.
    app.set_html_assets_policy("always")
    # sphinx-mathjax-offline only sets mathjax_path and copies files when the build finishes,
    # but does not declare itself parallel-safe, which would force a serial read (and a warning
    # under -W). Declaring it lets `sphinx-build -j auto` execute two notebooks at once.
    ext = app.extensions["sphinx-mathjax-offline"]
    ext.parallel_read_safe = ext.parallel_write_safe = True
