"""What `backward(gradient=v)` computes, checked by hand

The code of the page docs/tutorial/vjp-by-examples.md, cell by cell,
generated from that page by docs/tools/visible_code.py
(edit the page, then run `python docs/tools/visible_code.py --write`).

Run: python examples/vjp_by_examples.py
"""

# %%
import numpy as np
import torch

import gradarg

for v in (None, 100.0):           # None: backward() with no argument, v = 1
    vT = np.array([[1.0 if v is None else v]])    # v as a 1×1 row
    x = torch.tensor(1.0, requires_grad=True)
    y = x**2
    returned = y.backward(gradient=None if v is None else torch.tensor(v))
    J = np.array([[2 * 1.0]])                     # dy/dx = 2x at x = 1
    print(f"y = x**2, v = {v}: returned {returned}, "
          f"x.grad = {gradarg.fmt(x.grad)}, vᵀ·J = {vT @ J}")
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x.sum()
    y.backward(gradient=None if v is None else torch.tensor(v))
    J = np.array([[1.0, 1.0]])                    # dy/dx1 = dy/dx2 = 1
    print(f"y = sum(x), v = {v}: "
          f"x.grad = {gradarg.fmt(x.grad)}, vᵀ·J = {vT @ J}")

# %%
def vec_fn(x):
    return torch.stack([x[0] * x[1], x[0] ** 2 + 3 * x[1], torch.exp(x[1])])


def vec_jacobian_numpy(x):
    """The 3×2 Jacobian of vec_fn, written down by hand."""
    x1, x2 = np.asarray(x, dtype=np.float64)
    return np.array([[x2, x1], [2 * x1, 3.0], [0.0, np.exp(x2)]])


x = torch.tensor([0.5, -1.0], dtype=torch.float64, requires_grad=True)
v = torch.tensor([1.0, 0.5, 2.0], dtype=torch.float64)
vec_fn(x).backward(gradient=v)
by_hand = v.numpy() @ vec_jacobian_numpy(x.detach())
print(f"x = {gradarg.fmt(x)}, v = {gradarg.fmt(v)}")
print(f"x.grad = {gradarg.fmt(x.grad)}  vᵀJ by hand = {gradarg.fmt(by_hand)}")
# the same comparison in one call (its own backward pass; x is left untouched)
J_by_hand = vec_jacobian_numpy(x.detach())
report = gradarg.compare_vjp(vec_fn, x.detach(), v, reference=J_by_hand)
print(f"compare_vjp: agree {report.agree}, largest difference "
      f"{report.max_abs_error:.1e}")

# %%
W = torch.tensor([[1.0, -1.0], [2.0, 0.5], [0.0, 3.0]], dtype=torch.float64)
X = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=torch.float64,
                 requires_grad=True)
V = torch.tensor([[1.0, 0.0], [0.5, -2.0]], dtype=torch.float64)
(X @ W).backward(gradient=V)
J = gradarg.jacobian(lambda t: t @ W, X.detach())
print(f"J.shape = {tuple(J.shape)}   X.grad = {gradarg.fmt(X.grad)}")
