"""Which compiled candidate won on this machine, remembered on disk for the next process.

:class:`~gradarg.sparse.CompiledSparse` compiles and times several candidates at its first call
(the Jacobian modes that need as many passes, and inductor's code-generation options); the
winner, and whether the eager call beat it, is a few words of JSON kept beside torch's own
compile caches, in ``<inductor cache>/gradarg/compiled/<key>.json`` (the inductor cache is
``$TORCHINDUCTOR_CACHE_DIR``, by default ``<tmp>/torchinductor_<user>``).  A later process that
compiles the same function for the same pattern, shape and dtype reads it and compiles only the
winner (or none, when the eager call won).

Only a choice is remembered, never a compiled artifact: whatever the file says, the call runs
a function that ``torch.compile`` compiled (or found in its own caches, under its own keys and
guards) in this process, or the eager call.  A wrong memory can therefore cost speed, never
correctness, and the key can afford to be loose: it names the function by its code, its
closure's constants and its tensors' shapes and dtypes (:func:`describe`), not by identity,
so that it means the same function in the next process.  A file that cannot be read, parsed
or matched to a candidate is ignored (the candidates are timed again, and the file rewritten);
one that cannot be written is skipped.

The mechanism is :mod:`gradarg.core.memory` (shared with the dense Jacobian's route
choice); this module names the compiled call's kind of memory and its version.
"""

from __future__ import annotations

from typing import Any

from ..core import memory

__all__ = ["describe", "key", "memory_dir", "recall", "remember"]

VERSION = 1  # of the file's content: a change makes older files unmatched, never misread
KIND = "compiled"
describe = memory.describe


def memory_dir() -> str:
    """``<inductor cache dir>/gradarg/compiled`` (:func:`gradarg.core.memory.memory_dir`)."""
    return memory.memory_dir(KIND)


def key(parts) -> str:
    """A file name for ``parts`` (:func:`gradarg.core.memory.key`)."""
    return memory.key(parts, f"gradarg-compiled {VERSION}")


def recall(name: str) -> dict[str, Any] | None:
    """The remembered choice for key ``name``, or ``None``."""
    return memory.recall(KIND, name, VERSION, memory_dir())


def remember(name: str, choice: dict[str, str]) -> None:
    """Write ``choice`` for key ``name`` (skipped silently when the folder is unwritable)."""
    memory.remember(KIND, name, choice, VERSION, memory_dir())
