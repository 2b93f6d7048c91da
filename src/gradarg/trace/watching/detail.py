"""Which steps of a watched block get the full per-module record (``watch(model, full_steps=k)``).

With ``full_steps=k`` (by default 3) the first ``k`` steps of the block are recorded in full,
and so is every step that follows a step where something was off; the other steps are
*light*: the recorder's forward hooks on the modules inside the model are taken off, so no
gradient at their outputs and no dead unit is noted.  ``full_steps=None``: every step is
recorded in full.  The model's own call is recorded (its inputs, its outputs
and the gradient arriving there: the step's graph is read from its outputs), and every hook
on what the optimizer reads still runs (each parameter's backward passes and their norms,
each optimizer step's ``.grad``, the events of :mod:`.gradhooks`).

On a light step the modules inside the model get lighter hooks instead (:mod:`.sentinel`:
each call's parent, weak references to its inputs and outputs and their autograd nodes): when
the model's output is not finite, the module call where the first NaN/Inf comes from is
located from them by the full step's rule (its output not finite, its inputs finite:
checked; then the graph's saved values).

A step was *off* when one of these was observed in it: a parameter's pass gradient or a
recorded module output's gradient that is non-finite or exactly zero, a trainable parameter
without a pass, a ``backward()`` that raised, a loss that was not finite at the
``backward()`` call.  A light step that is off is
reported as such (its module-level checks "not checked", its non-finite or zero gradients and
missing ones "not located inside the model", except a NaN/Inf the light notes located in
the forward), and the next step is recorded in full.

Imports nothing of the trace room but :mod:`.finding` and :mod:`.patches`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from . import patches
from .finding import Finding

__all__ = ["MODULE_CHECKS", "Detail", "ModuleHooks", "check_full_steps", "light_findings",
           "light_text", "seen_first"]

# the checks that read the module calls of the step: not run on a light step
MODULE_CHECKS = ("cut from the graph", "outputs used", "vanishing/exploding", "dead units")
# checks whose problem is located by the module record: said unlocated on a light step
_LOCATED = ("non-finite", "all-zero", "missing gradients")
_SHOWN_STEPS = 8  # full steps named after the first ones


def check_full_steps(full_steps: Any) -> int | None:
    """``full_steps`` validated: ``None`` or an int >= 1.

    Raises
    ------
    TypeError
        Not ``None`` nor an int (a bool is refused).
    ValueError
        An int below 1.
    """
    if full_steps is None:
        return None
    if isinstance(full_steps, bool) or not isinstance(full_steps, int):
        raise TypeError(f"watch(): full_steps must be None or an int >= 1, got "
                        f"{type(full_steps).__name__} {full_steps!r}")
    if full_steps < 1:
        raise ValueError(f"watch(): full_steps must be None or an int >= 1, got {full_steps}")
    return full_steps


class Detail:
    """The steps of a block and which of them are recorded in full.

    Parameters
    ----------
    full_steps : int or None
        Steps recorded in full at the start of the block; ``None``: every step.
    trainable : int
        The number of watched parameters that require grad (a step where fewer got a pass
        was off).
    """

    def __init__(self, full_steps: int | None, trainable: int):
        self.full_steps = full_steps
        self._trainable = trainable
        self.step = 0  # steps begun in the block
        self.full = True  # whether the current step is recorded in full
        self.full_at: list[int] = []  # steps recorded in full after the first ones (latest)
        self.light = 0  # light steps so far
        self.off_at: int | None = None  # the last step found off, when it was light
        self.located: Any = None  # a light step's first NaN/Inf (:class:`.sentinel.Located`)
        self._raised: Any = None

    def begin(self, passes: list[Any], raised: Any, loss_finite: bool | None,
              arrivals: list[tuple[int, float]]) -> bool:
        """A step begins; ``passes``, ``raised``, ``loss_finite`` and ``arrivals`` are what
        the last step observed (:class:`.events.PassEntry` list, the last ``backward()`` that
        raised, the loss's finiteness, the ``(slot, norm)`` of each gradient that arrived at
        a recorded module output: inside the model on a full step, at the model's output on
        a light one).  Returns whether this step is recorded in full."""
        k = self.full_steps
        if k is None:  # every step in full: nothing to read
            self.step += 1
            return True
        off = False
        if self.step:
            off = (raised is not self._raised or loss_finite is False
                   or len({id(e.param) for e in passes}) < self._trainable
                   or any(not math.isfinite(e.grad) or e.grad == 0.0 for e in passes)
                   or any(not math.isfinite(n) or n == 0.0 for _, n in arrivals))
            if off and not self.full:
                self.off_at = self.step
        self._raised = raised
        self.located = None
        self.step += 1
        self.full = self.step <= k or off
        if not self.full:
            self.light += 1
        elif self.step > k:
            self.full_at = [*self.full_at[-(_SHOWN_STEPS - 1):], self.step]
        return self.full

    def why_light(self) -> str:
        """``"step 5 was a light step: module calls are recorded in full on steps 1-3 and
        after a step where something was off"``."""
        return (f"step {self.step} was a light step: module calls are recorded in full on "
                f"{self.steps_in_full()} and after a step where something was off")

    def steps_in_full(self) -> str:
        """``"steps 1-3 and step 8"``: the steps recorded in full, in words."""
        k = self.full_steps or self.step
        text = "step 1" if k == 1 else f"steps 1-{k}"
        if self.full_at:
            more = ", ".join(map(str, self.full_at))
            text += f" and step{'s' if len(self.full_at) > 1 else ''} {more}"
        return text


