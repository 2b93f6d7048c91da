"""``coordinates``: a pattern's ``True`` entries as flat, sorted, unique ``(rows, cols)``, in
every layout, against ``np.nonzero`` of the flat mask (computed here, not by the code under
test)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from gradarg.sparse.pattern import coordinates

SHAPES = [  # y.shape, x.shape
    ((7,), (5,)),
    ((2, 3), (4,)),
    ((3,), (2, 3)),
    ((2, 3, 2), (2, 2, 3)),
    ((), (6,)),
    ((6,), ()),
]


def _mask(y_shape, x_shape, seed):
    rng = np.random.default_rng(seed)
    mask = rng.random(y_shape + x_shape) < 0.3
    mask.flat[rng.integers(mask.size)] = True  # never all False
    return mask


def _expected(mask, y_shape, x_shape):
    return np.nonzero(mask.reshape(math.prod(y_shape), math.prod(x_shape)))


def _check(co, mask, y_shape, x_shape):
    rows, cols = _expected(mask, y_shape, x_shape)
    assert co.rows.dtype == np.int64 and co.cols.dtype == np.int64
    np.testing.assert_array_equal(co.rows, rows)
    np.testing.assert_array_equal(co.cols, cols)
    assert (co.m, co.n) == (math.prod(y_shape), math.prod(x_shape))


@pytest.mark.parametrize(("y_shape", "x_shape"), SHAPES)
@pytest.mark.parametrize("layout", ["dense", "coo", "coo with False values", "flat csr"])
def test_coordinates_against_nonzero(y_shape, x_shape, layout):
    for seed in range(3):
        mask = _mask(y_shape, x_shape, seed)
        dense = torch.from_numpy(mask)
        if layout == "dense":
            pattern = dense
        elif layout == "coo":
            pattern = dense.to_sparse()
        elif layout == "coo with False values":  # explicit False entries are not entries
            every = np.argwhere(np.ones(mask.shape, dtype=bool)).T.copy()
            pattern = torch.sparse_coo_tensor(torch.from_numpy(every).reshape(mask.ndim, -1),
                                              dense.reshape(-1), mask.shape,
                                              check_invariants=True).coalesce()
        else:
            pattern = dense.reshape(math.prod(y_shape), math.prod(x_shape)).to_sparse_csr()
        before = (pattern.indices().clone() if pattern.layout == torch.sparse_coo else None)
        co = coordinates(pattern, x_shape)
        _check(co, mask, y_shape, x_shape)
        if before is not None:  # the caller's pattern is left as it was
            assert torch.equal(pattern.indices(), before)


def test_coo_flagged_coalesced_out_of_order_and_repeated():
    """A COO pattern built with ``is_coalesced=True`` whose indices are out of order and
    repeated: sorted and made unique all the same."""
    mask = _mask((4, 3), (5,), 3)
    rows, cols = np.nonzero(mask.reshape(12, 5))
    order = np.random.default_rng(0).permutation(rows.size)
    idx = np.stack([rows[order], cols[order]])
    idx = np.concatenate([idx, idx[:, :3]], axis=1)  # three entries twice
    pattern = torch.sparse_coo_tensor(torch.from_numpy(idx), torch.ones(idx.shape[1],
                                      dtype=torch.bool), (12, 5), is_coalesced=True,
                                      check_invariants=False)
    _check(coordinates(pattern, (5,)), mask, (4, 3), (5,))


def test_csr_columns_out_of_order():
    mask = _mask((6,), (7,), 4)
    csr = torch.from_numpy(mask).to_sparse_csr()
    crow, col = csr.crow_indices(), csr.col_indices().clone()
    for i in range(6):  # reverse each row's columns
        a, b = int(crow[i]), int(crow[i + 1])
        col[a:b] = col[a:b].flip(0)
    pattern = torch.sparse_csr_tensor(crow, col, csr.values(), (6, 7), check_invariants=False)
    _check(coordinates(pattern), mask, (6,), (7,))


def test_flat_pattern_with_x_shape():
    mask = _mask((5,), (2, 3), 5)
    flat = torch.from_numpy(mask.reshape(5, 6))
    for pattern in (flat, flat.to_sparse()):
        co = coordinates(pattern, (2, 3))
        _check(co, mask, (5,), (2, 3))
        assert co.y_shape is None and co.x_shape == (2, 3)


@pytest.mark.parametrize("layout", ["dense", "coo"])
def test_all_false_is_refused(layout):
    pattern = torch.zeros(3, 4, dtype=torch.bool)
    if layout == "coo":
        pattern = pattern.to_sparse()
    with pytest.raises(ValueError, match="all False"):
        coordinates(pattern)
