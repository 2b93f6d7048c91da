"""Why ``backward`` takes a vector and not the Jacobian.

Four situations where ``v`` means something.

Run: python examples/why_a_vector.py
(the page docs/tutorial/why-a-vector.md runs these)
"""

from __future__ import annotations

import torch

import gradarg


def ones_is_sum(x_values=(1.0, 2.0, 3.0)):
    """``y.backward(torch.ones_like(y))`` equals ``y.sum().backward()``.

    A vector of ones is ∂(Σy)/∂y.
    """
    grads = []
    for use_sum in (False, True):
        x = torch.tensor(x_values, requires_grad=True)
        y = x**2
        (y.sum().backward() if use_sum else y.backward(torch.ones_like(y)))
        grads.append(x.grad)
    return grads[0], grads[1]


def two_losses(x):
    """Two loss components of one parameter vector: a fit term and a penalty."""
    target = torch.tensor([1.0, -1.0])
    return torch.stack([((x - target) ** 2).sum(), x.abs().sum()])


def weighted_losses(weights=(0.2, 0.8), x_values=(0.5, 2.0)):
    """``losses.backward(w)`` equals ``(w · losses).backward()``.

    ``v`` weights the loss components.
    """
    w = torch.tensor(weights)
    out = []
    for combine in (False, True):
        x = torch.tensor(x_values, requires_grad=True)
        losses = two_losses(x)
        (
            (w * losses).sum().backward()
            if combine
            else losses.backward(gradient=w)
        )
        out.append(x.grad)
    return out[0], out[1]


def F1(x):
    """First map R² → R²: ``[x1*x2, x1 + x2**2]``."""
    return torch.stack([x[0] * x[1], x[0] + x[1] ** 2])


def F2(u):
    """Second map R² → R²: ``[sin(u1), u1*u2]``."""
    return torch.stack([torch.sin(u[0]), u[0] * u[1]])


def two_map_chain(x_values=(1.0, 2.0), v_values=(1.0, -1.0)):
    """``z = F2(F1(x))``: each Jacobian, and ``v`` carried backward one
    Jacobian at a time."""
    x0 = torch.tensor(x_values, dtype=torch.float64)
    v = torch.tensor(v_values, dtype=torch.float64)
    u0 = F1(x0)
    J1 = gradarg.jacobian(F1, x0)
    J2 = gradarg.jacobian(F2, u0)
    w = v @ J2  # upstream gradient arriving at u: vᵀ J2
    by_hand = w @ J1  # then (vᵀ J2) J1
    x = x0.clone().requires_grad_(True)
    F2(F1(x)).backward(gradient=v)
    return {
        "J1": J1,
        "J2": J2,
        "v": v,
        "w": w,
        "by_hand": by_hand,
        "x.grad": x.grad,
    }


def doubling(seed=0, v_values=(0.1, 1.0, 0.0001)):
    """PyTorch's tutorial example: double ``x`` until the norm reaches 1000,
    then ``backward(v)``.

    Returns ``x``, ``y``, the number ``k`` of doublings and ``x.grad``;
    ``y = 2**k x`` so
    ``J = 2**k I`` and ``x.grad = 2**k v``.
    """
    torch.manual_seed(seed)
    x = torch.randn(3, requires_grad=True)
    y = x * 2
    k = 1
    while y.data.norm() < 1000:
        y = y * 2
        k += 1
    v = torch.tensor(v_values, dtype=torch.float32)
    y.backward(v)
    return x, y, k, v, x.grad


def main():
    f = gradarg.fmt
    a, b = ones_is_sum()
    print(f"y.backward(ones) -> {f(a)};  y.sum().backward() -> {f(b)}")
    a, b = weighted_losses()
    print(
        f"losses.backward([0.2, 0.8]) -> {f(a)};  "
        f"(0.2 L1 + 0.8 L2).backward() -> {f(b)}"
    )
    r = two_map_chain()
    print(f"J1 = {f(r['J1'])}, J2 = {f(r['J2'])}")
    print(
        f"vᵀJ2 = {f(r['w'])}, (vᵀJ2)J1 = {f(r['by_hand'])}, "
        f"x.grad = {f(r['x.grad'])}"
    )
    _, _, k, v, g = doubling()
    print(
        f"doubling: k = {k}, x.grad = {f(g)} = 2**{k} * {f(v)} = {f(2**k * v)}"
    )


if __name__ == "__main__":
    main()
