"""Argument checks shared by the public helpers: one clear message per misuse."""

from __future__ import annotations

import cmath
import math
import operator
import os
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

Inputs = torch.Tensor | Sequence[torch.Tensor]


def check_callable(name: str, fn: Any, what: str = "fn(x) -> y") -> None:
    """Refuse a ``fn`` that cannot be called, naming the argument and what was expected."""
    if not callable(fn):
        got = f"a tensor of shape {tuple(fn.shape)}" if isinstance(fn, torch.Tensor) else (
            type(fn).__name__)
        raise TypeError(f"{name} must be a function (or module) {what}, got {got}; "
                        f"pass the function itself, not its result")


def check_tensor(name: str, value: Any) -> torch.Tensor:
    """Return ``value`` if it is a tensor, else raise a ``TypeError`` naming ``name``."""
    if not isinstance(value, torch.Tensor):
        raise TypeError(
            f"{name} must be a torch.Tensor, got {type(value).__name__}; "
            f"wrap numbers or arrays with torch.tensor(..., dtype=torch.float64)"
        )
    return value


def check_dense(name: str, t: torch.Tensor) -> torch.Tensor:
    """Refuse a tensor that holds no values (the ``meta`` device) or is not dense.

    A sparse tensor (COO, CSR, CSC, BSR, BSC) as an input is refused, not densified: ``fn``
    would see a different tensor from the one passed, and most operations have no sparse
    kernel; ``.to_dense()`` says what is meant.  ``TypeError`` for a layout, ``ValueError``
    for the meta device.
    """
    if t.layout != torch.strided:
        raise TypeError(
            f"{name} is a sparse tensor (layout {t.layout}); expected a dense (strided) tensor: "
            f"derivatives are taken with respect to every element, so pass {name}.to_dense()"
        )
    if t.is_meta:
        raise ValueError(
            f"{name} is on the meta device, which holds shapes but no values; derivatives are "
            f"computed from values: create {name} on a real device (torch.device('cpu') or "
            f"'cuda')"
        )
    return t


def check_differentiable_dtype(name: str, t: torch.Tensor) -> torch.Tensor:
    """Raise a ``TypeError`` unless ``t`` has a floating or complex dtype."""
    if not (t.is_floating_point() or t.is_complex()):
        raise TypeError(
            f"{name} has dtype {t.dtype}, which autograd cannot differentiate; "
            f"expected a floating dtype (torch.float32, torch.float64) or a complex one, "
            f"e.g. {name}.to(torch.float64)"
        )
    return t


_NAN_TEXT = "contains NaN or Inf; derivatives computed there are NaN or meaningless"
NAN_WARNING = rf".* {_NAN_TEXT}"  # the message, as a pattern for warnings.filterwarnings


def check_finite(name: str, t: torch.Tensor) -> None:
    """Warn (``RuntimeWarning``) if ``t`` holds NaN or Inf: derivatives there are meaningless."""
    # A finite sum proves every element finite (NaN and Inf propagate) in one cheap kernel;
    # only a non-finite sum, which may also be an overflow of finite values, needs the full check.
    try:
        total = t.detach().sum().item()
    except RuntimeError as err:  # inside torch.func.vmap: no .item() on a batched tensor
        if "vmap" in str(err):
            return  # the values are per sample, out of reach here: no warning rather than a crash
        raise
    if cmath.isfinite(total) if isinstance(total, complex) else math.isfinite(total):
        return
    if not bool(torch.isfinite(t).all()):
        warnings.warn(
            f"{name} {_NAN_TEXT}",
            RuntimeWarning,
            stacklevel=3,
        )


def as_input_tuple(name: str, x: Inputs) -> tuple[tuple[torch.Tensor, ...], bool]:
    """Normalise one tensor or a tuple/list of tensors; return ``(tensors, was_tuple)``."""
    is_tuple = isinstance(x, (tuple, list))
    xs = tuple(x) if is_tuple else (x,)
    if is_tuple and not xs:
        raise ValueError(f"{name} is an empty sequence; expected at least one tensor")
    for i, xi in enumerate(xs):
        label = f"{name}[{i}]" if is_tuple else name
        check_tensor(label, xi)
        check_dense(label, xi)
        check_differentiable_dtype(label, xi)
        check_finite(label, xi)
    return xs, is_tuple


