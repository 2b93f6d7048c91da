"""Sessions: ``tests`` (pytest + doctests + examples), ``docs`` (the site), ``pages`` (every page
run as a reader would), ``docs-repro``, ``browser`` (the built site in headless Chromium),
``site`` (those four in one environment), ``bench`` (speed against
torch), ``bench-asdex`` (sparse Jacobians and Hessians beside JAX's asdex; bench only),
``lint`` (ruff), ``docs-live``, and
``tests-oldest`` (the unit tests against the oldest torch pyproject.toml declares; run by hand,
``nox -s tests-oldest``: it downloads about 3 GB of torch and CUDA wheels, so it is neither a
default session nor part of ``.ci/run``).

Every environment is pinned with ``requirements/constraints.txt``: torch==2.13.0 is a local CPU
wheel here; an unpinned torch would download several GB of CUDA packages.

``.ci/run`` installs one environment for all of CI (``.nox/ci``: the package with its test,
docs and browser extras, and ruff) and runs ``lint``, ``site`` and ``tests`` in it with
``nox --no-venv --no-install``: their ``install`` calls are skipped and the commands they run
are found on ``PATH``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
import time
from pathlib import Path

import nox
import nox.command

nox.needs_version = ">=2024.3.2"
nox.options.default_venv_backend = "venv"
nox.options.sessions = ["lint", "tests", "pages", "docs"]

ROOT = Path(__file__).parent
CONSTRAINTS = ("-c", str(ROOT / "requirements" / "constraints.txt"))
DOCS_OUT = ROOT / "docs" / "_build" / "html"
PYTHON = "3.11" if shutil.which("python3.11") else None


def install(session: nox.Session, *args: str) -> None:
    session.install(*CONSTRAINTS, *args)


# Every torch process of a test or page run: one OpenMP thread, and inductor compiling in the
# process itself.  On 2 cores inductor's default (compile_threads = cores = 2) starts a
# compile-worker process pool (one more Python that imports torch) in every process that
# compiles: the unit tests' compile tests, the question checks, the compile pages' kernels.
# CI keeps exactly its own processes busy (.ci/run); a pool cannot speed anything up there.
ONE_CORE = {"OMP_NUM_THREADS": "1", "TORCHINDUCTOR_COMPILE_THREADS": "1"}


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """Types, then unit tests, doctests and the example scripts.

    mypy first (one process, about 30 s of CPU cold): in ``.ci/run`` it then runs beside the
    start of the site's browser suite, not alone at the end.  Then pytest in parallel: one
    pytest-xdist worker per core (``-n auto``; ``--dist worksteal`` evens out the few slow
    tests), one torch thread per worker so that workers do not compete for cores (ONE_CORE).
    ``nox -s tests -- -n 0`` runs them in one process.
    """
    install(session, "-e", ".[test]")
    # types: the package and a typed usage script, with the files pyproject.toml lists; a
    # type error fails the session after the tests have run, not instead of them
    try:
        session.run("mypy")
        types_failed = False
    except nox.command.CommandFailed:
        types_failed = True
    session.run("pytest", "-n", "auto", "--dist", "worksteal", *session.posargs, env=ONE_CORE)
    if types_failed:
        session.error("mypy failed (its output is above the tests')")


PAGES_DEPS = (".[docs]", "pytest>=8", "pytest-xdist>=3.5", "hypothesis>=6", "nbclient")


@nox.session(python=PYTHON)
def pages(session: nox.Session) -> None:
    """Every page as a reader runs it: its downloadable notebook's code (the page's visible
    code), cell after cell, in a fresh interpreter and an empty working directory, with only the
    package and its documentation dependencies installed (plus pytest to drive it).

    The tests marked ``pages`` (tests/site/test_visible_code.py, test_downloads.py): one fresh
    interpreter per page, forked from one that has imported torch (tests/site/reader.py;
    ``GRADARG_PAGE_RUNNER=nbclient`` runs a Jupyter kernel per page instead), so they are kept
    out of ``nox -s tests`` and run here; ``.ci/run`` runs them in ``nox -s site``.
    """
    install(session, "-e", *PAGES_DEPS)
    _run_pages(session)


def _run_pages(session: nox.Session) -> None:
    session.run("pytest", "-m", "pages", "tests/site", "-n", "auto", "--dist", "worksteal",
                *session.posargs, env=ONE_CORE)


def _declared_minimum(package: str) -> str:
    """The lower bound pyproject.toml declares for ``package`` (``"torch>=2.1"`` -> ``"2.1"``)."""
    text = (ROOT / "pyproject.toml").read_text()
    found = re.search(rf'"{re.escape(package)}>=([0-9.]+)', text)
    if found is None:
        raise RuntimeError(f"pyproject.toml declares no lower bound for {package}")
    return found.group(1)


@nox.session(name="tests-oldest", python=PYTHON)
def tests_oldest(session: nox.Session) -> None:
    """The unit tests against the oldest torch the package declares (latest patch release).

    Not a default session and not in ``.ci/run``: PyPI's torch wheels of that age come with
    their CUDA dependencies (about 3 GB to download).  Run it by hand on a machine with room
    for that: ``nox -s tests-oldest``.  The other pins of requirements/constraints.txt apply,
    except torch itself and the NumPy stack, which is held below 2 (torch wheels before 2.3
    were built against NumPy 1).
    """
    minimum = _declared_minimum("torch")
    unpinned = ("torch", "numpy", "scipy", "scikit-learn")
    kept = [
        line
        for line in (ROOT / "requirements" / "constraints.txt").read_text().splitlines()
        if line.split("==")[0].strip().lower() not in unpinned
    ]
    constraints = Path(session.create_tmp()) / "constraints-oldest.txt"
    constraints.write_text("\n".join(kept) + "\n")
    session.install("-c", str(constraints), f"torch=={minimum}.*", "numpy>=1.24,<2")
    session.install("-c", str(constraints), "-e", ".[test]", "numpy<2")
    session.run("python", "-c", "import torch; print('torch', torch.__version__)")
    session.run("pytest", *session.posargs)


def _sphinx_args() -> list[str]:
    # -j auto: two notebooks execute at once on two cores (kernel start and import torch dominate)
    return ["-b", "html", "-W", "--keep-going", "-n", "-j", "auto", "docs", str(DOCS_OUT)]


@nox.session(python=PYTHON)
def docs(session: nox.Session) -> None:
    """Build the site (every cell executed, warnings are errors). ``-- --serve`` to serve it."""
    install(session, "-e", ".[docs]")
    _build_docs(session)
    if "--serve" in session.posargs:
        session.run("python", "-m", "http.server", "8000", "-b", "127.0.0.1", "-d", str(DOCS_OUT))


def _build_docs(session: nox.Session) -> None:
    # the kernels inherit ONE_CORE (docs/conf.py sets the same defaults)
    start = time.monotonic()
    session.run("sphinx-build", *_sphinx_args(), env=ONE_CORE)
    session.log(f"built: {DOCS_OUT / 'index.html'} ({time.monotonic() - start:.0f} s)")
    # .ci/run waits for this file before it starts the unit tests (see there)
    built = os.environ.get("GRADARG_DOCS_BUILT")
    if built:
        Path(built).write_text("ok\n")


@nox.session(name="docs-repro", python=PYTHON)
def docs_repro(session: nox.Session) -> None:
    """Execute every page again from scratch and check it shows what the last build showed."""
    if not (DOCS_OUT / "index.html").exists():
        session.error("build the site first: nox -s docs")
    install(session, "-e", ".[docs]")
    _repro(session)


REPRO_OUT = ROOT / "docs" / "_build" / "html-repro"
REPRO_ARGS = ("sphinx-build", "-b", "html", "-q", "-W", "--keep-going", "-j", "auto",
              "-d", str(REPRO_OUT.parent / "doctrees-repro"), "docs", str(REPRO_OUT))
REPRO_ENV = {"GRADARG_NB_EXECUTION": "force", **ONE_CORE}


def _repro(session: nox.Session) -> None:
    session.run(*REPRO_ARGS, env=REPRO_ENV)
    _compare_builds(session)


def _compare_builds(session: nox.Session) -> None:
    session.run("python", "docs/tools/compare_builds.py", str(DOCS_OUT), str(REPRO_OUT))


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
    """Open every built page in headless Debian Chromium (needs ``nox -s docs`` first), with
    axe-core's WCAG 2.1 AA checks (installed by npm ci from tests/browser/package-lock.json)."""
    if not (DOCS_OUT / "index.html").exists():
        session.error("build the site first: nox -s docs")
    install(session, "-e", ".[browser]")
    _browse(session)


