"""Test problems shared by the sparse tests and benchmarks (benchmarks/sparse.py, detect.py,
coloring.py put this folder on their path): stencils, the Brusselator, a banded energy.

Each is a plain function of a tensor, written as a user would, with a known sparsity pattern.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def stencil_1d(u: torch.Tensor) -> torch.Tensor:
    """f(u)_i = u_{i-1} - 2 u_i + u_{i+1} + sin(u_i), zero boundary values: tridiagonal J."""
    up = F.pad(u, (1, 1))
    return up[:-2] - 2 * u + up[2:] + torch.sin(u)


def stencil_2d(u: torch.Tensor) -> torch.Tensor:
    """5-point Laplacian on an s × s grid plus u³, zero boundary values."""
    up = F.pad(u, (1, 1, 1, 1))
    return up[:-2, 1:-1] + up[2:, 1:-1] + up[1:-1, :-2] + up[1:-1, 2:] - 4 * u + u**3


def periodic_laplacian(a: torch.Tensor) -> torch.Tensor:
    """5-point Laplacian of a 2-D grid with periodic boundaries."""
    return sum(torch.roll(a, s, d) for s in (1, -1) for d in (0, 1)) - 4 * a


def brusselator(z: torch.Tensor) -> torch.Tensor:
    """The 2-D Brusselator's right-hand side; ``z`` of shape (2, s, s): species u and v."""
    u, v = z[0], z[1]
    lap = periodic_laplacian
    return torch.stack([1 + u * u * v - 4.4 * u + 3.4 * lap(u), 3.4 * u - u * u * v + 3.4 * lap(v)])


def band_energy(half: int):
    """A scalar energy whose Hessian is banded with ``half`` off-diagonal bands each side."""

    def energy(u: torch.Tensor) -> torch.Tensor:
        total = (u**4).sum() + torch.cos(u).sum()
        for k in range(1, half + 1):
            total = total + torch.sin(u[k:] * u[:-k]).sum() / k
        return total

    return energy