def fresh_leaves(xs: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, ...]:
    """Private copies of the caller's tensors as new leaf tensors that require grad.

    The copies share nothing with the originals, so neither ``.grad``, ``requires_grad``
    nor the values of the caller's tensors can change, whatever ``fn`` does.
    """
    return tuple(xi.detach().clone().requires_grad_(True) for xi in xs)


def as_output_tuple(fn: Callable[..., Any], out: Any) -> tuple[tuple[torch.Tensor, ...], bool]:
    """Check what ``fn`` returned: a tensor or a tuple/list of tensors."""
    name = getattr(fn, "__name__", "fn")
    is_tuple = isinstance(out, (tuple, list))
    outs = tuple(out) if is_tuple else (out,)
    if is_tuple and not outs:
        raise TypeError(f"{name} returned an empty {type(out).__name__}; expected tensors")
    for i, yi in enumerate(outs):
        if not isinstance(yi, torch.Tensor):
            where = f"element {i} of the {type(out).__name__} returned by {name}" if is_tuple else (
                f"the value returned by {name}"
            )
            raise TypeError(f"{where} is a {type(yi).__name__}, expected a torch.Tensor; "
                            f"{_return_advice(yi)}")
    return outs, is_tuple


def _return_advice(value: Any) -> str:
    """What to return instead of ``value`` (not a tensor), for :func:`as_output_tuple`."""
    if value is None:
        return "fn returned nothing (a missing return statement?): return its output tensor"
    if isinstance(value, dict):
        return ("return a tensor or a tuple of tensors, not a dict: e.g. "
                "tuple(out[k] for k in sorted(out)), or the one entry to differentiate")
    if isinstance(value, (bool, int, float, complex)):
        return ("a Python number has no derivative: keep the value a tensor (use torch "
                "operations, not .item() or float())")
    if hasattr(value, "__array__") and not isinstance(value, torch.Tensor):
        return ("an array leaves autograd (.numpy() or NumPy functions): compute it with "
                "torch operations so that it stays a tensor")
    if isinstance(value, (tuple, list)):
        return "nested sequences are not read: return a flat tuple of tensors"
    return "return a tensor or a tuple/list of tensors"


def check_single_output(fn: Callable[..., Any], out: Any) -> torch.Tensor:
    """For VJP helpers: ``fn`` must return exactly one tensor."""
    name = getattr(fn, "__name__", "fn")
    if isinstance(out, (tuple, list)):
        raise TypeError(
            f"{name} returned a {type(out).__name__} of {len(out)} values; a VJP needs one output "
            f"tensor: return one tensor, or wrap fn, e.g. lambda x: fn(x)[0]"
        )
    outs, _ = as_output_tuple(fn, out)
    return outs[0]


