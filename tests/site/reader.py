"""Run a page the way a reader does: a fresh process, an empty working directory, no PYTHONPATH
to the repository's docs/ or examples/ (only to the installed gradarg package, which is where
``import gradarg`` finds it).

Each page runs once per test session, as its downloadable notebook (``visible_code.notebook``:
the page's prose and visible code cells, in order) executed by nbclient in a fresh kernel; the
runs go two at a time. ``test_visible_code.py`` checks that the notebook's code is the page's
visible code and that it ran; ``test_downloads.py`` checks the notebook itself.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import gradarg

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "docs" / "tools"))
import visible_code

PAGES = visible_code.pages()
WORKERS = 2
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


@functools.cache
def notebook_runs() -> dict[Path, dict]:
    """Every page's downloadable notebook, executed once: page -> {"error", "notebook"}."""
    with ThreadPoolExecutor(WORKERS) as pool:
        return dict(zip(PAGES, pool.map(_run_notebook, PAGES), strict=True))


def stdout_of(notebook: dict) -> str:
    """Everything the notebook's cells printed."""
    out = []
    for cell in notebook["cells"]:
        for o in cell.get("outputs", []):
            if o.get("output_type") == "stream":
                out.append("".join(o["text"]) if isinstance(o["text"], list) else o["text"])
    return "".join(out)