def _wait_for_chromium(session: nox.Session, budget: float = 900) -> None:
    """With ``GRADARG_CHROMIUM_READY=PATH`` (``.ci/run``, which installs Debian's chromium, and
    npm if missing, beside the build and writes PATH when it is done), wait up to ``budget``
    seconds for PATH."""
    ready = os.environ.get("GRADARG_CHROMIUM_READY")
    if not ready:
        return
    deadline = time.monotonic() + budget
    while not Path(ready).exists() and time.monotonic() < deadline:
        time.sleep(2)
    if not Path(ready).exists() or Path(ready).read_text().strip() != "ok":
        session.error(f"chromium was not installed (within {budget:.0f} s): see .ci/run's log")


def _install_axe(session: nox.Session) -> None:
    """axe-core, the accessibility checker the browser suite loads into every page: the
    version tests/browser/package-lock.json pins, into tests/browser/node_modules (npm ci,
    from the npm registry; a second or two)."""
    session.run_install("npm", "ci", "--prefix", str(ROOT / "tests" / "browser"),
                        "--no-audit", "--no-fund", external=True)


def _browse(session: nox.Session, *args: str, env: dict[str, str] | None = None) -> None:
    _wait_for_chromium(session)
    _install_axe(session)
    # a test that timed out waiting on the browser runs once more (pytest-rerunfailures; the
    # rerun is printed as RERUN): on a loaded CI machine one page load in 1,700 once waited
    # past 90 s (2026-11-30); any other failure fails at once
    session.run("pytest", "tests/browser", "--confcutdir=tests/browser", "-o", "addopts=-ra", "-v",
                "--reruns", "1", "--only-rerun", "TimeoutError", *args, *session.posargs, env={"GRADARG_SITE": str(DOCS_OUT), **(env or {})})