_GOT = {"none": "no gradient", "zero": "an all-zero gradient", "nonfinite": "a NaN/Inf gradient"}


def light_text(detail: Detail, name: str, state: str) -> str:
    """``why_no_grad``'s answer for parameter ``name`` whose gradient was ``state``
    (``"none"``, ``"zero"``, ``"nonfinite"``) on a light step: not why (the module calls were
    not recorded), but where to ask."""
    return (f"{name} got {_GOT.get(state, state)} on step {detail.step}, a light step of the "
            f"watch (full_steps={detail.full_steps}): its module calls were not recorded, so "
            f"why is not read from them; the next step is recorded in full (ask again after "
            f"it), or gradarg.why_no_grad(loss, param) reads this step's graph")


def seen_first(passes: list[Any], owner: Any, loss_finite: bool | None) -> str:
    """What a light step observed of its non-finite gradients without a module record: the
    parameter the first one reached (``passes`` in arrival order) and whether the loss
    passed to ``backward()`` was already NaN/Inf; ``""``: none arrived."""
    for e in passes:
        if not math.isfinite(e.grad):
            name, module = owner[e.param]
            text = (f"; observed: the first NaN/Inf gradient to reach a parameter reached "
                    f"{name} (module '{module}')")
            if loss_finite is False:
                text += (", and the loss passed to backward() was itself NaN/Inf (observed at "
                         "the call): the forward made it")
            elif loss_finite:
                text += ", and the loss passed to backward() was finite: its backward made it"
            return text
    return ""


def light_findings(detail: Detail, results: list[Finding], seen: str = "") -> list[Finding]:
    """``results`` as they stand on a light step: the module-level checks not run (why: the
    step was light), the non-finite and zero gradients said not located (with ``seen``, from
    :func:`seen_first`, for the non-finite ones); unchanged on a step recorded in full."""
    if detail.full:
        return results
    why = detail.why_light()
    out = []
    for f in results:
        if f.check in MODULE_CHECKS:
            f = Finding(f.check, False, why_not=why)
        elif f.check in _LOCATED and f.problem is None:  # checked where the step looked
            f = Finding(f"{f.check} (the parameters' gradients and the model's output only)",
                        f.ran, None, f.why_not, f.note, f.expected)
        elif f.check == "non-finite" and detail.located is not None:
            f = Finding(f.check, f.ran, f"{f.problem} (located inside the model from the "
                        f"values and the graph of its module calls, as on a full step: {why}; "
                        f"the gradients inside the model were not recorded; the next step is "
                        f"recorded in full{seen})", f.why_not, f.note, f.expected)
        elif f.check in _LOCATED:
            more = seen if f.check == "non-finite" else ""
            f = Finding(f.check, f.ran, f"{f.problem} (not located inside the model: {why}; "
                        f"the next step is recorded in full{more})", f.why_not, f.note,
                        f.expected)
        out.append(f)
    return out


class ModuleHooks:
    """The forward pre-hook and hook on every module: the model's own stay on (a step begins
    there), the others are taken off for a light step and put back for a full one.

    Parameters
    ----------
    modules : list
        Every module of the model (the model included).
    root : torch.nn.Module
        The model.
    pre, post : callable
        The forward pre-hook and the forward hook.
    sentinel : Sentinel or None
        On a light step, its forward hook goes on the other modules instead, its pre-hook on
        those with children (:class:`.sentinel.Sentinel`: a few attribute reads per call),
        both on the model after ``pre`` and ``post``.
    """

    def __init__(self, modules: list[Any], root: Any, pre: Callable[..., Any],
                 post: Callable[..., Any], sentinel: Any = None):
        self._inner = [m for m in modules if m is not root]
        self._pre, self._post = pre, post
        self._light = None if sentinel is None else sentinel.hooks()
        hook = patches.module_hook  # copies of the model (deepcopy, pickle) carry none
        self._root = [root.register_forward_pre_hook(hook(pre)),
                      root.register_forward_hook(hook(post))]
        if sentinel is not None:
            self._root += [root.register_forward_pre_hook(hook(sentinel.root_pre)),
                           root.register_forward_hook(hook(sentinel.root_post))]
        self._handles: list[Any] = []
        self.on: bool | None = None
        self.arm(True)

    def arm(self, on: bool) -> None:
        """Put the other modules' hooks on (``on``) or the sentinel's instead; nothing if
        already so."""
        if on == self.on:
            return
        for h in self._handles:
            h.remove()
        self._handles = []
        if on:
            pre, post = patches.module_hook(self._pre), patches.module_hook(self._post)
            for m in self._inner:
                self._handles.append(m.register_forward_pre_hook(pre))
                self._handles.append(m.register_forward_hook(post))
        elif self._light is not None:  # pre-hooks only where a call can run inside
            pre, post = (patches.module_hook(h) for h in self._light)
            for m in self._inner:
                if next(m.children(), None) is not None:
                    self._handles.append(m.register_forward_pre_hook(pre))
                self._handles.append(m.register_forward_hook(post))
        self.on = on

    def detach(self) -> list[Any]:
        """Every handle, for the caller to remove (nothing is hooked after)."""
        handles, self._root, self._handles = self._root + self._handles, [], []
        return handles
