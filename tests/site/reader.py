"""Run a page the way a reader does: a fresh process, an empty working directory, no PYTHONPATH
to the repository's docs/ or examples/ (only to the installed gradarg package, which is where
``import gradarg`` finds it).

Each page runs once per test run: its downloadable notebook's code (``visible_code.notebook``:
the page's prose and visible code cells, in order), cell after cell, in a fresh interpreter;
pages are spread over the pytest-xdist workers, and a page's two tests share its run.
``test_visible_code.py`` checks that the notebook's code is the page's visible code and that it
ran; ``test_downloads.py`` checks the notebook itself.

The fresh interpreter is a child forked, for each page, from a server process that has
imported torch and nothing else (one server per pytest process): a page's run starts from the
state ``import torch`` leaves, in an empty namespace (``__main__``), without paying for a
Python, torch and a Jupyter kernel per page (about 3.5 s of CPU a page, 46 pages: more than
half of the page runs' CPU, measured 2026-11-29).  The build (``nox -s docs``) executes every
page's cells, visible ones included, in a Jupyter kernel and fails on a cell error
(``nb_execution_raise_on_error``), so the kernel's own behaviour is checked there; what only
this run checks is that the visible code alone runs, in a fresh interpreter and an empty
directory.  ``GRADARG_PAGE_RUNNER=nbclient`` runs each page's notebook in a fresh Jupyter
kernel instead (nbclient), as before.
"""

from __future__ import annotations

import atexit
import fcntl
import functools
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import gradarg

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "docs" / "tools"))
import visible_code

PAGES = visible_code.pages()
TIMEOUT = 600

_RUNNER = r"""
import json, sys
import nbclient, nbformat
nb = nbformat.reads(sys.stdin.read(), as_version=4)
client = nbclient.NotebookClient(nb, timeout=TIMEOUT, kernel_name="python3",
                                 resources={"metadata": {"path": "."}})
try:
    client.execute()
    error = None
except nbclient.exceptions.CellExecutionError as err:
    error = str(err)
print(json.dumps({"error": error, "notebook": nb}))
""".replace("TIMEOUT", str(TIMEOUT))


# The server: imports torch, then, for each request (one JSON line: the cells and the working
# directory), forks a child that runs the cells in a fresh ``__main__`` and writes its result
# back (one JSON line).  The child's stdout and stderr (file descriptors 1 and 2, C code's
# output included) go to a file outside the working directory, one stream output per cell.
_SERVER = r"""
import builtins, json, linecache, os, signal, sys, tempfile, traceback, types

import torch  # noqa: F401  what every page imports first: once per server, not once per page

TIMEOUT = int(sys.argv[1])
protocol = os.fdopen(os.dup(1), "w")


def run_cells(cells, cwd):
    os.chdir(cwd)
    sys.argv = [""]
    nothing = os.open(os.devnull, os.O_RDONLY)  # the page reads no request of the server's
    os.dup2(nothing, 0)
    sys.stdin = open(os.devnull)
    main = types.ModuleType("__main__")
    main.__dict__["__builtins__"] = builtins
    sys.modules["__main__"] = main
    out = tempfile.TemporaryFile(mode="w+")
    os.dup2(out.fileno(), 1)
    os.dup2(out.fileno(), 2)
    sys.stdout = os.fdopen(1, "w", buffering=1, closefd=False)
    sys.stderr = os.fdopen(2, "w", buffering=1, closefd=False)
    texts, error, start = [], None, 0
    for i, source in enumerate(cells):
        name = f"<cell {i + 1}>"
        linecache.cache[name] = (len(source), None, source.splitlines(True), name)
        try:
            exec(compile(source, name, "exec"), main.__dict__)
        except BaseException:
            error = f"cell {i + 1}:\n{source}\n\n{traceback.format_exc()}"
        sys.stdout.flush()
        sys.stderr.flush()
        out.seek(0, 2)
        end = out.tell()
        out.seek(start)
        texts.append(out.read(end - start))
        start = end
        if error:
            break
    return {"error": error, "texts": texts}


for line in sys.stdin:
    request = json.loads(line)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        signal.alarm(TIMEOUT)
        try:
            result = run_cells(request["cells"], request["cwd"])
        except BaseException:
            result = {"error": traceback.format_exc(), "texts": []}
        with os.fdopen(write, "w") as back:
            back.write(json.dumps(result))
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as back:
        data = back.read()
    _, status = os.waitpid(pid, 0)
    if not data:
        data = json.dumps({"error": f"the page's process ended with wait status {status}"
                                    f" (SIGALRM: over {TIMEOUT} s)", "texts": []})
    protocol.write(data.replace("\n", " ") + "\n")
    protocol.flush()
"""


