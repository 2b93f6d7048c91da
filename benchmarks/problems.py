"""The seven functions of the sparse benchmarks, each written once for torch and jax.numpy.

``PROBLEMS`` lists ``(name, kind, build, x)``: ``kind`` is ``"jacobian"`` or ``"hessian"``,
``build(lib)`` returns the function written with ``torch`` (``lib is torch``) or with
``jax.numpy`` (anything else: JAX is imported only then), ``x`` a float64 NumPy input.
:func:`problem` gives the torch side with a fresh tensor.  Used by
``benchmarks/asdex_side_by_side.py`` (both sides), ``benchmarks/first_call.py`` and
``tests/sparse/test_pycolor.py`` (torch only): a 1-D Burgers residual, a Gray–Scott
reaction–diffusion step on a periodic grid, the chained Rosenbrock plus Powell's singular
function (a Hessian), a per-sample MLP, the minimal-surface energy (a Hessian), a tridiagonal
residual with a mean row (a dense row), and the same with a dense column.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

__all__ = ["PROBLEMS", "problem"]


def _jnp():
    import jax.numpy as jnp

    return jnp


def burgers(lib, n=2000):
    h, nu = 1.0 / (n + 1), 0.01

    def f(u):
        up = F.pad(u, (1, 1)) if lib is torch else _jnp().pad(u, (1, 1))
        return -u * (up[2:] - up[:-2]) / (2 * h) + nu * (up[2:] - 2 * u + up[:-2]) / h**2

    return f


def gray_scott(lib):
    du, dv, feed, kill = 0.16, 0.08, 0.035, 0.065

    def lap(a):
        roll = torch.roll if lib is torch else _jnp().roll
        return sum(roll(a, s, d) for s in (1, -1) for d in (0, 1)) - 4 * a

    def f(z):
        u, v = z[0], z[1]
        uvv = u * v * v
        parts = [du * lap(u) - uvv + feed * (1 - u), dv * lap(v) + uvv - (feed + kill) * v]
        return torch.stack(parts) if lib is torch else _jnp().stack(parts)

    return f


def rosenbrock_powell(lib):
    def f(x):
        rosen = (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()
        q = x.reshape(-1, 4)
        a, b, c, d = q[:, 0], q[:, 1], q[:, 2], q[:, 3]
        powell = ((a + 10 * b) ** 2 + 5 * (c - d) ** 2 + (b - 2 * c) ** 4
                  + 10 * (a - d) ** 4).sum()
        return rosen + powell

    return f


_W = np.random.default_rng(0)
W1, B1 = _W.standard_normal((8, 16)) / 3, _W.standard_normal(16) / 3
W2, B2 = _W.standard_normal((16, 4)) / 4, _W.standard_normal(4) / 4


def mlp(lib):
    if lib is torch:
        w1, b1, w2, b2 = (torch.from_numpy(a) for a in (W1, B1, W2, B2))
        return lambda x: torch.tanh(x @ w1 + b1) @ w2 + b2
    w1, b1, w2, b2 = (_jnp().asarray(a) for a in (W1, B1, W2, B2))
    return lambda x: _jnp().tanh(x @ w1 + b1) @ w2 + b2


def minimal_surface(lib, s=64):
    h = 1.0 / (s - 1)

    def f(u):
        dx = (u[1:, :-1] - u[:-1, :-1]) / h
        dy = (u[:-1, 1:] - u[:-1, :-1]) / h
        root = torch.sqrt if lib is torch else _jnp().sqrt
        return (root(1 + dx**2 + dy**2) * h * h).sum()

    return f


def tridiagonal_mean(lib, dense_column=False):
    def f(u):
        up = F.pad(u, (1, 1)) if lib is torch else _jnp().pad(u, (1, 1))
        exp = torch.exp if lib is torch else _jnp().exp
        r = up[:-2] - 2 * u + up[2:] - 1e-3 * exp(u)
        if dense_column:
            r = r + 0.1 * u[0] ** 2
        mean = u.mean().reshape(1)
        return torch.cat([r, mean]) if lib is torch else _jnp().concatenate([r, mean])

    return f


def _x(shape, seed=1):
    return np.random.default_rng(seed).uniform(-0.5, 0.5, shape)


PROBLEMS = [  # name, kind, builder, x
    ("Burgers n=2000", "jacobian", burgers, _x(2000)),
    ("Gray-Scott 2x48x48", "jacobian", gray_scott, _x((2, 48, 48))),
    ("Rosenbrock+Powell n=5000 (H)", "hessian", rosenbrock_powell, _x(5000)),
    ("per-sample MLP B=256", "jacobian", mlp, _x((256, 8))),
    ("minimal surface 64x64 (H)", "hessian", minimal_surface, _x((64, 64))),
    ("tridiagonal + mean row n=3000", "jacobian", tridiagonal_mean, _x(3000)),
    ("+ dense column", "jacobian", lambda lib: tridiagonal_mean(lib, True), _x(3000)),
]


def problem(i: int):
    """``(name, kind, f, x)`` of problem ``i``, torch side: ``x`` a fresh float64 tensor."""
    name, kind, build, x = PROBLEMS[i]
    return name, kind, build(torch), torch.from_numpy(np.array(x, dtype=np.float64))
