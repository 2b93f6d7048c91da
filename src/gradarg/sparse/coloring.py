"""Colouring the rows or the columns of a sparsity pattern (Curtis–Powell–Reid compression).

Two rows of a Jacobian whose column supports are disjoint can share one backward pass: with
``v = e_i + e_k`` the result ``vᵀJ`` holds row ``i`` on row ``i``'s columns and row ``k`` on row
``k``'s.  Rows that share a column *conflict*; the **row intersection graph** has an edge for
every conflicting pair, and a proper colouring of it groups the rows into passes.  Columns and
forward-mode passes work the same way with the **column intersection graph** (columns that
share a row conflict).  See Curtis, Powell and Reid, "On the estimation of sparse Jacobian
matrices", IMA J. Appl. Math. 13 (1974), and Gebremedhin, Manne and Pothen, "What color is
your Jacobian? Graph coloring for computing derivatives", SIAM Review 47 (2005).

``"best"``, ``"largest_first"`` and ``"DSATUR"`` never build that graph: they colour at
distance 2 in the bipartite graph of the pattern, through its CSR and CSC arrays
(``gradarg.sparse.d2color``: compiled by numba, or interpreted while numba would cost more
to load than it saves, with the same colours).  The other strategies build
the graph explicitly (:func:`conflict_adjacency`: one sparse product ``P Pᵀ``) and colour it
greedily in one of several vertex orders (:mod:`gradarg.sparse.greedy`), or with rustworkx's
independent-set colouring, or networkx's orders (:func:`color_graph`).
"""

from __future__ import annotations

import warnings
from typing import Literal

import numpy as np
import rustworkx as rx
import torch

from .d2color import color_side  # compiled or interpreted (gradarg.sparse._numba)
from .greedy import ORDERS, greedy, order
from .pattern import Coordinates, coordinates

__all__ = ["STRATEGIES", "color_graph", "color_pattern", "conflict_adjacency"]

Side = Literal["rows", "columns"]
# "best" first (the default); the greedy orders of gradarg.sparse.greedy; DSATUR
# (gradarg.sparse.d2color); rustworkx's independent-set colouring; two networkx orders kept
# for compatibility (slower: explicit graph).
STRATEGIES: tuple[str, ...] = (
    "best",
    *ORDERS,
    "DSATUR",
    "independent_set",
    "connected_sequential_bfs",
    "connected_sequential_dfs",
)
# colourings made on the pattern's CSR/CSC arrays, without an explicit graph (d2color)
_COMPRESSED: tuple[str, ...] = ("best", "largest_first", "DSATUR")


def conflict_adjacency(coords: Coordinates, side: Side) -> tuple[np.ndarray, np.ndarray]:
    """Compressed adjacency ``(indptr, indices)`` of the row (``side="rows"``) or column
    intersection graph: the off-diagonal non-zeros of ``P Pᵀ`` (or ``Pᵀ P``), one sparse
    product of the 0/1 pattern matrix ``P`` (``torch`` CSR); neighbours sorted."""
    if side == "rows":
        nodes, shared, size, other = coords.rows, coords.cols, coords.m, coords.n
    elif side == "columns":
        by = np.argsort(coords.cols, kind="stable")  # coordinates are sorted row-major
        nodes, shared, size, other = coords.cols[by], coords.rows[by], coords.n, coords.m
    else:
        raise ValueError(f"side must be 'rows' or 'columns', got {side!r}")
    nodes_t, shared_t = torch.from_numpy(nodes), torch.from_numpy(shared)
    crow = torch.zeros(size + 1, dtype=torch.int64)
    crow[1:] = torch.bincount(nodes_t, minlength=size).cumsum(0)
    ones = torch.ones(nodes.size, dtype=torch.float32)
    with warnings.catch_warnings():  # "Sparse CSR tensor support is in beta state"
        warnings.simplefilter("ignore", UserWarning)
        p = torch.sparse_csr_tensor(crow, shared_t, ones, (size, other), check_invariants=False)
        product = p @ p.t().to_sparse_csr()
    prow = product.crow_indices()
    col = product.col_indices()
    row = torch.repeat_interleave(torch.arange(size), prow.diff())
    keep = row != col
    row, col = row[keep], col[keep]
    indptr = torch.zeros(size + 1, dtype=torch.int64)
    indptr[1:] = torch.bincount(row, minlength=size).cumsum(0)
    return indptr.numpy(), col.numpy().astype(np.int64)


