"""Small choices remembered on disk for the next process: which candidate won on this machine.

Used by :mod:`gradarg.sparse._remember` (the compiled sparse call's winner, kind
``"compiled"``) and by :mod:`.speeds` (the dense Jacobian's route, kind ``"routes"``).  A
choice is a few words of JSON kept beside torch's own compile caches, in
``<inductor cache>/gradarg/<kind>/<key>.json`` (the inductor cache is
``$TORCHINDUCTOR_CACHE_DIR``, by default ``<tmp>/torchinductor_<user>``).

Only a choice is remembered, never a result: a wrong memory can cost speed, never correctness,
so the key can afford to be loose: it names a function by its code, its closure's constants and
its tensors' shapes and dtypes (:func:`describe`), not by identity, so that it means the same
function in the next process; :func:`machine` names the processor, for choices measured on it.
A file that cannot be read, parsed or matched is ignored; one that cannot be written is skipped.

(Moved here from ``gradarg.sparse._remember`` so that the core can share it: the sparse
package may import the core, not the reverse.)  May import torch only.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import sys
import tempfile
import types
from collections.abc import Iterable
from typing import Any

import torch

__all__ = ["describe", "key", "machine", "memory_dir", "recall", "remember"]


def memory_dir(kind: str) -> str:
    """``<inductor cache dir>/gradarg/<kind>``: torch's ``cache_dir()`` (which follows
    ``$TORCHINDUCTOR_CACHE_DIR``), or the same default where that function is missing."""
    module = sys.modules.get("torch._inductor.runtime.cache_dir_utils")
    try:  # torch's function once inductor is loaded; importing it would load Dynamo (1.5-5 s)
        root = module.cache_dir() if module is not None else None
    except OSError:
        root = None
    if root is None:
        root = os.path.abspath(os.environ.get("TORCHINDUCTOR_CACHE_DIR") or os.path.join(
            tempfile.gettempdir(), "torchinductor_" + re.sub(r'[\\/:*?"<>|]', "_", _user())))
    return os.path.join(root, "gradarg", kind)


def _user() -> str:
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError, ModuleNotFoundError):  # as torch's default_cache_dir()
        getuid = getattr(os, "getuid", None)
        return f"uid_{getuid()}" if callable(getuid) else "unknown_user"


def describe(obj: Any, depth: int = 0) -> str:
    """A text that names a callable (or a value it captures) across processes: a function's
    module, name, bytecode and constants, its defaults and closure (recursively, 3 levels);
    a tensor's shape, dtype and ``requires_grad``; a module's repr and its tensors' shapes;
    a number's or string's repr; anything else its type.  Identity-free (no addresses, no
    values of tensors).

    Examples
    --------
    >>> describe(torch.zeros(2, 3))
    'tensor(2, 3)torch.float32False'
    >>> def scaled(w):
    ...     return lambda u: u * w
    >>> describe(scaled(torch.ones(3))) == describe(scaled(torch.zeros(3)))
    True
    >>> describe(scaled(2.0)) == describe(scaled(3.0))
    False
    """
    if depth > 3:
        return type(obj).__qualname__
    deeper = functools.partial(describe, depth=depth + 1)
    if isinstance(obj, torch.Tensor):
        return f"tensor{tuple(obj.shape)}{obj.dtype}{obj.requires_grad}"
    if obj is None or isinstance(obj, (bool, int, float, complex, str, bytes)):
        return repr(obj)
    if isinstance(obj, (tuple, list)):
        return type(obj).__name__ + "(" + ",".join(deeper(o) for o in obj[:16]) + ")"
    if isinstance(obj, types.FunctionType):
        cells = []
        for cell in obj.__closure__ or ():
            try:
                cells.append(deeper(cell.cell_contents))
            except ValueError:  # an empty cell
                cells.append("<empty>")
        return (f"fn {obj.__module__}.{obj.__qualname__} {_code(obj.__code__)} "
                f"defaults {deeper(obj.__defaults__)} closure [{';'.join(cells)}]")
    if isinstance(obj, types.MethodType):
        return f"method {deeper(obj.__func__)} of {deeper(obj.__self__)}"
    if isinstance(obj, functools.partial):
        return f"partial {deeper(obj.func)} {deeper(obj.args)} {deeper(sorted(obj.keywords))}"
    if isinstance(obj, torch.nn.Module):
        tensors = [f"{name}:{describe(t)}" for name, t in
                   (*obj.named_parameters(), *obj.named_buffers())]
        return f"module {type(obj).__qualname__} {obj!r} {' '.join(tensors)}"
    if isinstance(obj, types.BuiltinFunctionType):
        return f"builtin {getattr(obj, '__module__', '')}.{obj.__qualname__}"
    call = type(obj).__call__ if callable(obj) else None
    if isinstance(call, types.FunctionType):  # a callable object
        return f"object {type(obj).__module__}.{type(obj).__qualname__} {deeper(call)}"
    return f"{type(obj).__module__}.{type(obj).__qualname__}"


def _code(code: types.CodeType) -> str:
    consts = ",".join(_code(c) if isinstance(c, types.CodeType) else repr(c)
                      for c in code.co_consts)
    return f"{code.co_code.hex()}|{consts}|{','.join(code.co_names)}"


def key(parts: Iterable[object], prefix: str) -> str:
    """A file name for ``parts`` (texts, numbers, tensors): a SHA-256 of them, after
    ``prefix`` (the kind of memory and its version) and torch's version."""
    h = hashlib.sha256(f"{prefix} torch {torch.__version__}".encode())
    for part in parts:
        if isinstance(part, torch.Tensor):
            h.update(part.detach().contiguous().numpy().tobytes())
        else:
            h.update(repr(part).encode())
        h.update(b"\0")
    return h.hexdigest()


def recall(kind: str, name: str, version: int, folder: str | None = None
           ) -> dict[str, Any] | None:
    """The remembered choice of ``kind`` for key ``name``, or ``None`` (none, unreadable, not
    JSON, not a dict of strings, another ``version``); ``folder``: instead of
    ``memory_dir(kind)``."""
    try:
        with open(os.path.join(folder or memory_dir(kind), name + ".json"),
                  encoding="utf-8") as file:
            got = json.load(file)
    except (OSError, ValueError):
        return None
    if (not isinstance(got, dict) or got.get("version") != version
            or not all(isinstance(v, str) for k, v in got.items() if k != "version")):
        return None
    return got


def remember(kind: str, name: str, choice: dict[str, str], version: int,
             folder: str | None = None) -> None:
    """Write ``choice`` of ``kind`` for key ``name`` (atomically: a reader sees the old file or
    the new one) in ``folder`` (default ``memory_dir(kind)``); an unwritable cache directory
    is skipped silently."""
    try:
        folder = folder or memory_dir(kind)
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                json.dump({"version": version, **choice}, file)
            os.replace(tmp, os.path.join(folder, name + ".json"))
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        pass


@functools.cache
def machine() -> str:
    """The processor this process runs on, as a text for keys: ``/proc/cpuinfo``'s model name
    where there is one, else :func:`platform.processor` or :func:`platform.machine`."""
    import platform

    try:
        with open("/proc/cpuinfo", encoding="utf-8") as file:
            for line in file:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()
