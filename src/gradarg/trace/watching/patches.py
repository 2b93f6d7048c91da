"""Calls torch offers no hook for, observed while a watch listens: ``GradScaler.unscale_``,
``GradScaler.scale``, ``GradScaler.step``, ``Optimizer.zero_grad``, ``LRScheduler.step``,
``Tensor.register_hook``, ``torch.manual_seed``,
``torch.autograd.backward`` (which ``Tensor.backward`` calls), ``torch.autograd.grad``, and
``sample`` / ``log_prob`` of the classes of ``torch.distributions``.

The attribute is wrapped while at least one listener exists and restored when the last one is
removed (the handle's ``remove()``), so nothing is left behind; a listener that raises is
ignored (the user's step is never broken).  A new call to observe is one :class:`_Patch`.
How many ``backward()`` calls are running (a checkpoint's recomputation runs one inside
another) is counted here once, for every listener: :func:`backward_depth`, and the ``outer``
hooks that hear the outermost call only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

__all__ = ["backward_depth", "eager_unless_traced", "given_closure", "module_hook", "register_backward_call_hook", "register_backward_done_hook",
           "register_backward_error_hook", "register_backward_gradient_hook",
           "register_backward_inputs_hook",
           "register_distribution_hooks",
           "register_grad_args_hook", "register_grad_call_hook",
           "register_hook_registration_hook", "register_scale_hook", "register_scaler_step_hook",
           "register_scheduler_step_hook", "register_seed_hook",
           "register_unscale_hook", "register_zero_grad_hook"]


class _Handle:
    def __init__(self, patch: _Patch, fn: Callable[..., None]):
        self.patch, self.fn = patch, fn

    def remove(self) -> None:
        self.patch.remove(self.fn)


class _Patch:
    """Listeners on calls of ``owner.name``; ``wrap(original, listeners)`` makes the wrapper."""

    def __init__(self, owner: Any, name: str,
                 wrap: Callable[[Any, list[Callable[..., None]]], Any]):
        self.owner, self.name, self.wrap = owner, name, wrap
        self.listeners: list[Callable[..., None]] = []
        self.original: Any = None
        self.wrapper: Any = None

    def add(self, fn: Callable[..., None]) -> _Handle:
        if not self.listeners:
            self.original = getattr(self.owner, self.name)
            self.wrapper = self.wrap(self.original, self.listeners)
            self.wrapper.__doc__ = self.original.__doc__
            self.wrapper.__wrapped__ = self.original
            setattr(self.owner, self.name, self.wrapper)
        self.listeners.append(fn)
        return _Handle(self, fn)

    def remove(self, fn: Callable[..., None]) -> None:
        if fn not in self.listeners:
            return
        self.listeners.remove(fn)
        if self.listeners:
            return
        if getattr(self.owner, self.name) is self.wrapper:
            setattr(self.owner, self.name, self.original)
        # else someone wrapped it after us: ours stays inside theirs, passing calls through
        # to no listener (a fresh list for the next watch, which wraps again)
        self.listeners = []
        self.original = self.wrapper = None


def _tell(listeners: list[Callable[..., None]], *args: Any) -> None:
    for listener in listeners:
        try:
            listener(*args)
        except Exception:  # noqa: BLE001, S112 (never break the user's step)
            continue


def _wrap_unscale(original: Any, listeners: list[Callable[..., None]]) -> Any:
    def unscale_(self: Any, optimizer: Any) -> Any:
        out = original(self, optimizer)
        _tell(listeners, self, optimizer)
        return out

    return unscale_


_DEPTH = [0]  # torch.autograd.backward calls running, counted by the wrapper


def given_closure(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether an ``Optimizer.step`` call, as torch's global step hooks see it (``args``:
    ``(optimizer, *step's arguments)``), was given a closure (``step(closure)``)."""
    return callable(kwargs.get("closure", args[1] if len(args) > 1 else None))


