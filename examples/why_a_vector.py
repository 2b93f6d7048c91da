"""Why `backward` takes a vector: what `v` means

The code of the page docs/tutorial/why-a-vector.md, cell by cell,
generated from that page by docs/tools/visible_code.py
(edit the page, then run `python docs/tools/visible_code.py --write`).

Run: python examples/why_a_vector.py
"""

# %%
import torch

import gradarg

torch.manual_seed(0)               # the same random numbers on every run
x = torch.randn(3, requires_grad=True)
x.sum().backward()                 # a scalar: backward() means gradient=1
print(f"x = {gradarg.fmt(x)}, after x.sum().backward(): "
      f"x.grad = {gradarg.fmt(x.grad)}")

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x**2
y.backward(torch.ones_like(y))
x_sum = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
(x_sum**2).sum().backward()
print(f"y.backward(ones): {gradarg.fmt(x.grad)}   "
      f"y.sum().backward(): {gradarg.fmt(x_sum.grad)}")

# %%
t = torch.tensor([1.0, -1.0])


def two_losses(x):
    return torch.stack([((x - t) ** 2).sum(), x.abs().sum()])   # [L1, L2]


w = torch.tensor([0.2, 0.8])
x = torch.tensor([0.5, 2.0], requires_grad=True)
losses = two_losses(x)
losses.backward(gradient=w)
x2 = torch.tensor([0.5, 2.0], requires_grad=True)
(w * two_losses(x2)).sum().backward()
print(f"x = {gradarg.fmt(x)}, t = {gradarg.fmt(t)}, "
      f"[L1, L2] = {gradarg.fmt(losses)}")
print(f"losses.backward(w): {gradarg.fmt(x.grad)}   "
      f"(0.2*L1 + 0.8*L2).backward(): {gradarg.fmt(x2.grad)}")

# %%
def F1(x):
    return torch.stack([x[0] * x[1], x[0] + x[1] ** 2])


def F2(u):
    return torch.stack([torch.sin(u[0]), u[0] * u[1]])


x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
v = torch.tensor([1.0, -1.0], dtype=torch.float64)
u = F1(x)
z = F2(u)
z.backward(gradient=v)
J1 = gradarg.jacobian(F1, x.detach())
J2 = gradarg.jacobian(F2, u.detach())
print(f"vᵀJ2 = {gradarg.fmt(v @ J2)}, (vᵀJ2)J1 = {gradarg.fmt(v @ J2 @ J1)}")
print(f"x.grad = {gradarg.fmt(x.grad)}")

# %%
x = torch.randn(3, requires_grad=True)
y, k = x * 2, 1
while y.norm() < 1000:
    y, k = y * 2, k + 1
v = torch.tensor([0.1, 1.0, 0.0001])
y.backward(v)
print(f"k = {k}, 2**k = {2**k}, x.grad = {gradarg.fmt(x.grad)} = 2**k v")
