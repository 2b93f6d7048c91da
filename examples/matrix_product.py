"""``torch.autograd.backward`` on a matrix product.

Each one-hot ``gradient`` picks a row of the Jacobian J.

Run: python examples/matrix_product.py
(the page docs/tutorial/matrix-product.md runs these)
"""

from __future__ import annotations

import numpy as np
import torch

import gradarg

X = [[2.0, 1.0]]
M = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
GRADIENTS = {
    "[[1, 0]]": [[1.0, 0.0]],
    "[[0, 1]]": [[0.0, 1.0]],
    "[[1, 1]]": [[1.0, 1.0]],
}


def matmul(x):
    return x @ M


def grad_for(gradient):
    """``x.grad`` after ``torch.autograd.backward(y, grad_tensors=gradient)``,
    for ``y = x @ M``."""
    x = torch.tensor(X, requires_grad=True)
    y = matmul(x)
    torch.autograd.backward(y, grad_tensors=torch.tensor(gradient))
    return x.grad


def jacobian_numpy():
    """``∂y[0,k]/∂x[0,l] = M[l,k]``: shape (1, 2, 1, 2), written in NumPy."""
    return M.numpy().T.reshape(1, 2, 1, 2).copy()


def main():
    f = gradarg.fmt
    x = torch.tensor(X)
    print(f"x = {f(x)}, M = {f(M)}, y = x @ M = {f(matmul(x))}")
    J = gradarg.jacobian(matmul, x)
    print(f"J has shape {tuple(J.shape)}; as a matrix {f(J.reshape(2, 2))}")
    for label, g in GRADIENTS.items():
        print(f"gradient={label} -> x.grad = {f(grad_for(g))}")
    print(
        "NumPy check:",
        np.allclose(
            sum(grad_for(g) for g in list(GRADIENTS.values())[:2]).numpy(),
            grad_for([[1.0, 1.0]]),
        ),
    )


if __name__ == "__main__":
    main()