def backward_depth() -> int:
    """How many ``torch.autograd.backward`` calls are running now, as the wrapper counts them
    while a listener exists: 0 outside any, 1 inside one, 2 inside a checkpoint's recomputation
    that runs a backward inside another.  Inside a call or done hook: 1 for the outermost."""
    return _DEPTH[0]


def _wrap_backward(original: Any, listeners: list[Callable[..., None]]) -> Any:
    def backward(*args: Any, **kwargs: Any) -> Any:
        tensors = args[0] if args else kwargs.get("tensors")
        _DEPTH[0] += 1
        try:
            _tell(listeners, "call", tensors)
            grads = kwargs.get("grad_tensors", args[1] if len(args) > 1 else None)
            if grads is not None:
                _tell(listeners, "gradient", (tensors, grads))
            inputs = kwargs.get("inputs", args[5] if len(args) > 5 else None)
            if inputs is not None:
                _tell(listeners, "inputs", inputs)
            try:
                out = original(*args, **kwargs)
            except Exception as error:
                _tell(listeners, "error", error)
                raise
            _tell(listeners, "done", None)
            return out
        finally:
            _DEPTH[0] -= 1

    # a backward() inside a torch.compile'd function runs eagerly (a graph break); disabled
    # here, the watch's hooks it calls are not compiled frame by frame either
    return torch.compiler.disable(backward)


def _wrap_grad(original: Any, listeners: list[Callable[..., None]]) -> Any:
    def grad(*args: Any, **kwargs: Any) -> Any:
        try:
            out = original(*args, **kwargs)
        except Exception as error:
            _tell(listeners, "error", error, args, kwargs)
            raise
        create_graph = kwargs.get("create_graph", args[4] if len(args) > 4 else False)
        _tell(listeners, bool(create_graph), out, args, kwargs)
        return out

    return grad


