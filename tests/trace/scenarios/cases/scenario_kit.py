"""Shared pieces of the blind training-step scenarios (see ``../README.md``).

Each ``case_*.py`` next to this file describes one training step taken from a public bug report:
``step(watch)`` runs it, ``truth(run)`` asserts the bug with plain torch, ``MUST`` / ``MUST_NOT``
say what a right diagnosis has to say and must not claim.  This module only holds the helpers
that read them; it never imports gradarg.
"""

from __future__ import annotations

import contextlib
import re
import types
from collections.abc import Callable, Iterable

# The summary line claims the step is fine.  Phrases are matched against a text made of one line
# "summary: <w.summary(checks=False)>" and one line "why <name>: <w.why_no_grad(name)>" per name
# in ASK.
FALSE_OK = r"^summary: (gradients )?ok\b"
HEALTHY_OK = r"^summary: gradients ok\b"
# claims that zero_grad was not called (for steps where it was)
CLAIMS_NO_ZERO_GRAD = (
    r"zero_grad(\(\))?\s+(is\s+|was\s+)?(missing|not called|never called|forgotten)"
    r"|(missing|forgot\w*|no)\s+(call to\s+)?(optimizer\.|model\.)?zero_grad"
    r"|\.grad\s+(was\s+|is\s+)?not\s+(zeroed|reset|cleared)"
)
# claims of a non-finite gradient (for steps where every gradient is finite)
CLAIMS_NONFINITE = r"\bnan\b|non-?finite|\binf\b|infinit"
# claims that a backward pass or forward raised (for steps where nothing raised)
CLAIMS_ERROR = r"\braised\b|\bexception\b|RuntimeError|\berror\b"


class Run(types.SimpleNamespace):
    """What ``step`` returns: ``w`` (the watch, or None under ``plain``) and the step's objects."""


def plain(model: object) -> contextlib.AbstractContextManager[None]:
    """Stand-in for ``gradarg.watch`` when the ground truth is established with torch alone."""
    del model
    return contextlib.nullcontext()


def tool_text(w: object, ask: Iterable[str]) -> str:
    """The text the phrases are matched against: the summary and ``why_no_grad`` per name."""
    # checks=False: the line without its trailing list of check names ("[checked: non-finite,
    # ..., dead units, accumulated ...]"), which names checks and claims nothing (see README).
    lines = [f"summary: {w.summary(checks=False)}"]  # type: ignore[attr-defined]
    for name in ask:
        try:
            why = w.why_no_grad(name)  # type: ignore[attr-defined]
        except Exception as error:  # noqa: BLE001  (the answer is part of what is judged)
            why = f"<{type(error).__name__}: {error}>"
        lines.append(f"why {name}: {why}")
    return "\n".join(lines)


def _found(pattern: str, text: str) -> bool:
    return re.search(pattern, text, re.IGNORECASE | re.MULTILINE) is not None


def judge(text: str, must: list[list[str]], must_not: list[str]) -> tuple[str, list, list]:
    """``("right" | "false" | "silent", missing must-groups, must-not patterns found)``.

    False when a must-not phrase appears (a false "ok" is one), silent when nothing false is
    said but a must group has no match, right otherwise.
    """
    missing = [group for group in must if not any(_found(p, text) for p in group)]
    found = [p for p in must_not if _found(p, text)]
    verdict = "false" if found else ("silent" if missing else "right")
    return verdict, missing, found


def expect_raise(fn: Callable[[], object], kind: type[BaseException]) -> BaseException | None:
    """Run ``fn``; return the exception of type ``kind`` it raised, or None."""
    try:
        fn()
    except kind as error:
        return error
    return None


# --- two processes (round 2's DDP scenarios) -------------------------------------------------


class Recorded:
    """What a watch said in another process: the summary and ``why_no_grad`` answers, as text.

    A DDP scenario runs its step in two processes; each process asks its own watch and sends the
    text back, so the judge reads the same ``summary(checks=False)`` / ``why_no_grad`` it would
    read in one process.
    """

    def __init__(self, summary: str, why: dict[str, str]) -> None:
        self._summary, self._why = summary, dict(why)

    def summary(self, checks: bool = True) -> str:
        del checks  # recorded with checks=False
        return self._summary

    def why_no_grad(self, name: str) -> str:
        return self._why[name]


def record(w: object, ask: Iterable[str]) -> tuple[str, dict[str, str]] | None:
    """``w.summary(checks=False)`` and ``w.why_no_grad(name)`` per name, or None under ``plain``."""
    if w is None:
        return None
    why = {}
    for name in ask:
        try:
            why[name] = w.why_no_grad(name)  # type: ignore[attr-defined]
        except Exception as error:  # noqa: BLE001  (the answer is part of what is judged)
            why[name] = f"<{type(error).__name__}: {error}>"
    return w.summary(checks=False), why  # type: ignore[attr-defined]


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _child(rank: int, world: int, port: int, fn: Callable, conn: object) -> None:
    import torch.distributed as dist

    try:
        dist.init_process_group(
            "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world
        )
        try:
            result = ("ok", fn(rank))
        finally:
            dist.destroy_process_group()
    except BaseException as error:  # noqa: BLE001  (sent to the parent, which raises it)
        import traceback

        result = ("error", f"{type(error).__name__}: {error}\n{traceback.format_exc()}")
    conn.send(result)  # type: ignore[attr-defined]
    conn.close()  # type: ignore[attr-defined]


def two_processes(fn: Callable[[int], object], timeout: float = 60.0) -> list[object]:
    """Run ``fn(rank)`` in two forked processes joined by a gloo process group; their results.

    The processes are forked (they inherit the imported torch and gradarg, and ``fn`` need not
    be picklable); a result must be picklable without tensors (lists of floats).  A process that
    raised makes this raise with its traceback; one still running after ``timeout`` seconds is
    killed (by its own pid) and reported.
    """
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    port = _free_port()
    pipes, procs = [], []
    for rank in range(2):
        parent, child = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_child, args=(rank, 2, port, fn, child), daemon=True)
        proc.start()
        child.close()
        pipes.append(parent)
        procs.append(proc)
    results: list[object] = []
    try:
        for rank, conn in enumerate(pipes):
            if not conn.poll(timeout):
                raise TimeoutError(f"process {rank} sent nothing in {timeout} s")
            status, value = conn.recv()
            if status != "ok":
                raise RuntimeError(f"process {rank} raised: {value}")
            results.append(value)
    finally:
        for proc in procs:
            proc.join(5)
            if proc.is_alive():
                proc.kill()
                proc.join()
    return results
