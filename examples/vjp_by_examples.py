"""vᵀJ by examples, each checked against a Jacobian written down in NumPy.

Run: python examples/vjp_by_examples.py
(the page docs/tutorial/vjp-by-examples.md runs these)
"""

from __future__ import annotations

import numpy as np
import torch

import gradarg


def square_at_one(gradient=None):
    """``y = x**2`` at ``x = 1``: ``x.grad`` after ``y.backward(gradient)``.

    Here J = [2x] = [2].
    """
    x = torch.tensor(1.0, requires_grad=True)
    y = x**2
    y.backward(gradient=None if gradient is None else torch.tensor(gradient))
    return x.grad


def sum_of_two(gradient=None):
    """``y = x1 + x2`` at ``[1, 2]``: a scalar output, J = [1, 1]."""
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x[0] + x[1]
    y.backward(gradient=None if gradient is None else torch.tensor(gradient))
    return x.grad


def vec_fn(x):
    """R² → R³: ``y = [x1*x2, x1**2 + 3*x2, exp(x2)]``."""
    return torch.stack([x[0] * x[1], x[0] ** 2 + 3 * x[1], torch.exp(x[1])])


def vec_jacobian_numpy(x):
    """The 3×2 Jacobian of :func:`vec_fn`, written down by hand."""
    x1, x2 = np.asarray(x, dtype=np.float64)
    return np.array([[x2, x1], [2 * x1, 3.0], [0.0, np.exp(x2)]])


W = torch.tensor([[1.0, -1.0], [2.0, 0.5], [0.0, 3.0]], dtype=torch.float64)


def mat_fn(X):
    """R^{2×3} → R^{2×2}: ``Y = X @ W`` with a fixed 3×2 ``W``."""
    return X @ W


def mat_jacobian_numpy(x_shape=(2, 3)):
    """``∂Y[i,k]/∂X[j,l] = δ_ij W[l,k]``, shape ``(2, 2) + (2, 3)``."""
    return np.einsum("ij,lk->ikjl", np.eye(x_shape[0]), W.numpy())


def vector_case():
    x = torch.tensor([0.5, -1.0], dtype=torch.float64)
    v = torch.tensor([1.0, 0.5, 2.0], dtype=torch.float64)
    return (
        x,
        v,
        gradarg.compare_vjp(vec_fn, x, v, reference=vec_jacobian_numpy(x)),
    )


def matrix_case():
    X = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=torch.float64)
    V = torch.tensor([[1.0, 0.0], [0.5, -2.0]], dtype=torch.float64)
    return (
        X,
        V,
        gradarg.compare_vjp(
            mat_fn, X, V, reference=mat_jacobian_numpy(X.shape)
        ),
    )


def main():
    f = gradarg.fmt
    print(
        f"y = x**2 at 1: x.grad = {f(square_at_one())}; with gradient=100: "
        f"{f(square_at_one(100.0))}"
    )
    print(
        f"y = x1 + x2 at [1, 2]: x.grad = {f(sum_of_two())}; "
        f"with gradient=100: {f(sum_of_two(100.0))}"
    )
    for name, case in [
        ("vector -> vector", vector_case),
        ("matrix -> matrix", matrix_case),
    ]:
        x, v, report = case()
        jac = gradarg.jacobian(vec_fn if x.dim() == 1 else mat_fn, x)
        print(
            f"\n{name}: x.shape {tuple(x.shape)}, y.shape {tuple(v.shape)}, "
            f"J.shape {tuple(jac.shape)}"
        )
        print(report)


if __name__ == "__main__":
    main()
