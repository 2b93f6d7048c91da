"""A scalar chain: a = 5, b = a*a, c = 8*b, d = log(c).

The same a.grad comes out of every node, given the right upstream gradient.

Run: python examples/scalar_chain.py
(the page docs/tutorial/scalar-chain.md runs these functions)
"""

from __future__ import annotations

import torch


def chain(a_value):
    """Build ``a -> b = a*a -> c = 8*b -> d = log(c)`` on a fresh leaf ``a``.

    Returns all four nodes in a dict.
    """
    a = torch.tensor(a_value, requires_grad=True)
    b = a * a
    c = 8 * b
    d = torch.log(c)
    return {"a": a, "b": b, "c": c, "d": d}


def upstream_gradients(a_value):
    """The upstream gradient ``∂L/∂node`` of each node, for ``L = d``
    (or ``L = sum(d)``).

    Derived by hand from the chain rule and evaluated at the live values:
    ``∂L/∂d = 1``, ``∂L/∂c = 1/c`` (since d = log c),
    ``∂L/∂b = 8/c`` (since c = 8 b).
    """
    with torch.no_grad():
        c = chain(a_value)["c"].detach()
    return {"d": torch.ones_like(c), "c": 1 / c, "b": 8 / c}


def grad_from(node, a_value, gradient=None):
    """``a.grad`` after ``node.backward(gradient=...)`` on a fresh graph."""
    nodes = chain(a_value)
    nodes[node].backward(gradient=gradient)
    return nodes["a"].grad


def vector_chain(a_values):
    """The vector case: ``e = sum(log(8*a*a))``.

    ``a.grad`` from ``e``, and from d, c, b with
    their upstream gradients (ones, 1/c_i, 8/c_i)."""
    nodes = chain(a_values)
    e = nodes["d"].sum()
    e.backward()
    grads = {"e": nodes["a"].grad}
    for node, v in upstream_gradients(a_values).items():
        grads[node] = grad_from(node, a_values, gradient=v)
    return grads


def analytic_grad(a_values):
    """``d/da log(8 a²) = 2/a``: the answer derived on paper."""
    return 2 / torch.tensor(a_values)


def main():
    a0 = 5.0
    up = upstream_gradients(a0)
    print(f"scalar chain at a = {a0}: c = {chain(a0)['c'].item():g}")
    for node, gradient in [("d", None), ("c", up["c"]), ("b", up["b"])]:
        g = grad_from(node, a0, gradient).item()
        arg = "" if gradient is None else f"gradient={gradient.item():.4g}"
        call = f"{node}.backward({arg})"
        print(f"{call:<29} -> a.grad = {g:.4g}")
    a = [1.0, 2.0, 3.0]
    for node, g in vector_chain(a).items():
        rounded = [round(x, 4) for x in g.tolist()]
        print(f"vector chain, from {node}: a.grad = {rounded}")
    rounded = [round(x, 4) for x in analytic_grad(a).tolist()]
    print(f"analytic 2/a                 = {rounded}")


if __name__ == "__main__":
    main()
