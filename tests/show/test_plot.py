"""jacobian_heatmap draws the m × n matrix of a Jacobian, signs centred on zero, and labels its
axes without index letters (a page's title may use i, k, j, l for the tensor's indices)."""

from __future__ import annotations

import re

import pytest
import torch

pytest.importorskip("matplotlib")
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from gradarg.plot import jacobian_heatmap


@pytest.fixture
def matmul_jacobian():
    # Y = X @ W with X (2, 3), W (3, 2): J[i, k, j, l] = δ_ij W[l, k], written out by hand
    W = torch.tensor([[1.0, -2.0], [0.5, 3.0], [-1.5, 0.25]], dtype=torch.float64)
    J = torch.zeros(2, 2, 2, 3, dtype=torch.float64)
    for i in range(2):
        for k in range(2):
            for l in range(3):
                J[i, k, i, l] = W[l, k]
    return J, W


def test_cells_are_the_row_major_matrix(matmul_jacobian):
    J, W = matmul_jacobian
    ax = jacobian_heatmap(J, (2, 2))
    try:
        image = ax.images[0].get_array()
        assert image.shape == (4, 6)
        # row i*2 + k, column j*3 + l
        assert image[1, 2] == W[2, 1]          # ∂Y[0,1] / ∂X[0,2]
        assert image[2, 3] == W[0, 0]          # ∂Y[1,0] / ∂X[1,0]
        assert image[0, 4] == 0                # row 0 of Y ignores row 1 of X
        low, high = ax.images[0].get_clim()
        assert low == -high == -3.0            # centred on zero at the largest |entry|
    finally:
        plt.close(ax.figure)


def test_axis_labels_give_sizes_and_no_index_letters(matmul_jacobian):
    J, _ = matmul_jacobian
    ax = jacobian_heatmap(J, (2, 2), title="∂Y[i,k] / ∂X[j,l]")
    try:
        xlabel, ylabel = ax.get_xlabel(), ax.get_ylabel()
        assert "(6)" in xlabel and "input" in xlabel
        assert "(4)" in ylabel and "output" in ylabel
        for label in (xlabel, ylabel):
            assert not re.search(r"\b[ijkl]\b", label), label
    finally:
        plt.close(ax.figure)


def test_small_matrices_are_annotated_large_ones_are_not():
    small = jacobian_heatmap(torch.eye(3), (3,))
    large = jacobian_heatmap(torch.eye(9), (9,))
    try:
        assert len(small.texts) == 9
        assert len(large.texts) == 0
    finally:
        plt.close(small.figure)
        plt.close(large.figure)


def test_a_complex_jacobian_is_refused_not_drawn_as_its_real_part():
    pytest.importorskip("matplotlib")
    from gradarg.show.plot import jacobian_heatmap

    with pytest.raises(TypeError, match=r"jac must be a real Jacobian, got torch.complex64"):
        jacobian_heatmap(torch.eye(3) * 1j, (3,))
    with pytest.raises(ValueError, match=r"does not start with out_shape"):
        jacobian_heatmap(torch.eye(3), (4,))