def reader_env() -> dict[str, str]:
    """The environment of a reader: no PYTHONPATH but the installed package's location."""
    package_root = Path(gradarg.__file__).resolve().parents[1]
    assert package_root.name not in {"docs", "examples"}
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "JPY_PARENT_PID"}}
    env.update(PYTHONPATH=str(package_root), MPLBACKEND="Agg", OMP_NUM_THREADS="1",
               PYDEVD_DISABLE_FILE_VALIDATION="1")
    return env


@functools.cache
def run_script(path: Path) -> subprocess.CompletedProcess:
    """``python path`` in an empty directory."""
    with tempfile.TemporaryDirectory() as cwd:
        return subprocess.run([sys.executable, str(path)], cwd=cwd, env=reader_env(),
                              capture_output=True, text=True, timeout=TIMEOUT, check=False)


@functools.cache
def _server() -> subprocess.Popen:
    """This pytest process's server of fresh interpreters (see ``_SERVER``)."""
    home = tempfile.TemporaryDirectory()          # its own empty directory (sys.path[0])
    server = subprocess.Popen([sys.executable, "-c", _SERVER, str(TIMEOUT)], cwd=home.name,
                              env=reader_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    atexit.register(home.cleanup)
    atexit.register(server.wait)
    atexit.register(server.stdin.close)
    return server


def _run_forked(page: Path) -> dict:
    """The page's notebook, its code cells run in a fresh interpreter (see the module's
    docstring); the notebook with a stream output per cell that ran, an error output on the
    one that failed."""
    import nbformat

    with tempfile.TemporaryDirectory() as folder:  # the download, as docs/conf.py writes it
        download = Path(folder) / "page.ipynb"
        visible_code.write_notebook(page, download)
        nbformat.validate(nbformat.read(download, as_version=4))
    nb = visible_code.notebook(page)
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    server = _server()
    with tempfile.TemporaryDirectory() as cwd:
        server.stdin.write(json.dumps({"cells": [c["source"] for c in code], "cwd": cwd}) + "\n")
        server.stdin.flush()
        line = server.stdout.readline()
        left = sorted(os.listdir(cwd))
    if not line:
        return {"error": "the page server ended", "notebook": None, "files": left}
    result = json.loads(line)
    for cell, text in zip(code, result["texts"], strict=False):
        cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": text}] if text else []
    if result["error"]:
        failed = code[len(result["texts"]) - 1] if result["texts"] else code[0]
        failed["outputs"].append({"output_type": "error", "ename": "Error", "evalue": "",
                                  "traceback": result["error"].splitlines()})
    return {"error": result["error"], "notebook": nb, "files": left}


def _run_notebook(page: Path) -> dict:
    if os.environ.get("GRADARG_PAGE_RUNNER") != "nbclient":
        return _run_forked(page)
    nb = json.dumps(visible_code.notebook(page))
    with tempfile.TemporaryDirectory() as cwd:
        proc = subprocess.run([sys.executable, "-c", _RUNNER], input=nb, cwd=cwd,
                              env=reader_env(), capture_output=True, text=True,
                              timeout=TIMEOUT, check=False)
        left = sorted(os.listdir(cwd))
    if proc.returncode:
        return {"error": proc.stderr[-3000:], "notebook": None, "files": left}
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["files"] = left
    return result


def _shared_dir() -> Path:
    """A directory every pytest-xdist worker of this test run sees (one per run)."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID") or f"pid{os.getpid()}"
    path = Path(tempfile.gettempdir()) / f"gradarg-page-runs-{run}"
    path.mkdir(exist_ok=True)
    return path


@functools.cache
def page_run(page: Path) -> dict:
    """The page's downloadable notebook, executed once per test run: {"error", "notebook", "files"}.

    Each page runs once whichever worker asks first; the others wait on a lock and read the
    result (the visible-code test and the download test of a page share one run).
    """
    name = page.relative_to(ROOT / "docs").as_posix().replace("/", "__")
    result = _shared_dir() / f"{name}.json"
    with open(_shared_dir() / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not result.exists():
            result.write_text(json.dumps(_run_notebook(page)))
        return json.loads(result.read_text())


def stdout_of(notebook: dict) -> str:
    """Everything the notebook's cells printed."""
    out = []
    for cell in notebook["cells"]:
        for o in cell.get("outputs", []):
            if o.get("output_type") == "stream":
                out.append("".join(o["text"]) if isinstance(o["text"], list) else o["text"])
    return "".join(out)
