"""Run a page the way a reader does: a fresh process, an empty working directory, no PYTHONPATH
to the repository's docs/ or examples/ (only to the installed gradarg package, which is where
``import gradarg`` finds it).

Each page runs once per test run, as its downloadable notebook (``visible_code.notebook``:
the page's prose and visible code cells, in order) executed by nbclient in a fresh kernel; pages
are spread over the pytest-xdist workers, and a page's two tests share its run.
``test_visible_code.py`` checks that the notebook's code is the page's visible code and that it
ran; ``test_downloads.py`` checks the notebook itself.
"""

from __future__ import annotations

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


def _run_notebook(page: Path) -> dict:
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
