"""Sparse Hessians from a few Hessian-vector products: star colouring, direct recovery.

``SparseHessian(pattern)`` star-colours the adjacency graph of a symmetric pattern once
(:mod:`gradarg.sparse.star`); each call then computes one Hessian-vector product per colour,
forward-over-reverse (``torch.func.jvp`` of ``torch.func.grad``, batched with
``torch.func.vmap``), and reads every entry of the pattern off those products.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import torch
from torch.func import grad as func_grad
from torch.func import jvp as func_jvp
from torch.func import vmap

from .._validate import check_callable
from ._layouts import assemble, check_layout, check_x, colour_seeds, coo_indices
from ._warm import forward_mode_ready
from .acyclic import acyclic_coloring, substitution_plan
from .compiled import CompiledSparse
from .greedy import order
from .pattern import coordinates
from .star import star_coloring, star_recovery

__all__ = ["ORDERS_TRIED", "SparseHessian"]

ORDERS_TRIED = ("natural", "largest_first", "smallest_last")
_VMAP_ERRORS = (RuntimeError, NotImplementedError, ValueError, TypeError)


class SparseHessian:
    r"""Reusable sparse Hessian for one symmetric pattern: star-colour once, call many times.

    The pattern is made symmetric (``P | Pᵀ``, diagonal included).  Its adjacency graph is
    star-coloured greedily in several vertex orders (natural, largest-first, smallest-last) and
    the colouring with fewest colours is kept.  Each call ``sh(f, x)`` makes ``sh.passes``
    Hessian-vector products ``H s_c`` (``s_c`` the sum of the unit vectors of colour ``c``),
    forward-over-reverse with ``torch.func.jvp(torch.func.grad(f), ...)`` batched by
    ``torch.func.vmap``, and reads each entry directly: ``H[i, j] = (H s_{c(j)})_i`` when ``j`` is
    the only neighbour of ``i`` with colour ``c(j)``, else ``(H s_{c(i)})_j``.  Exact (no
    approximation) when every non-zero of ``H`` is ``True`` in ``pattern``.

    Star colouring and its direct recovery: Gebremedhin, Manne and Pothen, SIAM Review 47
    (2005), section 4; Gebremedhin, Tarafdar, Manne and Pothen, SIAM J. Sci. Comput. 29 (2007).

    Parameters
    ----------
    pattern : torch.Tensor
        ``torch.bool``, ``True`` wherever ``H`` may be non-zero: shape ``(n, n)`` or
        ``x.shape + x.shape``; dense, sparse COO or CSR.
    x_shape : tuple of int, optional
        The input's shape; needed when ``pattern`` has more than 2 dimensions.
    method : {"star", "acyclic"}
        ``"star"`` (default): star colouring, every entry read directly off one product.
        ``"acyclic"``: acyclic colouring (every two colour classes span a forest), fewer
        products (a band of half-width ``β``: ``β + 1`` instead of ``2β + 1``), entries found
        by substitution along the two-coloured trees, all trees at once: each entry is the
        difference of two values of one signed prefix sum of the products (a fixed handful of
        array operations per call, however deep the trees; ``gradarg.sparse.acyclic``),
        accumulated in float64 whatever ``x``'s dtype, then rounded to it.  An entry adds up the
        products over as much as half of its tree (each tree rooted at its centroid), and their
        rounding errors with them; a non-finite product makes every entry after it in the
        prefix sum non-finite.

    Attributes
    ----------
    passes : int
        Hessian-vector products per call (the number of colours).
    colors : torch.Tensor
        ``int64`` colour of each flattened input element.
    nnz, shape : int, tuple
        Entries of the symmetrised pattern (diagonal included); ``(n, n)``.
    coloring_seconds : float
        Time of the colouring and the recovery plan, paid once.
    distance2_colors : int
        Colours of a distance-2 colouring of the same pattern (what treating ``H`` as the
        Jacobian of the gradient would need), for comparison; computed on first access.

    Raises
    ------
    TypeError
        ``pattern`` is not a ``torch.bool`` tensor in a supported layout.
    ValueError
        ``pattern`` is not square (``(n, n)`` or ``x.shape + x.shape``) or is all False;
        unknown ``method``.

    Examples
    --------
    >>> import torch
    >>> n = 1000                        # u_0 couples to every u_i: arrowhead
    >>> arrow = torch.eye(n, dtype=torch.bool)
    >>> arrow[0] = arrow[:, 0] = True
    >>> sh = SparseHessian(arrow)
    >>> sh.passes, sh.distance2_colors   # 2 products; distance-2 colouring: 1000
    (2, 1000)
    >>> def energy(u):
    ...     return ((u[1:] - u[0]) ** 4).sum() + torch.cos(u).sum()
    >>> x = torch.linspace(0, 1, n, dtype=torch.float64)
    >>> H = sh(energy, x)                 # sparse COO
    >>> torch.allclose(H.to_dense(), torch.func.hessian(energy)(x))
    True
    """

    def __init__(
        self,
        pattern: torch.Tensor,
        x_shape: tuple[int, ...] | torch.Size | None = None,
        *,
        method: str = "star",
    ) -> None:
        if method not in ("star", "acyclic"):
            raise ValueError(f"method must be 'star' or 'acyclic', got {method!r}")
        co = coordinates(pattern, x_shape)
        if co.m != co.n or (co.y_shape is not None and co.y_shape != co.x_shape):
            raise ValueError(
                f"a Hessian pattern must be square, shape (n, n) or x.shape + x.shape; got "
                f"shape {tuple(pattern.shape)}"
            )
        forward_mode_ready()  # the first call then costs what the next ones cost
        start = time.perf_counter()
        n = co.n
        from .symmetric import symmetrized  # imports numba

        rows, cols, indptr, indices = symmetrized(co)
        best = None
        colour = star_coloring if method == "star" else acyclic_coloring
        for name in ORDERS_TRIED:
            seq = np.arange(n) if name == "natural" else order(indptr, indices, name)
            colors = colour(indptr, indices, seq)
            if best is None or colors.max() < best.max():
                best = colors
        assert best is not None
        self.method = method
        if method == "star":
            self._gather = torch.from_numpy(star_recovery(rows, cols, best))
        else:
            plan = substitution_plan(rows, cols, best)
            self._order, self._sign = torch.from_numpy(plan.order), torch.from_numpy(plan.sign)
            self._plus, self._minus = torch.from_numpy(plan.plus), torch.from_numpy(plan.minus)
        self.coloring_seconds = time.perf_counter() - start
        self._distance2_colors: int | None = None
        self.colors = torch.from_numpy(best)
        self.passes = int(best.max()) + 1
        self.shape = (n, n)
        self.nnz = int(rows.size)
        self._x_shape = co.x_shape
        self._rows, self._cols = torch.from_numpy(rows), torch.from_numpy(cols)
        self._seeds: dict[torch.dtype, torch.Tensor] = {}
        self._coo_index: dict[tuple[int, ...], torch.Tensor] = {}

    @property
    def distance2_colors(self) -> int:
        """Colours of a distance-2 colouring of the pattern (computed on first access)."""
        if self._distance2_colors is None:
            from .d2color import color_bipartite  # imports numba

            # columns of the pattern with its diagonal: two conflict iff at distance <= 2;
            # the pattern is symmetric, so its CSR arrays are its CSC arrays
            rows = self._rows.numpy()
            ptr = np.zeros(self.shape[0] + 1, dtype=np.int64)
            np.cumsum(np.bincount(rows, minlength=self.shape[0]), out=ptr[1:])
            cols = self._cols.numpy()
            self._distance2_colors = int(color_bipartite(ptr, cols, ptr, cols)[0].max()) + 1
        return self._distance2_colors

    def __repr__(self) -> str:
        return (
            f"SparseHessian(shape={self.shape}, nnz={self.nnz}, passes={self.passes})"
        )

    def __call__(
        self,
        f: Callable[[torch.Tensor], torch.Tensor],
        x: torch.Tensor,
        *,
        layout: torch.layout = torch.sparse_coo,
    ) -> torch.Tensor:
        """The Hessian of the scalar ``f`` at ``x`` from ``self.passes`` products.

        Parameters
        ----------
        f : callable
            ``f(x)`` returns a real floating scalar (a tensor with one element).
        x : torch.Tensor
            Real floating input with ``n`` elements (shape ``x_shape`` if one was given);
            never modified.
        layout : {torch.sparse_coo, torch.sparse_csr, torch.strided}
            COO (default) of shape ``x.shape + x.shape`` holding the symmetrised pattern's
            entries; CSR, flat ``(n, n)``; or dense ``x.shape + x.shape``.

        Returns
        -------
        torch.Tensor
            The Hessian, in ``x``'s dtype.

        Raises
        ------
        TypeError
            ``x`` is not a real floating tensor.
        ValueError
            ``x`` does not match the pattern; ``f(x)`` is not a scalar; unknown ``layout``.
        """
        check_callable("f", f)
        self._check_x(x)
        check_layout(layout)
        x0 = x.detach().clone()
        seeds = self._seed(x0.dtype)

        def scalar(u: torch.Tensor) -> torch.Tensor:
            return _scalar(f(u))

        def hvp(v: torch.Tensor) -> torch.Tensor:
            return func_jvp(func_grad(scalar), (x0,), (v.view(x0.shape),))[1].reshape(-1)

        try:
            products = vmap(hvp, randomness="same")(seeds)
        except ValueError as err:
            if "f must return a scalar" in str(err):
                raise
            products = torch.stack([hvp(v) for v in seeds])
        except _VMAP_ERRORS:  # an op without a batching rule: one product at a time
            products = torch.stack([hvp(v) for v in seeds])
        values = self._recover(products.detach().reshape(-1))
        return self._assemble(values, tuple(x.shape), layout)

    def _recover(self, flat: torch.Tensor) -> torch.Tensor:
        """The entries' values from the flat ``passes × n`` products."""
        if self.method == "star":
            return flat.index_select(0, self._gather)  # 4x faster than flat[...]
        return self._substitute(flat)

    def _assemble(self, values: torch.Tensor, shape: tuple[int, ...],
                  layout: torch.layout) -> torch.Tensor:
        indices = None
        if layout == torch.sparse_coo:  # the same on every call: kept
            indices = self._coo_index.get(shape)
            if indices is None:
                indices = self._coo_index[shape] = coo_indices(self._rows, self._cols,
                                                               shape, shape)
        return assemble(values, self._rows, self._cols, shape, shape, layout, indices=indices)

    def _check_x(self, x: object) -> None:
        check_x(x, self.shape[0], self._x_shape)

    def _seed(self, dtype: torch.dtype) -> torch.Tensor:
        seeds = self._seeds.get(dtype)
        if seeds is None:
            seeds = self._seeds[dtype] = colour_seeds(self.colors, self.shape[0], dtype)
        return seeds

    def compile(
        self,
        f: Callable[[torch.Tensor], torch.Tensor],
        *,
        backend: str = "auto",
        mode: str | None = None,
        fullgraph: bool = True,
    ) -> CompiledSparse:
        r"""``f``'s sparse Hessian as one compiled function of ``x``: compile once.

        The ``passes`` Hessian-vector products (``torch.func.jvp`` of ``torch.func.grad``,
        batched by ``vmap``) are handed to ``torch.compile``; the entries are then read off
        (star) or substituted (acyclic) as in the eager call.  The first call at an input shape and dtype compiles (seconds, in
        ``compile_seconds``); it pays where ``f`` is called many times at one shape.

        Parameters
        ----------
        f : callable
            ``f(x)`` returns a real floating scalar; traceable by ``torch.compile`` and
            ``torch.func`` (no ``.item()``, no in-place change of ``x``, no randomness).
        backend : str
            ``torch.compile``'s backend.  ``"auto"`` (default): ``"inductor"`` (C++ kernels)
            where a C++ compiler is found, else ``"aot_eager"`` (traced, run by torch's own
            kernels); :attr:`gradarg.sparse.CompiledSparse.backend` says which.
        mode : str, optional
            Passed to ``torch.compile``.
        fullgraph : bool
            ``True`` (default): one graph or a ``RuntimeError`` at the first call naming
            what could not be captured; ``False`` lets torch run those parts eagerly.

        Returns
        -------
        gradarg.sparse.CompiledSparse
            ``hess(x, layout=torch.sparse_coo)`` returns what ``sh(f, x, layout=...)``
            returns; ``hess.values(x)`` the 1-D values in the entry order.

        Examples
        --------
        >>> import torch
        >>> n = 100
        >>> i = torch.arange(n)
        >>> sh = SparseHessian((i[:, None] - i).abs() <= 1)   # tridiagonal
        >>> def f(u):
        ...     return ((u[1:] - u[:-1] ** 2) ** 2).sum() + torch.cosh(u).sum()
        >>> hess = sh.compile(f, backend="aot_eager")  # no C++ step
        >>> x = torch.rand(n, dtype=torch.float64)
        >>> torch.allclose(hess(x).to_dense(), sh(f, x).to_dense())
        True
        """
        check_callable("f", f)

        def scalar(u: torch.Tensor) -> torch.Tensor:
            return f(u).reshape(())

        def pure(x: torch.Tensor, seeds: torch.Tensor) -> torch.Tensor:
            x = x.clone()  # f never reaches the caller's tensor

            def hvp(v: torch.Tensor) -> torch.Tensor:
                return func_jvp(func_grad(scalar), (x,), (v.view(x.shape),))[1].reshape(-1)

            return vmap(hvp)(seeds).reshape(-1)

        def prepare(x: torch.Tensor) -> tuple[int, ...]:
            self._check_x(x)
            with torch.no_grad():
                _scalar(f(x.detach().clone()))
            return tuple(x.shape)

        def assemble(values, y_shape, x_shape, layout):
            return self._assemble(values, x_shape, layout)

        candidates = {self.method: (pure, lambda dtype: (self._seed(dtype),), self._recover)}
        def eager(x: torch.Tensor) -> torch.Tensor:
            return self(f, x).values()  # coalesced COO: the entries in the pattern's order

        return CompiledSparse(self, f, candidates, prepare, eager, assemble, backend=backend,
                              mode=mode, fullgraph=fullgraph)

    def _substitute(self, flat: torch.Tensor) -> torch.Tensor:
        """The entries from the flat products, acyclic colouring: differences of one signed
        prefix sum, accumulated in float64 (:class:`gradarg.sparse.acyclic.SubstitutionPlan`);
        the same few torch operations whatever the trees' depth."""
        w = flat.index_select(0, self._order).to(torch.float64) * self._sign
        prefix = torch.cat([w.new_zeros(1), torch.cumsum(w, 0)])  # functional: compilable
        return (prefix.index_select(0, self._plus)
                - prefix.index_select(0, self._minus)).to(flat.dtype)


def _scalar(out: object) -> torch.Tensor:
    """``f``'s output as a 0-d tensor, or the ``ValueError`` saying it is not a scalar."""
    if not isinstance(out, torch.Tensor) or out.numel() != 1:
        raise ValueError(
            f"f must return a scalar (one-element tensor), got "
            f"{tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__}"
        )
    return out.reshape(())