def check_cotangent(v: Any, y: torch.Tensor, name: str = "v") -> torch.Tensor:
    """Check the upstream gradient ``v`` against the output ``y`` it is paired with.

    A Python number is made a 0-d tensor of ``y``'s dtype (a ``complex`` one only for a
    complex ``y``).  A sparse ``v`` is densified (the product is the same).  As
    ``y.backward(gradient=v)`` does, a real ``v`` for a complex ``y`` and a complex ``v`` for
    a real ``y`` are refused (``ValueError``: casting would drop the imaginary part, or invent
    one); real dtypes are cast to ``y``'s.
    """
    if isinstance(v, (int, float, complex)) and not isinstance(v, bool):
        if isinstance(v, complex) and not y.is_complex():
            raise ValueError(
                f"{name} is the complex number {v!r} but the output is real ({y.dtype}); "
                f"backward() takes a real upstream gradient for a real output (torch refuses "
                f"a complex one): pass a real number"
            )
        v = torch.tensor(v, dtype=y.dtype, device=y.device)
    check_tensor(name, v)
    if v.is_meta and not y.is_meta:
        raise ValueError(
            f"{name} is on the meta device, which holds shapes but no values; pass an upstream "
            f"gradient on {y.device}"
        )
    if y.is_nested or v.is_nested:  # no single shape: the components' shapes must agree
        parts = [tuple(p.shape) for p in y.unbind()] if y.is_nested else None
        given = [tuple(p.shape) for p in v.unbind()] if v.is_nested else None
        if parts != given:
            raise ValueError(
                f"{name} has component shapes {given if given is not None else tuple(v.shape)} "
                f"but the output's are {parts if parts is not None else tuple(y.shape)}; the "
                f"upstream gradient of a nested output is a nested tensor of the same components")
        return v
    if v.layout != torch.strided:
        v = v.to_dense()
    if v.shape != y.shape:
        raise ValueError(
            f"{name} has shape {tuple(v.shape)} but the output has shape {tuple(y.shape)}; "
            f"the upstream gradient (grad_outputs, cotangent) must have the output's shape"
        )
    check_differentiable_dtype(name, v)
    if v.is_complex() != y.is_complex():
        raise ValueError(
            f"{name} has dtype {v.dtype} but the output has dtype {y.dtype}; backward() needs "
            f"a complex upstream gradient for a complex output and a real one for a real "
            f"output (torch raises there: casting would "
            f"{'drop the imaginary part' if v.is_complex() else 'invent an imaginary part'}); "
            f"pass {name} with a {'real' if v.is_complex() else 'complex'} dtype"
        )
    if v.device != y.device:
        raise ValueError(
            f"{name} is on {v.device} but the output is on {y.device}; pass {name} on "
            f"{y.device}"
        )
    return v.detach().to(dtype=y.dtype)


def check_requires_grad(y: torch.Tensor, what: str = "the output") -> None:
    """Raise a ``ValueError`` if ``y`` is not attached to a graph."""
    if not y.requires_grad:
        mode = ("torch.inference_mode() is on" if torch.is_inference_mode_enabled() else
                "torch.no_grad() is on" if not torch.is_grad_enabled() else None)
        if mode is not None:
            raise ValueError(
                f"{what} does not require grad because {mode} where it was computed: no graph "
                f"is recorded there, so backward() has nothing to differentiate; call this "
                f"outside that block (or inside torch.enable_grad())")
        raise ValueError(
            f"{what} does not require grad, so backward() has nothing to differentiate: "
            f"it does not depend on the input through differentiable operations "
            f"(detach(), integer ops, torch.no_grad() or argmax-like ops cut the graph)"
        )


def check_flag(name: str, value: Any, func: str | None = None) -> bool:
    """A ``bool`` option: ``True``/``False`` or NumPy's bool, nothing else.

    An integer, string or tensor standing for one is refused (``strict=1`` was accepted,
    as ``torch.autograd.functional.jacobian`` accepts any truthy value, and ``"no"`` is
    truthy): ``TypeError`` naming the option (and ``func``, the public function, when
    given), what was given and that a bool is expected.
    """
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    where = f"{func}: " if func else ""
    raise TypeError(f"{where}{name} must be a bool (True or False), got "
                    f"{type(value).__name__} {_shown(value)}")


