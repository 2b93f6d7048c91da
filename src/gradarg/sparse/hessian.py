"""Sparse Hessians from a few Hessian-vector products: star colouring, direct recovery.

``SparseHessian(pattern)`` star-colours the adjacency graph of a symmetric pattern once
(:mod:`gradarg.sparse.star`); each call then computes one Hessian-vector product per colour
(eagerly reverse-over-reverse: one backward pass of the recorded gradient per colour, batched
with ``torch.func.vmap``; compiled forward-over-reverse, :mod:`gradarg.sparse.passes`), and reads
every entry of the pattern off those products.  Each method
(``"star"``, ``"acyclic"``: substitution, fewer products) is a mode of
:mod:`gradarg.sparse.modes`, which holds its colouring, its pass and its recovery.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import torch

from .._validate import check_callable, check_count, check_generator, check_memory
from ..core.buffers import keeps_buffers
from ._layouts import assemble, check_layout, check_x, coo_indices, refuse_in_transform
from .certificate import failed_entry
from .compiled import CompiledSparse, compile_parameters
from .compressed import CertificateError
from .greedy import order
from .modes import HESSIAN_MODES
from .passes import hvps, scalar
from .pattern import coordinates
from .starfast import ORDERS_TRIED, colour
from .symmetric import symmetrized  # compiled or interpreted (gradarg.sparse._numba)

__all__ = ["ORDERS_TRIED", "SparseHessian"]


class SparseHessian:
    r"""Reusable sparse Hessian for one symmetric pattern: star-colour once, call many times.

    The pattern is made symmetric (``P | Pᵀ``, diagonal included).  Its adjacency graph is
    star-coloured greedily in several vertex orders (natural, largest-first, smallest-last) and
    the colouring with fewest colours is kept, unless a colouring found by array operations
    (a distance-2 colouring of a band or grid stencil, a periodic tile of a known grid stencil,
    or the periodic continuation of a prefix) is checked to be a star colouring and proved to need no more colours
    (``gradarg.sparse.starfast``: the search then runs only until each order needs as many,
    or not at all).  Each call ``sh(f, x)`` makes ``sh.passes``
    Hessian-vector products ``H s_c`` (``s_c`` the sum of the unit vectors of colour ``c``):
    ``∇f`` recorded once with ``create_graph=True``, then one backward pass of ``∇f · s_c`` per
    colour, batched by ``torch.func.vmap`` (where a custom ``autograd.Function`` is in ``f``'s
    graph, forward-over-reverse, ``torch.func.jvp(torch.func.grad(f), ...)``: a second backward
    pass through a ``@once_differentiable`` backward would silently miss its terms), and reads
    each entry directly: ``H[i, j] = (H s_{c(j)})_i`` when ``j`` is
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
    route : str
        How the colouring was found: ``"search"`` (the greedy orders), or a structured
        candidate (``"modular"``, ``"lattice"``, ``"tile"``, ``"periodic"``) and its proof of using no more
        colours (``"+bound"``: a lower bound; ``"+orders"``: every greedy order needs as
        many); ``"search"`` with ``method="acyclic"``.
    distance2_colors : int
        Colours of a distance-2 colouring of the same pattern (what treating ``H`` as the
        Jacobian of the gradient would need), for comparison; computed on first access.

    Raises
    ------
    TypeError
        ``pattern`` is not a ``torch.bool`` tensor in a supported layout; ``x_shape`` is not a
        tuple of integers.
    ValueError
        ``pattern`` is not square (``(n, n)`` or ``x.shape + x.shape``), is all False or is on
        the meta device; unknown ``method``; built inside a ``torch.func`` transform (the
        message names it).
    MemoryError
        The colouring would not fit in the memory available now (estimated before anything
        of the pattern's size is allocated: about 128 bytes per unknown and 48 per entry).

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
        refuse_in_transform("SparseHessian(pattern)")
        if not isinstance(method, str) or method not in HESSIAN_MODES:
            raise ValueError(f"method must be 'star' or 'acyclic', got {method!r}")
        co = coordinates(pattern, x_shape, what="SparseHessian's colouring", lines=2)
        if co.m != co.n or (co.y_shape is not None and co.y_shape != co.x_shape):
            raise ValueError(
                f"a Hessian pattern must be square, shape (n, n) or x.shape + x.shape; got "
                f"shape {tuple(pattern.shape)}"
            )
        start = time.perf_counter()
        n = co.n
        rows, cols, indptr, indices = symmetrized(co)
        kind = HESSIAN_MODES[method]
        if method == "star":  # a structured colouring when proved no worse than the search
            best, self.route = colour(rows, cols, indptr, indices, co.x_shape)
        else:
            found: np.ndarray | None = None
            for name in ORDERS_TRIED:
                seq = np.arange(n) if name == "natural" else order(indptr, indices, name)
                colors = kind.colour(indptr, indices, seq)
                if found is None or colors.max() < found.max():
                    found = colors
            assert found is not None
            best, self.route = found, "search"
        self.method = method
        self._mode = kind(rows, cols, best)  # the recovery plan
        self.coloring_seconds = time.perf_counter() - start
        self._distance2_colors: int | None = None
        self.colors = self._mode.colors
        self.passes = self._mode.passes
        self.shape = (n, n)
        self.nnz = int(rows.size)
        self._x_shape = co.x_shape
        self._rows, self._cols = torch.from_numpy(rows), torch.from_numpy(cols)
        self._coo_index: dict[tuple[int, ...], torch.Tensor] = {}

    @property
    def distance2_colors(self) -> int:
        """Colours of a distance-2 colouring of the pattern (computed on first access)."""
        if self._distance2_colors is None:
            from .d2color import color_bipartite  # compiled or interpreted

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

    @keeps_buffers(1, "f")
    def __call__(
        self,
        f: Callable[[torch.Tensor], torch.Tensor],
        x: torch.Tensor,
        *,
        layout: torch.layout = torch.sparse_coo,
        certify: int = 0,
        generator: torch.Generator | None = None,
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
        certify : int
            Number of random checks (Freivalds), as ``certify=`` of
            :class:`~gradarg.SparseJacobian`: for each of ``certify`` Gaussian vectors ``r``
            one more Hessian-vector product ``H r`` (in the same batched pass as the
            colours') must equal the returned Hessian times ``r`` within a relative
            ``sqrt(eps)``: a pattern that misses a larger non-zero fails it; a difference
            between rounding and that tolerance warns (``gradarg.sparse.certificate``).
            ``0`` (default): no check.
        generator : optional
            A ``torch.Generator``: source of the check's random vectors (default: a fresh
            seed); the global generator is never advanced.

        Returns
        -------
        torch.Tensor
            The Hessian, in ``x``'s dtype.

        Raises
        ------
        TypeError
            ``x`` is not a real floating dense tensor (a sparse ``x`` is refused: pass
            ``x.to_dense()``); ``f(x)`` is not real floating (an integer or bool output
            would give an all-zero Hessian; a complex one has none); ``certify`` is not an
            integer; ``generator`` is not a ``torch.Generator``.
        ValueError
            ``x`` does not match the pattern or is on the meta device; ``f(x)`` is not a
            scalar; ``certify < 0``; unknown ``layout``;
            called inside a ``torch.func`` transform, where the compressed result would be cut
            from it (the message names the transform; ``torch.func.hessian`` composes).
        CertificateError
            ``certify > 0`` and a random check failed: the pattern misses non-zeros of ``H``.
        MemoryError
            The products (``(passes + certify) × n`` values) or a dense result
            (``layout=torch.strided``: ``n × n``) would not fit in the memory available now.
        """
        check_callable("f", f)
        refuse_in_transform("SparseHessian")
        check_x(x, self.shape[0], self._x_shape)
        check_layout(layout)
        certify = check_count("certify", certify)
        generator = check_generator("generator", generator)
        n = self.shape[0]
        size = x.element_size()
        check_memory(f"the {self.passes + certify} Hessian-vector products of length {n}",
                     2 * (self.passes + certify) * n * size,
                     "Instead: fewer colours (a finer pattern), or single Hessian-vector "
                     "products (torch.func.jvp of torch.func.grad)")
        if layout == torch.strided:
            check_memory(f"the dense result (layout=torch.strided, {n} × {n})", n * n * size,
                         "Instead: layout=torch.sparse_coo (the default) or torch.sparse_csr")
        x0 = x.detach().clone()
        if not certify:
            values = self._recover(self._mode.run(f, x0))
            return self._assemble(values, tuple(x.shape), layout)
        gen = generator if generator is not None else torch.Generator().manual_seed(
            torch.Generator().seed())
        r = torch.randn(certify, n, generator=gen, dtype=torch.float64).to(x0.dtype)
        (seeds,) = self._mode.seeds(x0.dtype)
        products = hvps(f, x0, torch.cat([seeds, r])).detach()
        values = self._recover(products[: self.passes].reshape(-1))
        self._certify(values, r, products[self.passes :])
        return self._assemble(values, tuple(x.shape), layout)

    def _certify(self, values: torch.Tensor, r: torch.Tensor, got: torch.Tensor) -> None:
        """``H r`` from the products against the returned entries times ``r`` (Freivalds)."""
        k, n = r.shape
        contrib = values * r[:, self._cols]
        want = torch.zeros(k, n, dtype=contrib.dtype).index_add_(1, self._rows, contrib)
        scale = torch.zeros(k, n, dtype=contrib.dtype).index_add_(1, self._rows, contrib.abs())
        got = got.to(contrib.dtype)
        failed = failed_entry(got, want, scale, values.dtype, "sparse Hessian")
        if failed is not None:
            t, i, err, bound = failed
            raise CertificateError(
                f"the sparse Hessian failed its random check: a Hessian-vector product with a "
                f"random r gives {float(got[t, i]):.6g} at element {i}, but the returned "
                f"Hessian times r gives {float(want[t, i]):.6g} (difference "
                f"{err:.3g}, allowed {bound:.3g}); the pattern "
                f"misses non-zero entries of the Hessian (in row {i} or in a column sharing "
                f"its colour). Mark them True, or find the pattern with "
                f"gradarg.hessian_sparsity"
            )

    def _recover(self, flat: torch.Tensor) -> torch.Tensor:
        """The entries' values from the flat ``passes × n`` products (the mode's recovery)."""
        return self._mode.recover(flat)

    def _assemble(self, values: torch.Tensor, shape: tuple[int, ...],
                  layout: torch.layout) -> torch.Tensor:
        indices = None
        if layout == torch.sparse_coo:  # the same on every call: kept
            indices = self._coo_index.get(shape)
            if indices is None:
                indices = self._coo_index[shape] = coo_indices(self._rows, self._cols,
                                                               shape, shape)
        return assemble(values, self._rows, self._cols, shape, shape, layout, indices=indices)

    # ------------------------------------------------------------------ compiled call

    @compile_parameters
    def compile(
        self,
        f: Callable[[torch.Tensor], torch.Tensor],
        *,
        backend: str = "auto",
        mode: str | None = None,
        fullgraph: bool = True,
        package: bool | None = None,
    ) -> CompiledSparse:
        r"""``f``'s sparse Hessian as one compiled function of ``x``: compile once.

        The ``passes`` Hessian-vector products (``torch.func.jvp`` of ``torch.func.grad``,
        batched by ``vmap``) are handed to ``torch.compile``; the entries are then read off
        (star) or substituted (acyclic) as in the eager call.  The first call at an input
        shape and dtype compiles (seconds, in ``compile_seconds``), once per machine: a later
        process finds the kernels in torch's on-disk caches and the choice among candidates
        in gradarg's memory beside them, and compiles only the winner (see
        :class:`~gradarg.sparse.CompiledSparse`).  It pays where ``f`` is called many
        times at one shape.

        Parameters
        ----------
        f : callable
            ``f(x)`` returns a real floating scalar; traceable by ``torch.compile`` and
            ``torch.func`` (no ``.item()``, no in-place change of ``x``, no randomness).
        {compile_parameters}

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

        def prepare(x: torch.Tensor) -> tuple[int, ...]:
            check_x(x, self.shape[0], self._x_shape)
            with torch.no_grad():
                scalar(f(x.detach().clone()))
            return tuple(x.shape)

        def assemble(values, y_shape, x_shape, layout):
            return self._assemble(values, x_shape, layout)

        return CompiledSparse.of_modes(self, f, [self._mode], prepare, assemble,
                                       pattern=(self._rows, self._cols), backend=backend,
                                       mode=mode, fullgraph=fullgraph, package=package)