def _wrap_scaler_step(original: Any, listeners: list[Callable[..., None]]) -> Any:
    def step(self: Any, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        _tell(listeners, self, optimizer, "before")
        out = original(self, optimizer, *args, **kwargs)
        _tell(listeners, self, optimizer, "after")
        return out

    return step


def _wrap_around(original: Any, listeners: list[Callable[..., None]]) -> Any:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        _tell(listeners, self, "before")
        out = original(self, *args, **kwargs)
        _tell(listeners, self, "after")
        return out

    return method


def _wrap_zero_grad(original: Any, listeners: list[Callable[..., None]]) -> Any:
    def zero_grad(self: Any, *args: Any, **kwargs: Any) -> Any:
        out = original(self, *args, **kwargs)
        _tell(listeners, self)
        return out

    return zero_grad


def _wrap_registration(original: Any, listeners: list[Callable[..., None]]) -> Any:
    def register_hook(self: Any, hook: Any) -> Any:
        _tell(listeners, "before", self, None)
        out = original(self, hook)
        _tell(listeners, "after", self, out)
        return out

    return register_hook


def _wrap_after(original: Any, listeners: list[Callable[..., None]]) -> Any:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        out = original(self, *args, **kwargs)
        _tell(listeners, self, out)
        return out

    return method


_SCALE = (_Patch(torch.amp.GradScaler, "scale", _wrap_after)
          if hasattr(torch.amp, "GradScaler") else None)
_REGISTER_HOOK = _Patch(torch.Tensor, "register_hook", _wrap_registration)
_SCALER_STEP = (_Patch(torch.amp.GradScaler, "step", _wrap_scaler_step)
                if hasattr(torch.amp, "GradScaler") else None)
_ZERO_GRAD = _Patch(torch.optim.Optimizer, "zero_grad", _wrap_zero_grad)
_UNSCALE = (_Patch(torch.amp.GradScaler, "unscale_", _wrap_unscale)
            if hasattr(torch.amp, "GradScaler") else None)
_SCHEDULER_STEP = _Patch(torch.optim.lr_scheduler.LRScheduler, "step", _wrap_around)
_BACKWARD = _Patch(torch.autograd, "backward", _wrap_backward)


def _wrap_seed(original: Any, listeners: list[Callable[..., None]]) -> Any:
    def manual_seed(seed: Any) -> Any:
        _tell(listeners, seed)
        return original(seed)

    return manual_seed


_SEED = _Patch(torch, "manual_seed", _wrap_seed)


def register_seed_hook(fn: Callable[[Any], None]) -> _Handle:
    """Call ``fn(seed)`` when ``torch.manual_seed(seed)`` is called (as ``torch.manual_seed``;
    ``torch.random.manual_seed`` by that name is not seen), before it runs; until the
    handle's ``remove()``."""
    return _SEED.add(fn)


def _wrap_distribution(method: str) -> Callable[[Any, list[Callable[..., None]]], Any]:
    def wrap(original: Any, listeners: list[Callable[..., None]]) -> Any:
        def call(self: Any, *args: Any, **kwargs: Any) -> Any:
            _tell(listeners, method, self)
            return original(self, *args, **kwargs)

        return call

    return wrap


# each class of torch.distributions that defines sample or log_prob itself
_DISTRIBUTIONS = [_Patch(c, m, _wrap_distribution(m))
                  for c in vars(torch.distributions).values()
                  if isinstance(c, type) and issubclass(c, torch.distributions.Distribution)
                  for m in ("sample", "log_prob") if m in c.__dict__]
_GRAD = _Patch(torch.autograd, "grad", _wrap_grad)


def _wrap_arguments(original: Any, listeners: list[Callable[..., None]]) -> Any:
    def call(*args: Any, **kwargs: Any) -> Any:
        _tell(listeners, args, kwargs)
        return original(*args, **kwargs)

    return call


_GAUSSIAN_NLL = _Patch(torch.nn.functional, "gaussian_nll_loss", _wrap_arguments)


def register_gaussian_nll_hook(fn: Callable[[Any, Any], None]) -> _Handle:
    """Call ``fn(args, kwargs)`` before each ``torch.nn.functional.gaussian_nll_loss`` call
    (``nn.GaussianNLLLoss`` makes one), until the handle's ``remove()``."""
    return _GAUSSIAN_NLL.add(fn)


def register_grad_call_hook(fn: Callable[[bool, Any], None]) -> _Handle:
    """Call ``fn(create_graph, result)`` after each ``torch.autograd.grad`` call that returns
    (``create_graph`` as given, ``False`` by default), until the handle's ``remove()``.  A
    ``grad`` imported by name before the first listener is added is not seen."""

    def on(create_graph: Any, result: Any, *_: Any) -> None:
        if create_graph != "error":
            fn(create_graph, result)

    return _GRAD.add(on)


def register_grad_args_hook(fn: Callable[[Any, Any], None]) -> _Handle:
    """Call ``fn(args, kwargs)`` with the arguments of each ``torch.autograd.grad`` call that
    returns (``outputs``, ``inputs``, ``grad_outputs``, ... as given), until the handle's
    ``remove()``."""

    def on(create_graph: Any, result: Any, args: Any, kwargs: Any) -> None:
        if create_graph != "error":
            fn(args, kwargs)

    return _GRAD.add(on)


def register_grad_error_hook(fn: Callable[[BaseException], None]) -> _Handle:
    """Call ``fn(error)`` when ``torch.autograd.grad`` raises, before the error goes on to the
    caller; until the handle's ``remove()``."""

    def on(kind: Any, payload: Any, *_: Any) -> None:
        if kind == "error":
            fn(payload)

    return _GRAD.add(on)


def register_unscale_hook(fn: Callable[[Any, Any], None]) -> _Handle | None:
    """Call ``fn(scaler, optimizer)`` after each ``torch.amp.GradScaler.unscale_(optimizer)``
    (also when ``scaler.step`` runs it), until the handle's ``remove()``.  ``None`` where
    ``torch.amp.GradScaler`` does not exist (torch < 2.3)."""
    return None if _UNSCALE is None else _UNSCALE.add(fn)


def register_backward_error_hook(fn: Callable[[BaseException], None]) -> _Handle:
    """Call ``fn(error)`` when ``torch.autograd.backward`` (so ``Tensor.backward``) raises,
    before the error goes on to the caller; until the handle's ``remove()``."""

    def on(kind: str, payload: Any) -> None:
        if kind == "error":
            fn(payload)

    return _BACKWARD.add(on)


def register_backward_call_hook(fn: Callable[[Any], None], *, outer: bool = False) -> _Handle:
    """Call ``fn(tensors)`` when ``torch.autograd.backward`` (so ``Tensor.backward``) is
    called, before it runs, with its first argument (a tensor or a sequence of tensors: the
    losses); ``outer``: only for a call that runs inside no other (not a checkpoint's
    recomputation); until the handle's ``remove()``."""

    def on(kind: str, payload: Any) -> None:
        if kind == "call" and (not outer or _DEPTH[0] == 1):
            fn(payload)

    return _BACKWARD.add(on)


def register_backward_inputs_hook(fn: Callable[[Any], None]) -> _Handle:
    """Call ``fn(inputs)`` when ``torch.autograd.backward`` is called with ``inputs=`` (the
    tensors the gradient is accumulated into, all others left out), after the call hooks and
    before it runs; until the handle's ``remove()``."""

    def on(kind: str, payload: Any) -> None:
        if kind == "inputs":
            fn(payload)

    return _BACKWARD.add(on)


def register_backward_gradient_hook(fn: Callable[[Any, Any], None], *, outer: bool = False
                                    ) -> _Handle:
    """Call ``fn(tensors, grad_tensors)`` when ``torch.autograd.backward`` is given
    ``grad_tensors`` (``Tensor.backward(gradient)``: the upstream gradient of each loss), after
    the call hooks and before it runs; ``outer`` as for :func:`register_backward_call_hook`;
    until the handle's ``remove()``."""

    def on(kind: str, payload: Any) -> None:
        if kind == "gradient" and (not outer or _DEPTH[0] == 1):
            fn(*payload)

    return _BACKWARD.add(on)


def register_backward_done_hook(fn: Callable[[], None], *, outer: bool = False) -> _Handle:
    """Call ``fn()`` when ``torch.autograd.backward`` (so ``Tensor.backward``) returns or
    raises (after the error hooks); ``outer``: only for a call that ran inside no other;
    until the handle's ``remove()``."""

    def on(kind: str, payload: Any) -> None:
        if kind in ("done", "error") and (not outer or _DEPTH[0] == 1):
            fn()

    return _BACKWARD.add(on)


def register_scaler_step_hook(fn: Callable[[Any, Any, str], None]) -> _Handle | None:
    """Call ``fn(scaler, optimizer, "before")`` and ``fn(scaler, optimizer, "after")`` around
    each ``torch.amp.GradScaler.step(optimizer)`` (which skips ``optimizer.step()`` when the
    unscaled gradients hold inf/NaN), until the handle's ``remove()``.  ``None`` where
    ``torch.amp.GradScaler`` does not exist."""
    return None if _SCALER_STEP is None else _SCALER_STEP.add(fn)


def register_scale_hook(fn: Callable[[Any, Any], None]) -> _Handle | None:
    """Call ``fn(scaler, outputs)`` after each ``torch.amp.GradScaler.scale`` with what it
    returned (the scaled losses), until the handle's ``remove()``.  ``None`` where
    ``torch.amp.GradScaler`` does not exist."""
    return None if _SCALE is None else _SCALE.add(fn)


def register_hook_registration_hook(fn: Callable[[str, Any, Any], None]) -> _Handle:
    """Call ``fn("before", tensor, None)`` before each ``torch.Tensor.register_hook`` and
    ``fn("after", tensor, handle)`` after it (the hook is registered by then), until the
    handle's ``remove()``.  Tensor hooks run in the order they were registered, so a hook
    registered at "before" runs before the user's and one registered at "after" after it."""
    return _REGISTER_HOOK.add(fn)


def register_scheduler_step_hook(fn: Callable[[Any, str], None]) -> _Handle:
    """Call ``fn(scheduler, "before")`` and ``fn(scheduler, "after")`` around each
    ``torch.optim.lr_scheduler.LRScheduler.step()`` (a scheduler class that overrides ``step``
    without calling it, such as ``ReduceLROnPlateau``, is not seen), until the handle's
    ``remove()``."""
    return _SCHEDULER_STEP.add(fn)


def register_zero_grad_hook(fn: Callable[[Any], None]) -> _Handle:
    """Call ``fn(optimizer)`` after each ``torch.optim.Optimizer.zero_grad()`` (an optimizer
    class that overrides ``zero_grad`` without calling it is not seen), until the handle's
    ``remove()``."""
    return _ZERO_GRAD.add(fn)


def _inert(*args: Any, **kwargs: Any) -> None:
    """What a copy of a watched module gets in place of a watch's hook: nothing happens."""


def _made_inert() -> Callable[..., None]:
    return _inert


class _ModuleHook:
    """A watch's hook on a module.  ``copy.deepcopy(model)`` or ``pickle`` / ``torch.save`` of
    the model inside the block (an EMA teacher, a checkpoint) copies the module's hooks: the
    copy gets :func:`_inert`, not a copy of the watch (whose state holds modules and tensors
    that do not copy, and which would then record the copy's calls)."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[..., Any]):
        _disable_module_hooks()
        self.fn = fn

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if torch.compiler.is_compiling():  # Dynamo traces it: run it eagerly, a graph break
            return _DISABLED[0](self.fn, *args, **kwargs)
        return self.fn(*args, **kwargs)

    def __reduce__(self) -> tuple[Any, ...]:  # copy.deepcopy and pickle alike
        return (_made_inert, ())


def _run(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    return fn(*args, **kwargs)


_DISABLED: list[Callable[..., Any]] = []  # _run, disabled for torch.compile


def _disable_module_hooks() -> None:
    """Make the ``torch.compiler.disable``'d caller of :meth:`_ModuleHook.__call__`, once,
    when the first hook is made (not at import: ``torch.compiler.disable`` imports Dynamo,
    0.7-1 s, which a user of the rest of the package does not need; a watch imports it when
    it starts anyway, in :func:`_wrap_backward`).  A hook reached while Dynamo traces runs
    through it, eagerly (a graph break), and one called from eager code inside a compiled
    function is not compiled frame by frame (each compiled, then recompiled for each new
    argument up to Dynamo's limit).  Outside tracing the hook is called directly: the
    disabled wrapper costs about a microsecond per call, ``is_compiling()`` a tenth of it."""
    if not _DISABLED:
        _DISABLED.append(torch.compiler.disable(_run))


class _MarkedHook(_ModuleHook):
    """A :class:`_ModuleHook` torch can set attributes on (``register_state_dict_post_hook``
    marks its hook ``_from_public_api``)."""


def module_hook(fn: Callable[..., Any], *, marked: bool = False) -> Callable[..., Any]:
    """``fn`` as a module hook that copies of the module do not carry (:class:`_ModuleHook`);
    ``marked``: one torch may set attributes on."""
    return _MarkedHook(fn) if marked else _ModuleHook(fn)


def eager_unless_traced(hook: Callable[..., Any]) -> Callable[..., Any]:
    """``hook`` for a module: called directly, or through ``torch.compiler.disable`` while
    torch.compile traces the module (a graph break: the hook runs eagerly, outside the
    graph).  The wrapper of ``torch.compiler.disable`` costs a few microseconds at every
    call, so it is taken only while tracing (``torch.compiler.is_compiling()``)."""
    traced = torch.compiler.disable(hook)
    compiling = torch.compiler.is_compiling

    def call(*args: Any) -> Any:
        return traced(*args) if compiling() else hook(*args)

    return call


def register_distribution_hooks(fn: Callable[[str, Any], None]) -> list[_Handle]:
    """Call ``fn("sample", dist)`` / ``fn("log_prob", dist)`` before each call of those
    methods of a class of ``torch.distributions`` (a subclass defined elsewhere that overrides
    them without calling the parent's is not seen), until each handle's ``remove()``."""
    return [p.add(fn) for p in _DISTRIBUTIONS]
