"""Sessions: ``tests`` (pytest + doctests + examples), ``docs`` (the site), ``browser`` (the built
site in headless Chromium), ``bench`` (speed against torch), ``lint`` (ruff), ``docs-live``.

Every environment is pinned with ``requirements/constraints.txt``: torch==2.13.0 is a local CPU
wheel here; an unpinned torch would download several GB of CUDA packages.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import nox

nox.needs_version = ">=2024.3.2"
nox.options.default_venv_backend = "venv"
nox.options.sessions = ["lint", "tests", "docs"]

ROOT = Path(__file__).parent
CONSTRAINTS = ("-c", str(ROOT / "requirements" / "constraints.txt"))
DOCS_OUT = ROOT / "docs" / "_build" / "html"
PYTHON = "3.11" if shutil.which("python3.11") else None


def install(session: nox.Session, *args: str) -> None:
    session.install(*CONSTRAINTS, *args)


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """Unit tests, doctests and the example scripts."""
    install(session, "-e", ".[test]")
    session.run("pytest", *session.posargs)


def _sphinx_args() -> list[str]:
    # -j auto: two notebooks execute at once on two cores (kernel start and import torch dominate)
    return ["-b", "html", "-W", "--keep-going", "-n", "-j", "auto", "docs", str(DOCS_OUT)]


@nox.session(python=PYTHON)
def docs(session: nox.Session) -> None:
    """Build the site (every cell executed, warnings are errors). ``-- --serve`` to serve it."""
    install(session, "-e", ".[docs]")
    session.run("sphinx-build", *_sphinx_args())
    session.log(f"built: {DOCS_OUT / 'index.html'}")
    if "--serve" in session.posargs:
        session.run("python", "-m", "http.server", "8000", "-b", "127.0.0.1", "-d", str(DOCS_OUT))


@nox.session(name="docs-repro", python=PYTHON)
def docs_repro(session: nox.Session) -> None:
    """Execute every page again from scratch and check it shows what the last build showed."""
    if not (DOCS_OUT / "index.html").exists():
        session.error("build the site first: nox -s docs")
    install(session, "-e", ".[docs]")
    second = ROOT / "docs" / "_build" / "html-repro"
    session.run(
        "sphinx-build", "-b", "html", "-q", "-W", "--keep-going", "-j", "auto",
        "-d", str(second.parent / "doctrees-repro"), "docs", str(second),
        env={"GRADARG_NB_EXECUTION": "force"},
    )
    session.run("python", "docs/tools/compare_builds.py", str(DOCS_OUT), str(second))


@nox.session(name="docs-live", python=PYTHON)
def docs_live(session: nox.Session) -> None:
    """Rebuild on every save and reload the browser (sphinx-autobuild)."""
    install(session, "-e", ".[docs]", "sphinx-autobuild")
    session.run(
        "sphinx-autobuild", *_sphinx_args(), "--host", "127.0.0.1",
        "--ignore", "*/_build/*", "--ignore", "*/.jupyter_cache/*", *session.posargs,
    )


@nox.session(python=PYTHON)
def browser(session: nox.Session) -> None:
    """Open every built page in headless Debian Chromium (needs ``nox -s docs`` first)."""
    if not (DOCS_OUT / "index.html").exists():
        session.error("build the site first: nox -s docs")
    install(session, "-e", ".[browser]")
    session.run("pytest", "tests/browser", "--confcutdir=tests/browser", "-o", "addopts=-ra", "-v",
                *session.posargs, env={"GRADARG_SITE": str(DOCS_OUT)})


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """Time every Jacobian route against torch.func / torch.autograd.functional."""
    install(session, "-e", ".")
    # One thread, and glibc told to keep freed memory: otherwise multi-MB Jacobians are mmapped
    # and unmapped on every call and page faults, not the routes, decide the large rows.
    tunables = "glibc.malloc.trim_threshold=1073741824:glibc.malloc.mmap_threshold=1073741824"
    env = {
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"),
        "GLIBC_TUNABLES": os.environ.get("GLIBC_TUNABLES", tunables),
    }
    session.run("python", "benchmarks/jacobian.py", *session.posargs, env=env)
    session.run("python", "benchmarks/trace.py", env=env)  # trace_backward vs backward


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff check and format check."""
    install(session, "ruff")
    session.run("ruff", "check", ".")