def color_graph(indptr: np.ndarray, indices: np.ndarray, strategy: str) -> np.ndarray:
    """Colour the graph with compressed adjacency ``(indptr, indices)`` (both directions) by
    ``strategy``, one of :data:`STRATEGIES` that needs the explicit graph: a greedy order of
    :mod:`gradarg.sparse.greedy`, rustworkx's ``"independent_set"``, or a networkx order.
    Returns the ``int64`` colours."""
    if strategy in ORDERS:
        return greedy(indptr, indices, order(indptr, indices, strategy))
    size = len(indptr) - 1
    row = np.repeat(np.arange(size, dtype=np.int64), np.diff(indptr))
    keep = row < indices  # each edge once
    a, b = row[keep].tolist(), indices[keep].tolist()
    colors = np.empty(size, dtype=np.int64)
    if strategy == "independent_set":
        graph = rx.PyGraph(node_count_hint=size)  # pairs are unique already
        graph.add_nodes_from(range(size))
        graph.add_edges_from_no_data(list(zip(a, b, strict=True)))
        found = rx.graph_greedy_color(graph, strategy=rx.ColoringStrategy.IndependentSet)
        colors[np.fromiter(found.keys(), np.int64, size)] = np.fromiter(
            found.values(), np.int64, size
        )
    elif strategy in STRATEGIES and strategy not in _COMPRESSED:  # networkx orders
        import networkx as nx  # imported when used: import gradarg stays light

        nxg = nx.Graph()
        nxg.add_nodes_from(range(size))
        nxg.add_edges_from(zip(a, b, strict=True))
        found = nx.greedy_color(nxg, strategy=strategy)
        colors[list(found)] = list(found.values())
    else:
        raise ValueError(f"strategy must be one of {STRATEGIES} but not {_COMPRESSED}, got "
                         f"{strategy!r}")
    return colors


def color_pattern(
    pattern: torch.Tensor | Coordinates,
    side: Side = "rows",
    *,
    x_shape: tuple[int, ...] | torch.Size | None = None,
    strategy: str = "best",
) -> torch.Tensor:
    """Greedy colouring of the rows or columns of a Jacobian sparsity pattern.

    Rows with the same colour have disjoint column supports (``side="rows"``: one reverse-mode
    pass per colour); columns with the same colour have disjoint row supports
    (``side="columns"``: one forward-mode pass per colour).  ``"best"``, ``"largest_first"``
    and ``"DSATUR"`` colour at distance 2 through the pattern's CSR and CSC arrays, without
    building the conflict (intersection) graph; other strategies build it explicitly.

    Parameters
    ----------
    pattern : torch.Tensor
        ``torch.bool``, dense, sparse COO or CSR; shape ``(m, n)``, or ``y.shape + x.shape``
        with ``x_shape`` given.
    side : {"rows", "columns"}
    x_shape : tuple of int, optional
        The input's shape, needed when ``pattern`` has more than 2 dimensions.
    strategy : str
        One of :data:`gradarg.sparse.STRATEGIES`: ``"best"`` (default) first tries two
        colourings that meet the lower bound (the most entries in one line) when they are
        proper, then optimal: the index modulo that bound (bands, blocks, many stencils) and,
        given the shape, a lattice colouring of the multi-index (stencils on grids;
        ``gradarg.sparse.d2color``); else it colours with largest-first and, unless that
        meets the lower bound, DSATUR (two tie-breaks) and keeps the fewest colours (never
        more than ``networkx.greedy_color(strategy="largest_first")``, whose colouring
        ``"largest_first"`` reproduces); ``"DSATUR"``: Brélaz's order, ties
        by most uncoloured neighbours (``gradarg.sparse.d2color``);
        ``"largest_first"``, ``"smallest_last"``, ``"incidence_degree"``,
        ``"dynamic_largest_first"``, ``"random_sequential"`` (seeded) are greedy orders
        (Gebremedhin, Manne and Pothen, SIAM Review 47, 2005); ``"independent_set"`` is
        rustworkx's ``graph_greedy_color``;
        ``"connected_sequential_bfs"`` / ``"_dfs"`` are ``networkx.greedy_color``.

    Returns
    -------
    torch.Tensor
        ``int64`` colours ``0, 1, …``, one per row (``m``) or column (``n``) of the flattened
        pattern; the number of passes is ``colors.max() + 1``.

    Raises
    ------
    TypeError
        ``pattern`` is not a ``torch.bool`` tensor in a supported layout.
    ValueError
        Wrong shape, all-False pattern, unknown ``side`` or ``strategy``.

    Examples
    --------
    >>> import torch
    >>> tridiagonal = torch.ones(6, 6).triu(-1).tril(1).bool()
    >>> color_pattern(tridiagonal, strategy="largest_first")
    tensor([1, 2, 0, 1, 2, 0])
    >>> arrow = torch.eye(5, dtype=torch.bool)   # dense first row and column
    >>> arrow[0] = arrow[:, 0] = True
    >>> int(color_pattern(arrow).max()) + 1   # every row meets row 0: 5 colours
    5
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {STRATEGIES}, got {strategy!r}")
    coords = pattern if isinstance(pattern, Coordinates) else coordinates(pattern, x_shape)
    if side not in ("rows", "columns"):
        raise ValueError(f"side must be 'rows' or 'columns', got {side!r}")
    if strategy in _COMPRESSED:
        colors, _ = color_side(coords, side, strategy)
    else:
        colors = color_graph(*conflict_adjacency(coords, side), strategy)
    return torch.from_numpy(colors)
