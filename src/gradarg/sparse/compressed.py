"""Sparse Jacobians by compression: several rows (or columns) per pass.

``backward`` is linear in its ``gradient`` argument: the VJP with ``v = e_i + e_k`` is row
``i`` plus row ``k``.  When those rows touch disjoint columns, both can be read off the one
result.  :class:`SparseJacobian` colours the rows (or columns) of a sparsity pattern once
(:mod:`gradarg.sparse.coloring`), then on every call runs one batched VJP (or JVP) with one
compressed seed per colour and decompresses the ``colors × n`` (or ``colors × m``) result into
the pattern's entries.

What each mode seeds, computes and reads back is its class in :mod:`gradarg.sparse.modes`;
here: which modes to colour (the choice), the call, the random certificate and the layouts.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from typing import Any, Literal, cast

import numpy as np
import torch

from .._validate import check_callable, check_count, check_generator
from ..core.buffers import keeps_buffers
from . import _seen
from ._layouts import (
    assemble,
    check_layout,
    check_x,
    coo_indices,
    crow_indices,
    refuse_in_transform,
)
from .bidirectional import bidirectional_partition
from .certificate import failed_entry
from .coloring import STRATEGIES, color_pattern
from .compiled import CompiledSparse, compile_parameters
from .modes import JACOBIAN_MODES, Bidirectional, Forward, JacobianMode, Reverse
from .passes import check_pass_memory, compiled_output_shape, vjps
from .pattern import coordinates

__all__ = ["CertificateError", "SparseJacobian", "sparse_jacobian"]


class CertificateError(ValueError):
    """A compressed Jacobian failed its random check: the pattern is missing non-zeros."""


class SparseJacobian:
    r"""Reusable compressed Jacobian for one sparsity pattern: colour once, call many times.

    ``SparseJacobian(pattern, x.shape)`` colours the rows and the columns of ``pattern``
    (greedy colouring of the row / column intersection graph, :func:`color_pattern`) and picks
    the side with fewer colours.  Each call ``sj(fn, x)`` then makes ``sj.passes`` passes
    instead of ``m`` (reverse) or ``n`` (forward), all in one batched call:

    * reverse mode: one forward pass of ``fn``, then one VJP per row colour ``c`` with the
      compressed upstream gradient ``v_c = Σ_{i: colour(i)=c} e_i``; entry ``(i, j)`` of the
      pattern is read from ``(v_{colour(i)}ᵀ J)_j``;
    * forward mode: one JVP per column colour ``c`` with tangent ``t_c = Σ_{j: colour(j)=c}
      e_j``; entry ``(i, j)`` is ``(J t_{colour(j)})_i``.  Eagerly each JVP is two backward
      passes over one recorded forward pass (``g(u) = uᵀJ`` is linear in ``u``, its VJP with
      cotangent ``t`` is ``J t``: ``gradarg.sparse.passes``), faster than torch's forward
      mode eagerly; torch's forward mode (``torch.func.jvp``) where a custom
      ``autograd.Function`` is in the graph, and in the compiled call.

    This is Curtis–Powell–Reid compression (IMA J. Appl. Math. 13, 1974; Gebremedhin, Manne and
    Pothen, SIAM Review 47, 2005).  Exact — no approximation — when every non-zero of ``J`` is
    ``True`` in ``pattern``; an entry missing from the pattern makes other entries wrong, which
    ``certify=k`` detects.

    Parameters
    ----------
    pattern : torch.Tensor
        ``torch.bool``, ``True`` wherever ``J`` may be non-zero: shape ``y.shape + x.shape`` or
        the flat ``(y.numel(), x.numel())``; dense, sparse COO or sparse CSR layout.
    x_shape : tuple of int, optional
        The input's shape. Needed when ``pattern`` has more than 2 dimensions; with a 2-D
        pattern and no ``x_shape`` the input is taken to have ``pattern.shape[1]`` elements.
    method : {"auto", "reverse", "forward", "bidirectional"}
        ``"auto"`` colours both sides and uses the one with fewer colours (reverse on a tie);
        when a row or column is much denser than the median it also tries a bidirectional
        split and uses it if it needs fewer passes.  ``"bidirectional"``: dense rows by
        reverse mode, the other entries by forward mode (or dense columns by forward mode, the
        rest by reverse), the split with fewest passes
        (``gradarg.sparse.bidirectional.bidirectional_partition``).
    strategy : str
        Colouring strategy (:data:`gradarg.sparse.STRATEGIES`; default ``"best"``: the
        fewer colours of largest-first and DSATUR).

    Attributes
    ----------
    mode : str
        ``"reverse"``, ``"forward"`` or ``"bidirectional"``: the side(s) used.
    passes : int
        Compressed passes per call (the number of colours on that side; VJPs plus JVPs when
        bidirectional).
    colors : torch.Tensor or None
        ``int64`` colour of each flattened row (reverse) or column (forward); ``None`` when
        bidirectional.
    row_colors, column_colors : int or None
        Number of colours of each side (``None`` for a side not coloured, also when a
        bidirectional split needs fewer passes than that side's lower bound, the most
        entries in one column (rows) or one row (columns)).  On a tie in passes, reverse is
        used before forward, and either before the split.
    coloring_seconds : float
        Wall-clock time of the colouring(s), paid once.
    nnz, shape : int, tuple
        Number of pattern entries; flat ``(m, n)``.

    Raises
    ------
    TypeError
        ``pattern`` is not a ``torch.bool`` tensor in a supported layout; ``x_shape`` is not a
        tuple of integers.
    ValueError
        ``pattern`` has the wrong shape, is all False or is on the meta device; unknown
        ``method`` or ``strategy``; built inside a ``torch.func`` transform (the message names
        it: build it outside, where it is called too).
    MemoryError
        The colouring would not fit in the memory available now (about 64 bytes per row and
        column of the pattern and 48 per entry, estimated before anything of that size is
        allocated: a pattern of 1 entry and 2·10⁹ columns needs about 128 GB).

    Examples
    --------
    >>> import torch
    >>> def f(u):                       # 1-D stencil: tridiagonal Jacobian
    ...     up = torch.nn.functional.pad(u, (1, 1))
    ...     return up[:-2] - 2 * u + up[2:] + torch.sin(u)
    >>> n = 1000
    >>> i = torch.arange(n)
    >>> rows = torch.cat([i, i[1:], i[:-1]])
    >>> cols = torch.cat([i, i[:-1], i[1:]])
    >>> pattern = torch.sparse_coo_tensor(
    ...     torch.stack([rows, cols]),
    ...     torch.ones(3 * n - 2, dtype=torch.bool),
    ...     (n, n), check_invariants=True)
    >>> sj = SparseJacobian(pattern)
    >>> sj.passes                                  # instead of 1000
    3
    >>> x = torch.linspace(0, 1, n, dtype=torch.float64)
    >>> J = sj(f, x, certify=2)   # sparse COO, checked with 2 random v
    >>> J.shape, J.values().numel()
    (torch.Size([1000, 1000]), 2998)
    >>> torch.allclose(J.to_dense(), torch.func.jacrev(f)(x))
    True
    """

    def __init__(
        self,
        pattern: torch.Tensor,
        x_shape: tuple[int, ...] | torch.Size | None = None,
        *,
        method: Literal["auto", "reverse", "forward", "bidirectional"] = "auto",
        strategy: str = "best",
    ) -> None:
        refuse_in_transform("SparseJacobian(pattern)")
        if not isinstance(method, str) or (method != "auto" and method not in JACOBIAN_MODES):
            raise ValueError(
                f"method must be 'auto', 'reverse', 'forward' or 'bidirectional', got {method!r}"
            )
        if not isinstance(strategy, str) or strategy not in STRATEGIES:
            raise ValueError(f"strategy must be one of {STRATEGIES}, got {strategy!r}")
        coords = coordinates(pattern, x_shape, what="SparseJacobian's colouring")
        self._coords = coords
        self.shape = (coords.m, coords.n)
        self.nnz = coords.nnz
        start = time.perf_counter()
        auto = method == "auto"
        rc = cc = split = None
        row_nnz = np.bincount(coords.rows, minlength=coords.m)
        col_nnz = np.bincount(coords.cols, minlength=coords.n)
        if method == Bidirectional.name or (auto and _has_dense_line(row_nnz, col_nnz)):
            split = bidirectional_partition(coords, strategy)
        # a side's colouring needs at least as many colours as the densest column (rows) or
        # row (columns) has entries: skip it when the split already does better
        row_bound, col_bound = int(col_nnz.max()), int(row_nnz.max())
        if method == Reverse.name or (auto and (split is None or split.passes >= row_bound)):
            rc = color_pattern(coords, "rows", strategy=strategy)
        if method == Forward.name or (auto and (split is None or split.passes >= col_bound)):
            if rc is not None and _symmetric(coords):  # same conflict graph on both sides
                cc = rc
            else:
                cc = color_pattern(coords, "columns", strategy=strategy)
        rows = torch.from_numpy(coords.rows)
        cols = torch.from_numpy(coords.cols)
        self._rows, self._cols = rows, cols
        rev = None if rc is None else Reverse(coords, rows, cols, rc)
        fwd = None if cc is None else Forward(coords, rows, cols, cc)
        self.row_colors = None if rev is None else rev.passes
        self.column_colors = None if fwd is None else fwd.passes
        # the modes coloured, in the order that settles a tie: reverse, forward, the split
        modes: list[JacobianMode] = [m for m in (rev, fwd) if m is not None]
        if split is not None:
            modes.append(Bidirectional(coords, rows, cols, split))
        best = min(modes, key=lambda m: m.passes)
        # and the others that need as many passes: compile() times them all
        self._modes = [best, *(m for m in modes if m.passes == best.passes and m is not best)]
        self._mode = best
        self.mode: str = best.name
        self.passes = best.passes
        self.colors = best.colors
        self.coloring_seconds = time.perf_counter() - start
        best.prepare()  # the decompression made now: the first call costs what later ones do
        self._crow: torch.Tensor | None = None
        self._coo_index: dict[tuple, torch.Tensor] = {}
        self._strategy, self._reverse = strategy, rev

    def __repr__(self) -> str:
        return (
            f"SparseJacobian(shape={self.shape}, nnz={self.nnz}, mode={self.mode!r}, "
            f"passes={self.passes}, row_colors={self.row_colors}, "
            f"column_colors={self.column_colors})"
        )

    @keeps_buffers(1, "fn")  # one call
    def __call__(
        self,
        fn: Callable[[torch.Tensor], torch.Tensor],
        x: torch.Tensor,
        *,
        layout: torch.layout = torch.sparse_coo,
        certify: int = 0,
        generator: torch.Generator | None = None,
    ) -> torch.Tensor:
        r"""The Jacobian of ``fn`` at ``x`` in ``self.passes`` compressed passes.

        Parameters
        ----------
        fn : callable
            ``fn(x)`` returns one real floating tensor ``y``.
        x : torch.Tensor
            Real floating input (float32/float64), ``x.numel() == n``; never modified.
        layout : {torch.sparse_coo, torch.sparse_csr, torch.strided}
            ``torch.sparse_coo`` (default): a coalesced COO tensor of shape
            ``y.shape + x.shape`` holding exactly the pattern's entries (some may be 0);
            ``.to_dense()`` equals :func:`gradarg.jacobian`.  ``torch.sparse_csr``: the flat
            ``m × n`` matrix in CSR (CSR is 2-D only), for ``@`` with vectors and sparse
            solvers.  ``torch.strided``: dense, shape ``y.shape + x.shape``.
        certify : int
            Number of random checks (Freivalds): for each of ``certify`` Gaussian vectors
            ``r``, one further backward pass computes ``rᵀJ`` through ``fn``'s graph, which must
            equal ``r`` contracted with the returned Jacobian within a relative
            ``sqrt(eps)``: a pattern that misses a larger non-zero fails it; a difference
            between rounding and that tolerance warns (``gradarg.sparse.certificate``).
        generator : optional
            A ``torch.Generator``: source of the certificate's random vectors (default: a
            fresh seed); the global generator is never advanced.

        Returns
        -------
        torch.Tensor
            The Jacobian in ``layout``: in ``x``'s dtype from reverse mode (gradients have
            the input's dtype), in ``fn(x)``'s dtype from forward mode (tangents have the
            output's); the two differ only when ``fn`` changes the dtype.

        Raises
        ------
        TypeError
            ``x`` is not a real floating dense tensor (sparse ``x`` is refused: pass
            ``x.to_dense()``); ``fn`` does not return one; ``certify`` is not an integer;
            ``generator`` is not a ``torch.Generator``.
        ValueError
            ``x`` on the meta device; ``certify < 0``;
            ``x`` or ``fn(x)`` does not match the pattern's shape; unknown ``layout``; called
            inside a ``torch.func`` transform (``grad``, ``jacrev``, ``jacfwd``, ``hessian``,
            ``vmap``), where the compressed result would be cut from it: the message names the
            transform and what composes instead (:func:`gradarg.jacobian`, ``torch.func``).
        CertificateError
            ``certify > 0`` and a random check failed (the pattern misses non-zeros of ``J``).

        Warns
        -----
        UserWarning
            Forward mode failed because an operation of ``fn`` has neither a double backward
            nor a forward-mode derivative in torch (``cdist``): reverse mode is used from then
            on (``sj.mode``, ``sj.passes`` say so).
        MemoryError
            The compressed passes (``passes × (m + n)`` values, twice) or a dense result
            (``layout=torch.strided``: ``m × n``) would not fit in the memory available now.
        """
        check_callable("fn", fn)
        check_layout(layout)
        refuse_in_transform("SparseJacobian")
        check_x(x, self._coords.n, self._coords.x_shape)
        certify = check_count("certify", certify)
        generator = check_generator("generator", generator)
        check_pass_memory(self.passes + certify, self.shape, x, layout)
        x0 = x.detach().clone()  # fn never reaches the caller's tensor
        state = torch.get_rng_state()
        try:
            try:
                flat, y, leaf = self._mode.run(fn, x0)
            except NotImplementedError as err:  # no forward-mode derivative in fn
                self._to_reverse(err)
                torch.set_rng_state(state)
                flat, y, leaf = self._mode.run(fn, x0)
            values = self._mode.recover(flat)
            if certify:
                torch.set_rng_state(state)
                self._certify(fn, x0, y, leaf, values, certify, generator)
        finally:
            torch.set_rng_state(state)
        return self._assemble(values, tuple(y.shape), tuple(x.shape), layout)

    def _to_reverse(self, err: NotImplementedError) -> None:
        """Forward mode failed (an operation of ``fn`` has neither a double backward nor a
        forward-mode derivative: ``cdist``): reverse mode from now on, with a warning."""
        if not self._mode.forward_mode:
            raise err
        if self._reverse is None:
            rc = color_pattern(self._coords, "rows", strategy=self._strategy)
            self._reverse = Reverse(self._coords, self._rows, self._cols, rc)
            self._reverse.prepare()
        rev = self._reverse
        warnings.warn(f"SparseJacobian: {self.mode} mode is not available for this fn "
                      f"({str(err).split('.')[0]}); reverse mode is used instead, {rev.passes} "
                      f"passes per call instead of {self.passes}", UserWarning, stacklevel=3)
        self._modes, self._mode, self.mode = [rev], rev, rev.name
        self.passes, self.colors, self.row_colors = rev.passes, rev.colors, rev.passes

    @compile_parameters  # the compiled call
    def compile(
        self,
        fn: Callable[[torch.Tensor], torch.Tensor],
        *,
        backend: str = "auto",
        mode: str | None = None,
        fullgraph: bool = True,
        package: bool | None = None,
    ) -> CompiledSparse:
        r"""``fn``'s compressed Jacobian as one compiled function of ``x``: compile once.

        The compressed pass (``torch.func.vjp`` batched by ``vmap`` over the row colours, or
        ``torch.func.jvp`` over the column colours, or both when bidirectional) is handed to
        ``torch.compile``, so that a call is a few fused kernels and one ``index_select`` that
        reads the entries off.  The first call at an input shape and dtype compiles
        (seconds, in ``compile_seconds``), once per machine: a later process finds the
        kernels in torch's on-disk caches and the choice among candidates in gradarg's memory
        beside them, and compiles only the winner (see
        :class:`~gradarg.sparse.CompiledSparse`).  It pays where ``fn`` is called many times
        at one shape.

        Parameters
        ----------
        fn : callable
            ``fn(x)`` returns one real floating tensor; it must be traceable by
            ``torch.compile`` and ``torch.func`` (no ``.item()``, no in-place change of
            ``x``, no randomness).
        {compile_parameters}

        Returns
        -------
        gradarg.sparse.CompiledSparse
            ``jac(x, layout=torch.sparse_coo)`` returns what ``sj(fn, x, layout=...)``
            returns; ``jac.values(x)`` the 1-D values in the pattern's entry order.
        Examples
        --------
        >>> import torch
        >>> n = 200
        >>> band = (torch.arange(n)[:, None] - torch.arange(n)).abs() <= 1
        >>> sj = SparseJacobian(band)
        >>> def f(u):
        ...     up = torch.nn.functional.pad(u, (1, 1))
        ...     return up[:-2] - 2 * u + up[2:] - torch.exp(u)
        >>> jac = sj.compile(f, backend="aot_eager")  # no C++ step
        >>> x = torch.rand(n, dtype=torch.float64)
        >>> torch.equal(jac(x).to_dense(), sj(f, x).to_dense())
        True
        """
        check_callable("fn", fn)

        def prepare(x: torch.Tensor) -> tuple[int, ...]:
            return compiled_output_shape(fn, x, self._coords)
        # the modes that need as many passes as this one are all compiled; the faster is kept
        return CompiledSparse.of_modes(self, fn, self._modes, prepare, self._assemble,
                                       pattern=(self._rows, self._cols), backend=backend,
                                       mode=mode, fullgraph=fullgraph, package=package)

    def _certify(self, fn, x0, y, leaf, values, k, generator) -> None:
        co = self._coords
        gen = generator if generator is not None else torch.Generator().manual_seed(
            torch.Generator().seed()
        )
        r = torch.randn(k, co.m, generator=gen, dtype=y.dtype)
        got = vjps(y, leaf, r.view(k, *y.shape)).reshape(k, co.n)  # k backward passes
        # r contracted with the returned Jacobian, and the same with absolute values (scale)
        contrib = r[:, self._rows] * values
        dtype = contrib.dtype
        got = got.to(dtype)
        want = torch.zeros(k, co.n, dtype=dtype).index_add_(1, self._cols, contrib)
        scale = torch.zeros(k, co.n, dtype=dtype).index_add_(1, self._cols, contrib.abs())
        low = min(x0.dtype, y.dtype, key=lambda t: torch.finfo(t).bits)
        failed = failed_entry(got, want, scale, low, "compressed Jacobian")
        if failed is not None:
            t, j, err, bound = failed
            raise CertificateError(
                f"the compressed Jacobian failed its random check: a backward pass with a random "
                f"v gives {float(got[t, j]):.6g} at input element {j}, but v contracted with the "
                f"returned Jacobian gives {float(want[t, j]):.6g} (difference "
                f"{err:.3g}, allowed {bound:.3g}); the pattern misses "
                f"non-zero entries of the Jacobian (in column {j} or in a row sharing its "
                f"colour). Mark them True, or find a pattern with gradarg.sparsity_pattern"
            )

    def _assemble(self, values, y_shape, x_shape, layout) -> torch.Tensor:
        # the CSR row pointers and the COO indices are the same on every call: kept
        if layout == torch.sparse_csr and self._crow is None:
            self._crow = crow_indices(self._rows, self._coords.m)
        indices = None
        if layout == torch.sparse_coo:
            indices = self._coo_index.get((y_shape, x_shape))
            if indices is None:
                indices = coo_indices(self._rows, self._cols, y_shape, x_shape)
                self._coo_index[(y_shape, x_shape)] = indices
        if values.requires_grad:  # the compiled call's values never do: 0.5 us saved there
            values = values.detach()
        return assemble(values, self._rows, self._cols, y_shape, x_shape, layout,
                        crow=self._crow, indices=indices)


def _symmetric(coords) -> bool:
    """Structurally symmetric square pattern: rows and columns have the same conflict graph
    (its CSR arrays equal its CSC arrays; the transpose is a counting sort, no comparison
    sort)."""
    if coords.m != coords.n:
        return False
    from .d2color import bipartite  # a vectorised sort until numba is loaded

    rptr, rind, cptr, cind = bipartite(coords, "rows")
    return bool(np.array_equal(rptr, cptr) and np.array_equal(rind, cind))


def _has_dense_line(*lengths: np.ndarray) -> bool:
    """A row or column much denser than the median (``lengths``: the entries of each row, of
    each column): the case a bidirectional split helps."""
    for nnz in lengths:
        # the median line length from the lengths' histogram (np.median's partition and
        # checks: 0.1 ms on a process's first call); most >= max(4 · median, 3)
        size = nnz.size
        count = np.cumsum(np.bincount(nnz))
        low, high = np.searchsorted(count, [(size - 1) // 2, size // 2], side="right")
        most = count.size - 1
        if most >= max(2 * (int(low) + int(high)), 3):
            return True
    return False


def sparse_jacobian(
    fn: Callable[[torch.Tensor], torch.Tensor],
    x: torch.Tensor,
    sparsity: torch.Tensor | SparseJacobian,
    *,
    method: str = "auto",
    certify: int = 0,
) -> torch.Tensor:
    """``gradarg.jacobian(fn, x, sparsity=...)``: a :class:`SparseJacobian` call, COO result.

    ``method`` is ``"auto"`` or a mode of :class:`SparseJacobian` (``"reverse"``,
    ``"forward"``, ``"bidirectional"``); with a ``SparseJacobian`` as ``sparsity``, ``"auto"``
    or its own mode.  ``certify``: random checks of the result (see
    :meth:`SparseJacobian.__call__`).
    """
    if method != "auto" and method not in JACOBIAN_MODES:
        raise ValueError(
            f"with sparsity=, method must be 'auto', 'reverse' or 'forward', or 'bidirectional' "
            f"(dense rows by reverse mode, the rest by forward mode), got {method!r}"
        )
    if not isinstance(sparsity, (torch.Tensor, SparseJacobian)):
        raise TypeError(
            f"sparsity must be a torch.bool pattern tensor of shape y.shape + x.shape (dense, "
            f"COO or CSR) or a SparseJacobian, got {type(sparsity).__name__}"
        )
    if isinstance(sparsity, SparseJacobian):
        if method != "auto" and method != sparsity.mode:
            raise ValueError(
                f"method={method!r} but the SparseJacobian was coloured for {sparsity.mode!r}; "
                f"build it with SparseJacobian(pattern, method={method!r})"
            )
        sj = sparsity
    else:
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"with sparsity=, x must be one tensor, got {type(x).__name__}")
        # colour once: a pattern with the same content as one seen before reuses its colouring
        try:
            sj = _seen.sparse_jacobian_for(
                sparsity, x.shape, method,
                lambda: SparseJacobian(sparsity, x.shape, method=cast(Any, method))
            )
        except (TypeError, ValueError) as err:
            if "pattern" not in str(err):
                raise
            # the pattern's checks, for the argument the caller named sparsity
            raise type(err)(f"sparsity= (the pattern): {err}") from None
    return sj(fn, x, certify=certify)