@nox.session(python=PYTHON)
def site(session: nox.Session) -> None:
    """CI's site half in one environment, installed once: build the site (``docs``), run every
    page as a reader would (``pages``), execute it again from scratch and compare
    (``docs-repro``), open every page in Chromium (``browser``).  The same steps as those four
    sessions, which each install an environment of their own (about a minute apiece)."""
    install(session, "-e", ".[docs,browser]", *PAGES_DEPS[1:])
    _build_docs(session)
    # The browser suite waits on Chromium more than it computes (189 s of CPU, Chromium's
    # renderers included, 2026-11-29; a third of it axe's color-contrast rule on the API
    # page); the from-scratch execution (docs-repro), its comparison and the page runs keep
    # both cores busy: run them one after the other beside the browser suite.
    log = Path(session.create_tmp()) / "repro-and-pages.log"
    # the session's bin first (none under ``nox --no-venv``, which runs in the current one)
    path = os.pathsep.join([*(session.bin_paths or []), os.environ.get("PATH", "")])
    env = {**os.environ, **REPRO_ENV, "PATH": path}
    steps = [
        (list(REPRO_ARGS), env),
        (["python", "docs/tools/compare_builds.py", str(DOCS_OUT), str(REPRO_OUT)], env),
        (["pytest", "-m", "pages", "tests/site", "-n", "auto", "--dist", "worksteal",
          *session.posargs], {**env, **ONE_CORE}),
    ]
    names = ("docs-repro build", "docs-repro comparison", "page runs")
    if os.environ.get("GRADARG_SKIP_REPRO") == "1":
        # .ci/run: the from-scratch rebuild is a third execution of every page, a quarter of
        # CI's CPU; it runs by hand (nox -s docs-repro, or nox -s site without this variable)
        steps, names = steps[2:], names[2:]
        session.log("GRADARG_SKIP_REPRO=1: docs-repro left out (run nox -s docs-repro)")
    failed: list[str] = []
    current: list[subprocess.Popen] = []
    stop = threading.Event()

    def in_turn() -> None:
        with log.open("w") as out:
            for name, (args, step_env) in zip(names, steps, strict=True):
                if stop.is_set():
                    return
                out.write(f"$ {' '.join(args)}\n")
                out.flush()
                start = time.monotonic()
                proc = subprocess.Popen(args, cwd=ROOT, env=step_env, stdout=out,
                                        stderr=subprocess.STDOUT)
                current.append(proc)
                if stop.is_set():  # the browser suite failed while this one started
                    proc.kill()
                code = proc.wait()
                out.write(f"{name}: {time.monotonic() - start:.0f} s\n")
                if code != 0:
                    failed.append(name)
                    return

    side = threading.Thread(target=in_turn)
    side.start()
    start = time.monotonic()
    try:
        _browse(session, env={"GRADARG_SCREENSHOTS": "0"})
        session.log(f"browser suite: {time.monotonic() - start:.0f} s")
    except BaseException:
        stop.set()
        for proc in current:
            proc.kill()
        side.join()
        raise
    side.join()
    session.log(f"run beside the browser suite: docs-repro, its comparison, the page runs\n"
                f"{log.read_text()}")
    if failed:
        session.error(f"{failed[0]} failed (output above)")


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """Time every Jacobian route against torch.func / torch.autograd.functional.

    Three runs, one thread each: glibc's default malloc settings (what users get: multi-MB
    Jacobians are mmapped and unmapped on every call, so page faults count), the same with
    glibc told to keep freed memory (the work alone), and the per-call overhead of small
    Jacobians through public torch.func against the private functorch fast path.
    ``-- --quick`` for a short run; other arguments go to benchmarks/jacobian.py.
    """
    install(session, "-e", ".")
    threads = os.environ.get("OMP_NUM_THREADS", "1")
    tunables = "glibc.malloc.trim_threshold=1073741824:glibc.malloc.mmap_threshold=1073741824"
    script = "benchmarks/jacobian.py"
    # An empty GLIBC_TUNABLES is glibc's defaults, whatever the calling shell has set.
    session.run("python", script, *session.posargs,
                env={"OMP_NUM_THREADS": threads, "GLIBC_TUNABLES": ""})
    session.run("python", script, *session.posargs,
                env={"OMP_NUM_THREADS": threads, "GLIBC_TUNABLES": tunables})
    # the same table in float64: auto picks its route by dtype as well as by shape
    session.run("python", script, "--dtype", "float64", *session.posargs,
                env={"OMP_NUM_THREADS": threads, "GLIBC_TUNABLES": tunables})
    quick = [a for a in session.posargs if a == "--quick"]
    session.run("python", script, "--overhead", *quick,
                env={"OMP_NUM_THREADS": threads, "GLIBC_TUNABLES": ""})
    # check_backward: random probes against full Jacobians, and the corpus against gradcheck
    one_thread = {"OMP_NUM_THREADS": threads}
    session.run("python", "benchmarks/check_probes.py", env=one_thread)
    session.run("python", "benchmarks/gradcheck_corpus.py", env=one_thread)
    session.run("python", "benchmarks/check_bounded.py", env=one_thread)
    # the scale corpus (10 Functions x right + 2 bugs, 64 x 512): time and peak memory per case
    # against gradcheck and its fast_mode, one process per case and tool
    session.run("python", "benchmarks/check_corpus.py", "--limit", "120", env=one_thread)
    session.run("python", "benchmarks/sparse.py", *session.posargs,
                env={"OMP_NUM_THREADS": threads, "GLIBC_TUNABLES": ""})
    session.run("python", "benchmarks/coloring.py", *quick, env=one_thread)
    session.run("python", "benchmarks/detect.py", env=one_thread)
    session.run("python", "benchmarks/detect_opinfo.py", env=one_thread)
    # the first colouring (seven functions) and the first call of a compressed Hessian /
    # Jacobian in a fresh process against the next; the interpreted colourings' estimates
    session.run("python", "benchmarks/first_call.py", env=one_thread)
    session.run("python", "benchmarks/colour_costs.py", env=one_thread)
    # trace_backward against a plain backward (10-layer MLP), ratio of medians
    session.run("python", "benchmarks/trace.py",
                env={"OMP_NUM_THREADS": threads, "GLIBC_TUNABLES": tunables})
    # watch and trace_backward against a plain training step, four models, ratio of medians
    session.run("python", "benchmarks/watch.py", env={"OMP_NUM_THREADS": threads})
    # what import gradarg costs over import torch; fails if it loads networkx, numba, matplotlib
    session.run("python", "benchmarks/import_time.py")


@nox.session(name="bench-asdex", python=PYTHON)
def bench_asdex(session: nox.Session) -> None:
    """Sparse Jacobians and Hessians beside asdex (JAX): seven functions.

    A bench-only session: not a default session and not in ``.ci/run``.  It installs
    ``jax[cpu]`` and ``asdex`` from PyPI (with numba, which gradarg uses too) beside gradarg,
    pinned by the constraints file like every session, and runs
    benchmarks/asdex_side_by_side.py: float64, one thread for torch and XLA.  Per function:
    the first call in a fresh process against a warm one, the colouring, the compile in a
    first and a later process (sharing inductor's cache folder), the call eager / compiled /
    asdex's jitted (medians of interleaved rounds), agreement, and a verdict on the targets.
    About 4 minutes.  Arguments go to the script (``-- --rounds 3``).
    """
    install(session, "-e", ".", "jax[cpu]", "asdex")
    # the script sets XLA_FLAGS for one thread itself, before importing JAX
    session.run("python", "benchmarks/asdex_side_by_side.py", *session.posargs,
                env={"OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")})


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff check and format check."""
    install(session, "ruff")
    session.run("ruff", "check", ".")
