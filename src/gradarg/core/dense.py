"""``jacobian(fn, x)``: the full Jacobian by reverse mode, forward mode or finite differences."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any, Literal, overload

import torch

from .._validate import (
    Inputs,
    as_input_tuple,
    check_callable,
    check_count,
    check_dense,
    check_flag,
    check_optional_flag,
)
from .basis import Blocks
from .buffers import keeps_buffers
from .choose import check_blocks_depend_on_inputs, compute_checked
from .compose import BATCH, composable_blocks, inside_transform, transform_name
from .functorch import VectorizationError

__all__ = ["METHODS", "jacobian", "register_sparse_route"]

# jacobian(fn, x, sparsity=P): gradarg.sparse registers itself here (the core never imports it)
_SPARSE_ROUTE: Callable[..., Any] | None = None


def register_sparse_route(route: Callable[..., Any]) -> None:
    """Let ``jacobian(..., sparsity=P)`` call ``route(fn, x, P, method=...)`` (gradarg.sparse)."""
    global _SPARSE_ROUTE
    _SPARSE_ROUTE = route

Method = Literal["auto", "reverse", "forward", "finite-difference"]
METHODS: tuple[Method, ...] = ("auto", "reverse", "forward", "finite-difference")
Strategy = Literal["reverse-mode", "forward-mode"]
# torch.autograd.functional.jacobian's names for two of the methods
STRATEGIES: dict[str, Method] = {"reverse-mode": "reverse", "forward-mode": "forward"}


@overload
def jacobian(
    fn: Callable[[torch.Tensor], torch.Tensor],
    x: torch.Tensor,
    create_graph: bool = ...,
    strict: bool = ...,
    vectorize: bool | None = ...,
    strategy: Strategy | None = ...,
    *,
    method: Method = ...,
    sparsity: Any = ...,
    batch_dim: int | None = ...,
    certify: int = ...,
) -> torch.Tensor: ...
@overload
def jacobian(
    fn: Callable[..., Any],
    x: Inputs,
    create_graph: bool = ...,
    strict: bool = ...,
    vectorize: bool | None = ...,
    strategy: Strategy | None = ...,
    *,
    method: Method = ...,
    sparsity: Any = ...,
    batch_dim: int | None = ...,
    certify: int = ...,
) -> Any: ...
@keeps_buffers()
def jacobian(
    fn: Callable[..., Any],
    x: Inputs,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool | None = None,
    strategy: Strategy | None = None,
    *,
    method: Method = "auto",
    sparsity: Any = None,
    batch_dim: int | None = None,
    certify: int = 0,
) -> Any:
    r"""Jacobian of ``fn`` at ``x``: ``J[i..., j...] = ∂y[i...] / ∂x[j...]``.

    Parameters
    ----------
    fn : callable
        Called as ``fn(x)``, or ``fn(*x)`` when ``x`` is a tuple. Returns a tensor or a
        tuple of tensors, with floating or complex dtypes.
    x : torch.Tensor or tuple of torch.Tensor
        Point of evaluation: any shape (0-d included), any strides, float32/float64/complex
        (float16 and bfloat16 too: the Jacobian comes back in ``x``'s dtype).
        Never modified: ``fn`` receives private copies (and the buffers of the modules it
        reaches, BatchNorm's running statistics, are restored: ``gradarg.core.buffers``).
        An empty ``x`` gives a Jacobian with no columns, ``y.shape + x.shape``, as jacrev does.
    create_graph : bool
        ``False`` (default): the Jacobian is a plain tensor without autograd history.
        ``True``: it is computed with differentiable operations (``create_graph=True`` in every
        backward pass; forward mode records its tangents), so it can be differentiated again,
        towards ``x`` when ``x`` requires grad and towards tensors ``fn`` captures (a module's
        parameters): the Jacobian of a gradient is a Hessian. Not with finite differences.
        Inside a ``torch.func`` transform the Jacobian is differentiable either way (see
        Notes).
    strict : bool
        ``True`` raises a :class:`RuntimeError` when an output does not require grad or is
        independent of an input (no path in the autograd graph), instead of returning a zero
        block; with ``create_graph=True`` also when a block of the Jacobian does not depend on
        the inputs (``fn`` is linear there; reverse mode only). The meaning and messages of
        :func:`torch.autograd.functional.jacobian`'s ``strict``. Not with finite differences,
        nor inside a ``torch.func`` transform (see Notes).
    vectorize : bool or None
        ``None`` (default) tries one batched call with ``torch.func.vmap`` and falls back to a
        loop of single products when the function cannot be batched. ``True`` raises
        :class:`~gradarg.VectorizationError` instead of falling back (reverse mode first tries
        one ``torch.autograd.grad(..., is_grads_batched=True)`` call, as
        :func:`torch.autograd.functional.jacobian` does); ``False`` always loops.
        Reverse mode evaluates ``fn`` once, unbatched, and batches only the backward passes (so
        ``.item()`` or data-dependent control flow in ``fn`` is fine there); ``"forward"``
        batches ``fn`` itself over the tangents (the loop where it cannot, unless
        ``vectorize=True``); ``"auto"`` may take its forward columns from backward passes over
        one evaluation of ``fn`` (the double-VJP of ``method``), which batches only those.
    strategy : {"reverse-mode", "forward-mode"} or None
        :func:`torch.autograd.functional.jacobian`'s name for ``method="reverse"`` /
        ``method="forward"``, accepted so that replacing that import is enough; ``None``
        (default) leaves the choice to ``method``.
    method : {"auto", "reverse", "forward", "finite-difference"}
        ``"reverse"`` builds the rows from vector-Jacobian products with one-hot upstream
        gradients (``y.backward(gradient=e_i)`` gives row ``i``); ``"forward"`` builds the
        columns from Jacobian-vector products with one-hot tangents; ``"finite-difference"``
        uses central differences (see :mod:`gradarg.core.finite_diff` for the step and error bound);
        ``"auto"`` picks reverse when there are no more outputs than inputs (or an output is
        complex), else forward (it learns the output size from the forward pass it records for
        reverse mode, and remembers a forward choice per function and input shapes/dtypes, so
        repeated calls skip that pass). Its columns may come from the derivative of a VJP with
        respect to its upstream gradient, ``J t = d(J^T u)/du · t`` (J. Townsend, "A new trick
        for calculating Jacobian vector products", 2017), batched with ``is_grads_batched``
        where measured faster: that differentiates the backward formulas, so to check a
        backward against forward-mode formulas ask for ``"forward"``, which never does.
        From 4096 entries on, ``"auto"`` times its eligible batched paths on its next calls
        and keeps the fastest per function, signature and processor (``speeds.RouteTrial``).
    sparsity : torch.Tensor or SparseJacobian, optional
        A ``torch.bool`` pattern of shape ``y.shape + x.shape`` (dense, COO or CSR), ``True``
        where ``J`` may be non-zero, or a :class:`~gradarg.SparseJacobian` built from one:
        the Jacobian is then computed by compression, several rows (or columns) per pass,
        and returned as a sparse COO tensor. A tensor pattern is coloured once: the colourings
        of the 8 patterns used last are kept, keyed by their content (entries, shapes,
        ``method``), so a loop that passes the same pattern again skips the colouring. Single
        tensor ``x`` and output; ``method`` must be ``"auto"``, ``"reverse"`` or ``"forward"``.
        Not inside a ``torch.func`` transform (see Notes).  A pattern that misses a non-zero
        of ``J`` gives wrong entries without a word: ``certify`` checks for that.
    batch_dim : int, optional
        Per-sample Jacobians: ``fn`` maps one sample (``x`` without its dimension
        ``batch_dim``), and the result has shape ``(B, *y_sample.shape, *x_sample.shape)``:
        each sample's output against its own input only, what
        ``torch.func.vmap(torch.func.jacrev(fn), in_dims=batch_dim)(x)`` computes (the
        ``(B·m) × (B·n)`` Jacobian of the whole batch, zero off its diagonal blocks, is never
        formed).  One tensor ``x``; not with ``sparsity``, ``strict`` or ``create_graph``.
        Where ``fn`` cannot be batched over the samples (``.item()``, data-dependent control
        flow, an unbatched ``nn.GRU`` / ``nn.LSTM`` / ``nn.RNN``) each sample's Jacobian is
        computed in a loop instead (``vectorize=True`` raises
        :class:`~gradarg.VectorizationError` there).
        Composes with ``torch.func`` transforms; ``jacobian`` itself with ``vmap`` (see Notes).
    certify : int
        With ``sparsity`` only: the number of random checks of the compressed Jacobian
        (``certify=`` of :class:`~gradarg.SparseJacobian`, Freivalds' check): each is one more
        backward pass with a Gaussian ``r``, whose ``rᵀJ`` must equal ``r`` contracted with
        the returned Jacobian within a relative ``sqrt(eps)``: a pattern that misses a larger
        non-zero raises :class:`~gradarg.CertificateError` (a ``ValueError``), a smaller one
        above rounding warns.  ``0`` (default): no check.

    Returns
    -------
    torch.Tensor or tuple
        Tensor input and output: shape ``y.shape + x.shape``, in ``x``'s dtype (the output's
        dtype if ``x`` is real and ``y`` complex, which only forward mode allows). Tuple inputs and/or outputs give
        the nested tuples of :func:`torch.autograd.functional.jacobian`: ``J[k][j]`` is the block
        of output ``k`` with respect to input ``j``.

    Raises
    ------
    TypeError
        ``x`` is not a tensor (or tuple of tensors), has an integer/bool dtype or is sparse
        (pass ``x.to_dense()``: sparse inputs are refused, not densified); ``fn`` returns
        something other than tensors, or an output with an integer/bool dtype;
        ``create_graph``/``strict`` not a bool (``True``/``False`` or NumPy's bool: an
        integer such as ``strict=1``, which torch accepts as truthy, is refused), ``vectorize``
        not ``None`` or a bool,
        ``certify`` not an integer.
    ValueError
        ``x`` on the meta device (no values to differentiate at); a complex output of a real
        input, except with ``method="forward"`` (refused, as ``torch.func.jacrev`` and
        ``torch.autograd.functional.jacobian`` refuse it: see Notes); ``certify`` negative, or
        given without ``sparsity``; ``sparsity``'s check failed (``CertificateError``).
        Unknown ``method`` or ``strategy``, a ``strategy`` that contradicts ``method``,
        ``method="forward"`` with complex inputs or with both ``strict`` and ``create_graph``,
        ``create_graph``/``strict`` with ``method="finite-difference"``, or ``strict=True`` or
        ``sparsity`` inside a ``torch.func`` transform (the message names the transform).
    RuntimeError
        ``strict=True`` and an output is independent of an input (see ``strict``).
    MemoryError
        The dense Jacobian (``y.numel() × x.numel()`` entries; with forward mode the
        ``x.numel() × x.numel()`` one-hot tangents, with finite differences ``3·x.numel()²``
        shifted inputs) would not fit in the memory available now (``/proc/meminfo``'s
        ``MemAvailable``, or ``os.sysconf``): refused before it is allocated, with the estimate
        and what to use instead (:func:`backward_vjp`, :class:`~gradarg.SparseJacobian`, rows
        in chunks).
    RuntimeWarning
        Issued (not raised) when ``x`` contains NaN or Inf; with ``"finite-difference"``,
        when some entries could not be resolved (named in the message): those entries are
        NaN, never a number the differences could not see (``sin`` at ``1e17``; an output
        so large that no step moves it, ``x.sum()`` along ``x[0] = 0`` beside ``1e300``); and
        when some entries are resolved only to fewer than four significant digits (their
        estimated error above ``1e-4`` relative, or :func:`fd_tolerance` of a lower
        precision: ``sin(1/t)`` at ``t = 1e-3``): those keep their value.

    Notes
    -----
    Tensors are flattened row-major, as ``torch.autograd.functional.jacobian`` and
    ``torch.func.jacrev`` do. An output that does not depend on the input gives a zero block.
    For complex tensors the reverse route follows PyTorch's conjugate Wirtinger convention
    (https://pytorch.org/docs/stable/notes/autograd.html#complex-autograd-doc): for a
    holomorphic ``f`` the entries are ``conj(f'(z))``, matching
    ``torch.autograd.functional.jacobian(fn, z, vectorize=True)``; so ``backward(v)`` equals
    ``v`` contracted with this matrix for holomorphic functions.  A complex output of a real
    input is refused (``ValueError``) by ``"auto"``, ``"reverse"`` and
    ``"finite-difference"``: reverse mode gives a real input a real gradient, so its rows
    would hold only the real parts of the derivatives (what
    ``torch.autograd.functional.jacobian(..., vectorize=True)`` returns, silently;
    ``torch.func.jacrev`` and that function's default refuse it).  ``method="forward"`` gives
    the complex derivative ``∂y/∂x``, as torch's forward mode does
    (``torch.autograd.functional.jacobian(..., strategy="forward-mode", vectorize=True)``);
    or take the Jacobian of ``torch.view_as_real(fn(x))``.

    Under ``torch.no_grad()`` and ``torch.inference_mode()`` the Jacobian is still computed:
    the passes it records run with gradients enabled and outside inference mode, on normal
    copies of ``x`` (an inference tensor is copied), as ``torch.func.jacrev`` does. Tensors that
    ``fn`` captures and that were created in inference mode cannot be saved for a backward
    pass; torch then raises and says so.

    Drop-in use: ``jacobian(fn, x, create_graph, strict, vectorize, strategy)`` takes the
    arguments of :func:`torch.autograd.functional.jacobian` in the same order, with the same
    meaning and the same nesting of the result. Where torch refuses a combination
    (``strict`` or ``create_graph`` with forward mode, ``strict`` with ``vectorize=True``,
    forward mode without ``vectorize=True``) gradarg computes it. Inputs may be tensor
    subclasses that wrap a tensor through ``__torch_dispatch__`` (``LoggingTensor`` in
    PyTorch's own tests of that function), with any ``vectorize``.

    Batching goes through the public ``torch.func.vmap`` and ``torch.func.jvp``; the reverse
    route uses the public ``torch.autograd.grad(..., is_grads_batched=True)`` instead (torch's
    older batching rules, about a quarter less per-call overhead) when every backward node of
    the graph is in ``speeds.LEGACY_FAST_BACKWARD`` (nodes measured faster there with torch
    2.13), the Jacobian is real, ``create_graph`` is off and it has at most
    ``speeds.LEGACY_MAX_ROWS`` rows. Setting the
    environment variable ``GRADARG_PRIVATE_FUNCTORCH=1`` before importing gradarg switches on a
    fast path through torch's private functorch pieces (same results, less per-call overhead
    for small Jacobians; ``nox -s bench`` measures both); where those pieces have moved, the
    public path is used. The one-hot basis (an identity matrix) of the last two sizes used is
    kept between calls, at most 32 MiB each, so that repeated calls do not allocate it again;
    ``gradarg.core.basis.clear_basis_cache()`` frees it.

    Inside ``torch.func`` transforms (``grad``, ``vjp``, ``jacrev``, ``jacfwd``, ``hessian``,
    ``jvp``, ``vmap``, at any depth, around ``jacobian`` or around a function that calls it, as
    with a ``grad`` over a module's parameters through ``torch.func.functional_call``), the
    Jacobian is computed with ``torch.func`` alone on the inputs as given: rows from
    ``torch.func.vjp`` (``method="auto"`` and ``"reverse"``, complex tensors included), columns
    from ``torch.func.jvp`` (``"forward"``), each batched with ``torch.func.vmap`` or, with
    ``vectorize=False`` (or when that fails and ``vectorize`` is ``None``), looped; central
    differences evaluated on the inputs themselves (``"finite-difference"``: through ``grad``
    their derivative is the same difference quotient of ``fn``'s derivative, accurate to the
    same order).  The transforms differentiate and batch the result as they do
    ``torch.func.jacrev``'s, so ``grad`` of a function of the Jacobian is the right second
    derivative, never a zero from a detached copy; the result is tracked by the transforms
    (and, like torch.func's results, by autograd when ``x`` requires grad), whatever
    ``create_graph`` says.  What cannot compose raises a ``ValueError`` naming the transform:
    ``strict=True`` (its checks read an autograd graph that transforms replace) and
    ``sparsity``.  Inside a transform ``fn`` obeys torch.func's rules (an ``autograd.Function``
    needs ``setup_context``; no saved-tensor hooks under reverse-mode transforms), and
    torch's own errors propagate.  Detection costs about 0.1 us per call and takes none of
    the faster routes away outside transforms (``gradarg.core.compose``).
    ``torch.func.linearize`` is different: it traces with ``make_fx``, which refuses the
    value the input check reads (``.item()``), so ``jacobian`` raises torch's error there.

    Torch's batched routes are not trusted where they differ from plain passes: ``cdist``'s
    backward, a ``det`` backward under ``create_graph``, NaN/Inf at a finite ``x`` (recomputed,
    with the Jacobians ``fn`` takes with gradarg: ``core.choose``); one row is one pass.

    Examples
    --------
    >>> import torch
    >>> x = torch.tensor([1.0, 2.0, 3.0])
    >>> jacobian(lambda t: t**2, x)
    tensor([[2., 0., 0.],
            [0., 4., 0.],
            [0., 0., 6.]])
    >>> M = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> jacobian(lambda t: t @ M, torch.tensor([[2.0, 1.0]])).shape
    torch.Size([1, 2, 1, 2])
    >>> jacobian(lambda t: t.sum(), x, method="forward")
    tensor([1., 1., 1.])

    A Jacobian that can itself be differentiated (here the Jacobian of a gradient: the Hessian):

    >>> grad = lambda t: jacobian(lambda s: (s**3).sum(), t, create_graph=True)
    >>> H = jacobian(grad, x)
    >>> torch.equal(H, torch.diag(6 * x))
    True

    Inside ``torch.func`` transforms it composes: the derivative of ``sin``'s derivative at
    0.5 is ``-sin(0.5)``, and under ``vmap`` every sample gets its own Jacobian:

    >>> s = torch.tensor(0.5, dtype=torch.float64)
    >>> torch.func.grad(lambda t: jacobian(torch.sin, t))(s)
    tensor(-0.4794, dtype=torch.float64)
    >>> torch.func.vmap(lambda t: jacobian(torch.sin, t))(torch.zeros(2, 2)).shape
    torch.Size([2, 2, 2])
    """
    check_callable("fn", fn)
    resolved = _resolve_method(method, strategy)
    create_graph = check_flag("create_graph", create_graph, "jacobian")
    strict = check_flag("strict", strict, "jacobian")
    vectorize = check_optional_flag("vectorize", vectorize, "jacobian")
    certify = check_count("certify", certify)
    if certify and sparsity is None:
        raise ValueError(
            f"certify={certify} checks a compressed Jacobian: it needs sparsity= (a dense "
            f"Jacobian has no pattern to miss a non-zero); pass sparsity=pattern or certify=0"
        )
    if batch_dim is not None:
        return _per_sample(fn, x, batch_dim, resolved, vectorize,
                           sparsity is not None or strict or create_graph)
    transformed = inside_transform()
    if sparsity is not None:
        if transformed:
            raise _refused_in_transform("sparsity=", "computes a compressed Jacobian, which "
                                        "torch.func transforms cannot differentiate")
        if create_graph or strict:
            raise ValueError(
                "sparsity= computes a compressed Jacobian; it does not support create_graph "
                "or strict (pass sparsity=None for those)"
            )
        if _SPARSE_ROUTE is None:
            raise RuntimeError(
                "sparsity= needs gradarg.sparse, which registers the compressed route on import; "
                "import gradarg.sparse first (gradarg.jacobian imports it)"
            )
        return _SPARSE_ROUTE(fn, x, sparsity, method=resolved, certify=certify)
    xs, in_tuple = as_input_tuple("x", x)
    if resolved == "forward" and any(t.is_complex() for t in xs):
        raise ValueError(
            "method='forward' does not support complex inputs: forward mode gives f'(z) where "
            "PyTorch's reverse mode gives its conjugate; use method='reverse' or "
            "'finite-difference'"
        )
    if resolved == "forward" and strict and create_graph:
        raise ValueError(
            "strict=True with create_graph=True needs reverse mode: forward-mode tangents of an "
            "input that requires grad always require grad, so a Jacobian that does not depend on "
            "the input cannot be told apart; use method='reverse' or 'auto'"
        )
    if resolved == "finite-difference" and (create_graph or strict):
        flag = "create_graph" if create_graph else "strict"
        raise ValueError(
            f"{flag}=True needs autodiff (the autograd graph of fn); method='finite-difference' "
            f"does not record one: use method='auto', 'reverse' or 'forward'"
        )
    if transformed:
        if strict:
            raise _refused_in_transform("strict=True", "reads the autograd graph that fn "
                                        "records, which torch.func transforms replace")
        with _recording_possible(create_graph):
            # clone(), not detach(): a detached copy would be cut from the transforms
            xs = tuple(t.clone() for t in xs)
            state = torch.get_rng_state()
            try:
                blocks, out_tuple = composable_blocks(fn, xs, resolved, vectorize)
            finally:
                torch.set_rng_state(state)
        # not detached either: the result is tracked by the transforms, as torch.func's is
        return _package(blocks, in_tuple, out_tuple, create_graph=True)
    with _recording_possible(create_graph):
        # private copies: fn never reaches x (with create_graph they keep J connected to x)
        xs = tuple(_private_copy(t, create_graph) for t in xs)
        # What torch.random.fork_rng(devices=[]) does, without its per-call overhead: the draws
        # fn makes (replayed for every evaluation) never advance the caller's generator.
        state = torch.get_rng_state()
        try:
            blocks, out_tuple = compute_checked(fn, xs, resolved, vectorize, state,
                                                create_graph, strict)
        finally:
            torch.set_rng_state(state)
    if create_graph and strict:
        check_blocks_depend_on_inputs(blocks)
    return _package(blocks, in_tuple, out_tuple, create_graph)


def _per_sample(fn: Callable[..., Any], x: Any, batch_dim: Any, method: Method,
                vectorize: bool | None, refused: bool) -> torch.Tensor:
    """``jacobian(fn, x, batch_dim=...)``: the Jacobian of every sample, by ``torch.func.vmap``
    over this very function (which composes with it)."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"batch_dim= needs one tensor x (a batch of samples), got "
                        f"{type(x).__name__}")
    check_dense("x", x)
    if isinstance(batch_dim, bool) or not isinstance(batch_dim, int) or not (
            -x.dim() <= batch_dim < x.dim()):
        raise ValueError(f"batch_dim must be a dimension of x (shape {tuple(x.shape)}), got "
                         f"{batch_dim!r}")
    if refused:
        raise ValueError("batch_dim= cannot be combined with sparsity=, strict=True or "
                         "create_graph=True")
    per = torch.func.vmap(lambda s: jacobian(fn, s, vectorize=vectorize, method=method),
                          in_dims=batch_dim)
    # outside transforms a plain tensor, as without batch_dim; inside, detach() would cut it
    samples = x if inside_transform() else x.detach()
    # the memory checks inside count every sample
    token = BATCH.set(BATCH.get() * max(x.shape[batch_dim], 1))
    try:
        return per(samples)
    except MemoryError:  # the Jacobians of all samples are too large: a loop is no smaller
        raise
    except (RuntimeError, ValueError, TypeError, NotImplementedError) as err:
        # fn cannot be batched over the samples (.item(), control flow, an unbatched nn.GRU,
        # whose error need not say vmap): one per sample, where fn's own errors are raised
        if isinstance(err, VectorizationError) or not x.shape[batch_dim]:
            raise
        if vectorize:  # vectorize=True asked for the batched call only
            raise VectorizationError(
                f"batch_dim={batch_dim}: fn could not be batched over the samples with "
                f"torch.func.vmap: {err}") from err
    finally:
        BATCH.reset(token)
    return torch.stack([jacobian(fn, s, vectorize=vectorize, method=method)
                        for s in samples.unbind(batch_dim)])


def _refused_in_transform(flag: str, why: str) -> ValueError:
    return ValueError(
        f"jacobian({flag}) {why}; it was called inside {transform_name()}. Call jacobian "
        f"outside the transform, or drop {flag}: inside a transform jacobian computes with "
        f"torch.func (vjp, jvp, vmap), which composes"
    )


def _resolve_method(method: str, strategy: str | None) -> Method:
    if not isinstance(method, str) or method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if strategy is None:
        return method  # type: ignore[return-value]  # checked against METHODS above
    if not isinstance(strategy, str) or strategy not in STRATEGIES:
        raise ValueError(
            f"strategy must be 'reverse-mode' or 'forward-mode' (the names of "
            f"torch.autograd.functional.jacobian), got {strategy!r}; gradarg's own argument is "
            f"method={METHODS}"
        )
    chosen = STRATEGIES[strategy]
    if method not in ("auto", chosen):
        raise ValueError(
            f"strategy={strategy!r} means method={chosen!r}, but method={method!r} was given; "
            f"pass one of them"
        )
    return chosen


def _recording_possible(create_graph: bool) -> contextlib.AbstractContextManager:
    """Leave inference mode (where autograd records nothing and forward-mode tangents are
    dropped), and with ``create_graph`` enable grad mode; nothing to do in the common case."""
    inference = torch.is_inference_mode_enabled()
    need_grad = create_graph and not torch.is_grad_enabled()
    if not (inference or need_grad):
        return contextlib.nullcontext()
    stack = contextlib.ExitStack()
    if inference:
        stack.enter_context(torch.inference_mode(False))
    if need_grad or inference:
        stack.enter_context(torch.enable_grad())
    return stack


def _private_copy(t: torch.Tensor, create_graph: bool) -> torch.Tensor:
    if not create_graph:
        # outside inference mode: a normal tensor, even from an inference one
        return t.detach().clone()
    # clone() is differentiable: the Jacobian's graph reaches the caller's t, and a forward-mode
    # tangent of t (an outer forward-mode Jacobian of this one) is kept
    copy = t.clone()
    # as torch.autograd.functional.jacobian: the Jacobian is differentiable in its own input
    return copy if copy.requires_grad else copy.requires_grad_(True)


def _package(blocks: Blocks, in_tuple: bool, out_tuple: bool, create_graph: bool = False) -> Any:
    # detach: a forward-mode tangent through a captured tensor that requires grad (a module's
    # parameters) is itself in that graph; the Jacobian is a plain tensor whatever the route,
    # unless the caller asked for a differentiable one.
    if not create_graph:
        blocks = [[b.detach() for b in row] for row in blocks]
    rows = [tuple(row) if in_tuple else row[0] for row in blocks]
    return tuple(rows) if out_tuple else rows[0]
