"""Execute the site's notebooks on every core before Sphinx reads them.

``sphinx-build -j N`` reads documents in chunks of up to ten, one chunk per worker, and
MyST-NB executes a page while it is read: the executed pages sit next to each other in a few
chunks (``questions/*``, ``reference/*``), so for minutes one kernel ran while the other core
idled.  This hook runs at ``env-before-read-docs``: it reads every page to be read the way
MyST-NB does (the same reader, so the same cache key), and executes the ones the execution
cache has no match for on a pool of ``min(cores, 4)`` workers, longest first, adding each
result to the cache exactly as MyST-NB's ``cache`` mode does.  MyST-NB then finds every page
in the cache, and the read workers only look records up: every write to jupyter-cache's
SQLite index happens here, in the main process.  A page that fails stops the build at once
with its cell's traceback.

Only in ``nb_execution_mode = "cache"``; ``GRADARG_PREEXECUTE=0`` turns it off.  Sphinx
plumbing, not part of ``gradarg``; imports MyST-NB and jupyter-cache only.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from sphinx.errors import ExtensionError
from sphinx.util import logging

LOG = logging.getLogger(__name__)

# Seconds of one cold execution measured on the build machine (2 cores): the pool starts the
# longest first so that no long page is left alone at the end.  A page missing here counts
# as the default, and the list is updated from the cache after each build (see ``record``).
COSTS = Path(__file__).with_name("execution_seconds.json")
DEFAULT_COST = 8.0


def _execute(nb, cwd: str, timeout: int) -> tuple:
    """In a worker: execute ``nb`` in ``cwd``; the executed notebook, seconds, error text.

    The kernel talks to this worker over Unix sockets in a fresh directory, not TCP ports.
    Over TCP jupyter_client picks free ports, releases them and lets the kernel bind them:
    the other worker's kernel (or a page's own gloo process group) could take one in
    between, and the kernel died at start ("Address already in use" in ``init_sockets``,
    "Invalid Signature" in its neighbour), which failed a CI run.
    """
    import shutil
    import tempfile

    from jupyter_cache.executors.utils import single_nb_execution
    from jupyter_client.manager import AsyncKernelManager
    from traitlets import default

    sockets = tempfile.mkdtemp(prefix="gradarg-kernel-")

    class UnixSocketKernelManager(AsyncKernelManager):
        @default("transport")
        def _transport_default(self) -> str:
            return "ipc"

        @default("ip")
        def _ip_default(self) -> str:
            return os.path.join(sockets, "k")

    # the class, not an instance: nbclient then owns the kernel manager, and shuts the kernel
    # and its client's sockets down after the page (a manager passed in stayed alive until
    # the build ended, one kernel per page: 88 idle kernels filled 24 GB in a cold build)
    try:
        result = single_nb_execution(nb, cwd=cwd, allow_errors=False, timeout=timeout,
                                     meta_override=True,
                                     kernel_manager_class=UnixSocketKernelManager)
    finally:
        shutil.rmtree(sockets, ignore_errors=True)
    err = None if result.err is None else f"{type(result.err).__name__}: {result.exc_string}"
    return nb, result.time, err


def _notebooks(env, docnames):
    """(docname, path, notebook, read format) of the pages in ``docnames`` that are notebooks."""
    from myst_nb.core.read import create_nb_reader

    found = []
    for docname in docnames:
        path = Path(env.doc2path(docname))
        if path.suffix != ".md":
            continue
        text = path.read_text(encoding="utf-8")
        reader = create_nb_reader(str(path), env.myst_config, env.mystnb_config, text)
        if reader is None:
            continue
        found.append((docname, path, reader.read(text), reader.read_fmt))
    return found


def preexecute(app, env, docnames) -> None:
    """The ``env-before-read-docs`` hook: fill the execution cache on every core."""
    config = env.mystnb_config
    if config.execution_mode != "cache" or os.environ.get("GRADARG_PREEXECUTE") == "0":
        return
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    cache = get_cache(config.execution_cache_path)
    todo = []
    for docname, path, nb, read_fmt in _notebooks(env, list(docnames)):
        try:
            cache.match_cache_notebook(nb)
            continue                      # already executed with these cells
        except KeyError:
            todo.append((docname, path, nb, read_fmt))
    if len(todo) < 2:
        return                            # nothing to run side by side
    costs = json.loads(COSTS.read_text()) if COSTS.exists() else {}
    todo.sort(key=lambda item: -costs.get(item[0], DEFAULT_COST))
    workers = min(os.cpu_count() or 1, 4, len(todo))
    start = time.monotonic()
    ctx = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        futures = {pool.submit(_execute, nb, str(path.parent), config.execution_timeout):
                   (docname, path, read_fmt) for docname, path, nb, read_fmt in todo}
        for future in as_completed(futures):
            docname, path, read_fmt = futures[future]
            try:
                nb, seconds, err = future.result()
            except Exception as exc:  # noqa: BLE001  (a worker that died: said below)
                err, seconds = f"{type(exc).__name__}: {exc}", 0.0
            if err is not None:               # fail now, with the cell's traceback
                pool.shutdown(wait=False, cancel_futures=True)
                raise ExtensionError(f"executing {docname} failed:\n{err}")
            record = cache.add_nb_to_project(str(path), read_data=read_fmt)
            cache.cache_notebook_bundle(
                CacheBundleIn(nb, record.uri, data={"execution_seconds": seconds}),
                check_validity=False, overwrite=True)
    LOG.info(f"pre-executed {len(todo)} pages on {workers} workers in "
             f"{time.monotonic() - start:.0f} s")


def record(app, exc) -> None:
    """``build-finished``: keep each page's last execution time in :data:`COSTS`."""
    if exc is not None or os.environ.get("GRADARG_RECORD_COSTS") != "1":
        return
    from jupyter_cache import get_cache

    cache = get_cache(app.env.mystnb_config.execution_cache_path)
    src = Path(app.srcdir)
    costs = {}
    for rec in cache.list_cache_records():
        seconds = rec.data.get("execution_seconds")
        try:
            docname = Path(rec.uri).relative_to(src).with_suffix("").as_posix()
        except ValueError:
            continue
        if seconds is not None and (src / rec.uri).exists():
            costs[docname] = round(float(seconds), 1)
    COSTS.write_text(json.dumps(dict(sorted(costs.items())), indent=1) + "\n")
