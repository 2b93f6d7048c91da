"""The docs build's pre-execution (docs/tools/preexecute.py): pages execute before Sphinx reads
them, each result lands in the execution cache under the key MyST-NB looks up, and a failing
page stops the build with its traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TOOLS = Path(__file__).resolve().parents[2] / "docs" / "tools"
CONF = f"""
import os
import sys
sys.path.insert(0, {str(TOOLS)!r})
import preexecute
extensions = ["myst_nb"]
nb_execution_mode = "cache"
nb_execution_cache_path = os.path.join(os.path.dirname(__file__), "_build", ".jupyter_cache")
nb_execution_raise_on_error = True
def setup(app):
    app.connect("env-before-read-docs", preexecute.preexecute)
"""
PAGE = """---
file_format: mystnb
kernelspec:
  name: python3
---
# Page {n}

```{{code-cell}} python3
print({code})
```
"""


def build(tmp_path: Path, codes: list[str], **extra: str) -> subprocess.CompletedProcess:
    """Build a site of one page per code in ``codes``; ``extra``: environment variables."""
    (tmp_path / "conf.py").write_text(CONF)
    names = [f"p{n}" for n in range(len(codes))]
    (tmp_path / "index.md").write_text("# Index\n\n```{toctree}\n" + "\n".join(names) + "\n```\n")
    for n, code in enumerate(codes):
        (tmp_path / f"p{n}.md").write_text(PAGE.format(n=n, code=code))
    env = {**os.environ, "OMP_NUM_THREADS": "1", **extra}
    return subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-j", "2", "-v",
                           str(tmp_path), str(tmp_path / "_build" / "html")], cwd=tmp_path,
                          capture_output=True, text=True, env=env, timeout=300, check=False)


def test_pages_execute_before_the_read_and_the_read_finds_them(tmp_path):
    out = build(tmp_path, ["6 * 7", "'side by side'"])
    assert out.returncode == 0, out.stderr[-2000:]
    assert "pre-executed 2 pages on 2 workers" in out.stdout
    # every page was found in the cache while reading: none executed a second time
    assert out.stdout.count("Using cached notebook") == 2, out.stdout[-3000:]
    assert "Executing notebook" not in out.stdout
    assert "42" in (tmp_path / "_build" / "html" / "p0.html").read_text()


def test_a_failing_page_stops_the_build_with_its_traceback(tmp_path):
    out = build(tmp_path, ["1 / 0", "'fine'"])
    assert out.returncode != 0
    assert "executing p0 failed" in out.stderr and "ZeroDivisionError" in out.stderr


def test_kernels_talk_over_unix_sockets_and_leave_none_behind(tmp_path):
    # over TCP a kernel binds ports picked (and released) earlier: another kernel could take
    # one in between and the kernel died at start (a CI run failed so); Unix sockets in a
    # directory of its own cannot collide
    info = "__import__('ipykernel').get_connection_info(unpack=True)['{}']"
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    out = build(tmp_path, [info.format("transport"), info.format("ip")], TMPDIR=str(tmpdir))
    assert out.returncode == 0, out.stderr[-2000:]
    html = [(tmp_path / "_build" / "html" / f"p{n}.html").read_text() for n in (0, 1)]
    assert "ipc" in html[0]
    assert str(tmpdir) in html[1]           # the sockets' directory, under the temp folder
    assert not list(tmpdir.glob("gradarg-kernel-*"))   # removed after each page


def _kernels() -> set[str]:
    """The process ids of this process's children that run a Jupyter kernel."""
    out = subprocess.run(["pgrep", "-P", str(os.getpid()), "-f", "ipykernel"],
                         check=False, capture_output=True, text=True)   # 1: none found
    return set(out.stdout.split())


def test_each_page_s_kernel_is_shut_down_after_it_ran():
    # nbclient shuts down only kernels it made itself; the one _execute passes in stayed
    # alive until the build ended, one per page (88 kernels filled 24 GB in a cold build)
    import nbformat

    sys.path.insert(0, str(TOOLS))
    try:
        import preexecute
    finally:
        sys.path.remove(str(TOOLS))
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(6 * 7)")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    before = _kernels()
    for _ in range(2):
        done, _seconds, err = preexecute._execute(nb, os.getcwd(), 60)
        assert err is None and "42" in done.cells[0].outputs[0]["text"]
    assert _kernels() - before == set()