def check_optional_flag(name: str, value: Any, func: str | None = None) -> bool | None:
    """``None`` or a ``bool`` option (see :func:`check_flag`)."""
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    where = f"{func}: " if func else ""
    raise TypeError(f"{where}{name} must be None or a bool (True or False), got "
                    f"{type(value).__name__} {_shown(value)}")


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_count(name: str, value: Any, minimum: int = 0) -> int:
    """An integer option of at least ``minimum`` (Python or NumPy integers; not ``bool``)."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be an integer, got the bool {value!r}")
    try:
        count = operator.index(value)
    except TypeError:
        raise TypeError(
            f"{name} must be an integer, got {value!r} ({type(value).__name__})") from None
    if count < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {count}")
    return count


def check_generator(name: str, value: Any) -> torch.Generator | None:
    """``None`` or a ``torch.Generator`` on the CPU."""
    if value is None or isinstance(value, torch.Generator):
        return value
    raise TypeError(
        f"{name} must be None or a torch.Generator, got {value!r} ({type(value).__name__}); "
        f"for a seed s pass torch.Generator().manual_seed(s)"
    )


def check_shape(name: str, value: Any) -> tuple[int, ...]:
    """A shape: a ``torch.Size`` or a sequence of non-negative integers."""
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, torch.Size)):
        raise TypeError(f"{name} must be a shape (a tuple of integers), got {value!r}")
    out = []
    for s in value:
        if isinstance(s, (bool, np.bool_)):
            raise TypeError(f"{name} must be a tuple of integers, got {value!r}")
        try:
            size = operator.index(s)
        except TypeError:
            raise TypeError(f"{name} must be a tuple of integers, got {value!r}") from None
        if size < 0:
            raise ValueError(f"{name} must hold non-negative sizes, got {value!r}")
        out.append(size)
    return tuple(out)


# ---------------------------------------------------------------- memory, before allocating

# Below this an estimate is not compared with the machine's memory (a read of /proc costs
# about 20 us; an allocation this small is not what fails).
QUICK_BYTES = 256 * 2**20


def available_memory() -> int | None:
    """Bytes of memory a new allocation can take now, or ``None`` when it cannot be read.

    ``MemAvailable`` of ``/proc/meminfo`` (Linux: free memory plus reclaimable caches),
    capped by the address space the process may still map (``RLIMIT_AS``:
    :func:`address_space_left`) and by a cgroup v2 limit (``memory.max`` minus
    ``memory.current``) when there are;
    elsewhere ``os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")`` (free pages);
    ``None`` where neither exists (then nothing is refused for its size).
    """
    avail = None
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    avail = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        avail = None
    if avail is None:
        try:
            avail = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (AttributeError, ValueError, OSError):
            return None
    room = address_space_left()
    if room is not None:
        avail = min(avail, room)
    try:
        with open("/sys/fs/cgroup/memory.max", encoding="ascii") as f:
            limit = f.read().strip()
        if limit != "max":
            with open("/sys/fs/cgroup/memory.current", encoding="ascii") as f:
                used = int(f.read().strip())
            avail = min(avail, max(int(limit) - used, 0))
    except (OSError, ValueError):
        pass
    return avail


def address_space_left() -> int | None:
    """Bytes of address space this process may still map under its ``RLIMIT_AS`` (``ulimit
    -v``): the soft limit minus ``VmSize`` of ``/proc/self/status``; ``None`` without a limit
    or where it cannot be read.  An allocation past it fails whatever memory is free."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft == resource.RLIM_INFINITY or soft < 0:
            return None
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return max(soft - int(line.split()[1]) * 1024, 0)
    except (ImportError, OSError, ValueError, IndexError):
        return None
    return None


def size_text(nbytes: float) -> str:
    """``1.5 GB``: a byte count for a message (powers of 1000)."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if nbytes >= scale:
            return f"{nbytes / scale:.3g} {unit}"
    return f"{int(nbytes)} bytes"


def check_memory(what: str, nbytes: float, instead: str) -> None:
    """Raise ``MemoryError`` before allocating when ``nbytes`` exceed the memory available.

    ``what`` names the allocation (``"the dense Jacobian (200000 × 200000, float64)"``),
    ``instead`` what to use instead; the message gives the estimate and the memory available
    (:func:`available_memory`).  Estimates under :data:`QUICK_BYTES` are never refused.
    """
    if nbytes < QUICK_BYTES:
        return
    avail = available_memory()
    if avail is None or nbytes <= avail:
        return
    raise MemoryError(
        f"{what} needs about {size_text(nbytes)}, more than the {size_text(avail)} of memory "
        f"available now; nothing was allocated. {instead}"
    )
