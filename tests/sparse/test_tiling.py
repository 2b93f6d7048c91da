"""Periodic star colourings of grid stencils (gradarg.sparse.tiling) against brute force.

* ``tile_search`` finds a table exactly when one exists: every table of small tiles enumerated
  and checked, repeated over a grid large enough to hold every path of the lattice (a table
  is a star colouring of the lattice iff of that grid);
* every catalogue entry is a star colouring of whole grids of any size, in every orientation
  the lookup maps it to (the definition enumerated on the grid's graph), found again by the
  search, and proved optimal by a ball exactly when it says so;
* ``colour`` finds an entry exactly for its stencil, not for a stencil with one step more or
  less, and SparseHessian takes it with an exact Hessian.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from test_starfast import graph_of, is_star

import gradarg
from gradarg.sparse import starbound, tiling
from gradarg.sparse.star import star_conflict


def grid_mask(shape: tuple[int, ...], offsets) -> np.ndarray:
    """The pattern of a stencil on a grid (row-major), diagonal included, cut at the boundary:
    built from the multi-indices here (not by gradarg)."""
    n = int(np.prod(shape))
    index = np.array(np.unravel_index(np.arange(n), shape)).T
    diff = index[None, :, :] - index[:, None, :]
    mask = np.eye(n, dtype=bool)
    for o in offsets:
        mask |= (diff == np.array(o)).all(-1)
    return mask


def periodic(table: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    index = np.unravel_index(np.arange(int(np.prod(shape))), shape)
    return table[tuple(i % p for i, p in zip(index, table.shape, strict=True))]


def symmetric_steps(steps) -> set[tuple[int, ...]]:
    out = {tuple(o) for o in steps}
    return out | {tuple(-a for a in o) for o in out}


def _lattice_grid(steps, period: tuple[int, ...]):
    """The pattern of a grid of whole tiles that holds a translate (by periods) of every path
    on four points of the lattice: a table repeated is a star colouring of the lattice iff
    it is one of this grid."""
    reach = 3 * max(max(abs(a) for a in o) for o in steps)
    shape = tuple(p * (1 + -(-(reach + 1) // p)) for p in period)
    rows, cols = (a.astype(np.int64) for a in np.nonzero(grid_mask(shape, steps)))
    return shape, rows, cols


def lattice_star(table: np.ndarray, steps) -> bool:
    """Whether ``table`` repeated is a star colouring of the infinite lattice."""
    shape, rows, cols = _lattice_grid(steps, table.shape)
    return star_conflict(rows, cols, periodic(table, shape)) is None


POOL = [o for o in itertools.product((-1, 0, 1), repeat=2) if o > (0, 0)]
SWEEP = [(picked, period, k)
         for size in (1, 2, 3) for picked in itertools.combinations(POOL, size)
         for period in ((1, 2), (2, 1), (2, 2), (1, 3), (3, 1), (1, 4), (2, 3), (3, 2))
         for k in (2, 3, 4) if k ** (period[0] * period[1]) <= 1000]


@pytest.mark.parametrize("chunk", range(4))
def test_the_search_finds_a_table_exactly_when_one_exists(chunk):
    """Every stencil of up to three steps of the 8-neighbourhood (with their negatives), every
    tile of up to 6 cells, 2 to 4 colours (at most 1000 tables each): the search's answer
    against every table enumerated."""
    answers = set()
    for picked, period, k in SWEEP[chunk::4]:
        steps = symmetric_steps(picked)
        found = tiling.tile_search(picked, period, k)
        shape, rows, cols = _lattice_grid(steps, period)
        exists = any(star_conflict(rows, cols, periodic(np.array(t).reshape(period), shape))
                     is None for t in itertools.product(range(k), repeat=period[0] * period[1]))
        assert (found is not None) == exists, (sorted(steps), period, k)
        if found is not None:
            assert found.shape == period and found.max() < k and lattice_star(found, steps)
        answers.add(exists)
    assert answers == {True, False}


@pytest.mark.parametrize("entry", tiling.CATALOGUE, ids=lambda t: f"{t.period}")
def test_each_entry_is_found_by_the_search_and_proved_as_it_says(entry):
    assert entry.offsets == symmetric_steps(entry.offsets)
    table = np.array(entry.table).reshape(entry.period)
    k = int(table.max()) + 1
    assert set(table.ravel().tolist()) == set(range(k))
    assert lattice_star(table, entry.offsets)
    found = tiling.tile_search(entry.offsets, entry.period, k)
    assert found is not None and lattice_star(found, entry.offsets)
    # proved: no star colouring with fewer colours (a ball of the lattice decided exactly)
    side = 9 if len(entry.period) == 2 else 7
    _, _, indptr, indices = graph_of(grid_mask((side,) * len(entry.period), entry.offsets))
    assert starbound.needs_at_least(indptr, indices, k) == entry.proved


def signed_permutations(dims: int):
    for axes in itertools.permutations(range(dims)):
        for signs in itertools.product((1, -1), repeat=dims):
            yield axes, signs


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_an_entry_colours_whole_grids_in_every_orientation(data):
    entry = data.draw(st.sampled_from(tiling.CATALOGUE))
    dims = len(entry.period)
    axes, signs = data.draw(st.sampled_from(list(signed_permutations(dims))))
    # the stencil seen through the symmetry: step o becomes o' with o'[axes[i]] = signs[i] o[i]
    steps = set()
    for o in entry.offsets:
        image = [0] * dims
        for i in range(dims):
            image[axes[i]] = signs[i] * o[i]
        steps.add(tuple(image))
    shape = tuple(data.draw(st.integers(2, 11 if dims == 2 else 6)) for _ in range(dims))
    if data.draw(st.booleans()):  # an axis of length 1 in front: ignored
        shape, steps = (1, *shape), {(0, *o) for o in steps}
    mask = grid_mask(shape, steps)
    rows, cols, indptr, _ = graph_of(mask)
    ptr = np.zeros(len(indptr), dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=len(indptr) - 1), out=ptr[1:])
    colors = tiling.colour(ptr, cols, shape)
    if min(shape[-dims:]) < 3:  # too small for the longest row to hold every step
        return
    assert colors is not None
    assert colors.max() < int(np.array(entry.table).max()) + 1
    assert is_star(mask, colors)


@pytest.mark.parametrize("change", ("one more step", "one step less"))
def test_a_stencil_not_in_the_catalogue_gets_nothing(change):
    entry = tiling.CATALOGUE[0]
    steps = set(entry.offsets)
    if change == "one more step":
        steps |= {(1, 1), (-1, -1)}
    else:
        steps -= {(1, -1), (-1, 1)}
    mask = grid_mask((8, 8), steps)
    rows, cols, _, _ = graph_of(mask)
    ptr = np.zeros(65, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=64), out=ptr[1:])
    assert tiling.colour(ptr, cols, (8, 8)) is None


def test_sparse_hessian_takes_the_3d_tile_exactly():
    """P1 elements on a grid of cubes (Kuhn's six tetrahedra per cube), 6 × 6 × 6: 14
    Hessian-vector products (the greedy orders take 17 on 12³), not proved optimal, so the
    orders ran and needed as many; the Hessian equal to torch.func.hessian's.  (On 5 × 6 × 4
    the orders find 13 and are kept: the boundary leaves fewer constraints.)"""

    def energy(u):
        total = (u ** 4).sum()
        for o in ((1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 0), (0, 1, 1), (1, 1, 1)):
            a = u[o[0]:, o[1]:, o[2]:]
            b = u[:u.shape[0] - o[0], :u.shape[1] - o[1], :u.shape[2] - o[2]]
            total = total + ((a - b) ** 2).sin().sum()
        return total

    x = torch.rand(6, 6, 6, dtype=torch.float64, generator=torch.Generator().manual_seed(4))
    pattern = gradarg.hessian_sparsity(energy, x)
    sh = gradarg.SparseHessian(pattern, x.shape)
    assert (sh.route, sh.passes) == ("tile+orders", 14)
    torch.testing.assert_close(sh(energy, x).to_dense(), torch.func.hessian(energy)(x),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("diagonal", ((1, -1), (1, 1)))
def test_sparse_hessian_takes_the_tile_exactly(diagonal):
    """P1 finite elements on a triangulated 10 × 12 grid (either diagonal): 6 Hessian-vector
    products, the Hessian equal to torch.func.hessian's."""
    a, b = diagonal

    def energy(u):
        du = u[1:, 1:] - u[:-1, :-1] if b == 1 else u[1:, :-1] - u[:-1, 1:]
        dx = u[1:, :] - u[:-1, :]
        dy = u[:, 1:] - u[:, :-1]
        return (dx ** 4).sum() + (dy ** 2).sin().sum() + (du * a).pow(2).exp().sum()

    x = torch.rand(10, 12, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    pattern = gradarg.hessian_sparsity(energy, x)
    sh = gradarg.SparseHessian(pattern, x.shape)
    assert (sh.route, sh.passes) == ("tile+bound", 6)
    torch.testing.assert_close(sh(energy, x).to_dense(), torch.func.hessian(energy)(x),
                               rtol=1e-12, atol=1e-12)
