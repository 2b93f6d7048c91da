"""Upstream gradients from a black box

The code of the page docs/tutorial/black-box.md, cell by cell,
generated from that page by docs/tools/visible_code.py
(edit the page, then run `python docs/tools/visible_code.py --write`).

Run: python examples/black_box.py
"""

# %%
import torch
from sklearn.datasets import load_digits
from torch import nn

import gradarg

DTYPE = torch.float64


def mlp(n_in, hidden, n_out):
    """Linear -> tanh -> Linear, in float64."""
    return nn.Sequential(nn.Linear(n_in, hidden), nn.Tanh(),
                         nn.Linear(hidden, n_out)).to(DTYPE)


def train_teacher(seed=0, steps=40, n_train=1200):
    """An MLP trained on the digits (full-batch Adam), and its test accuracy."""
    images, labels = load_digits(return_X_y=True)
    x, y = torch.tensor(images / 16.0, dtype=DTYPE), torch.tensor(labels)
    gen = torch.Generator().manual_seed(seed)
    order = torch.randperm(len(y), generator=gen)
    train, test = order[:n_train], order[n_train:]
    torch.manual_seed(seed)
    teacher = mlp(64, 32, 10)
    opt = torch.optim.Adam(teacher.parameters(), lr=0.05)
    for _ in range(steps):
        opt.zero_grad()
        nn.functional.cross_entropy(teacher(x[train]), y[train]).backward()
        opt.step()
    teacher.requires_grad_(False)  # from now on it is only queried
    with torch.no_grad():
        hits = teacher(x[test]).argmax(dim=1) == y[test]
    return teacher, hits.double().mean().item()


def disagreement(teacher_logits, student_logits):
    """Per-sample L1 disagreement between teacher and student logits."""
    return (teacher_logits - student_logits).abs().sum(dim=-1)


teacher, accuracy = train_teacher()
torch.manual_seed(1)
generator, student = mlp(8, 32, 64), mlp(64, 32, 10)
z = torch.randn(4, 8, dtype=DTYPE)   # 4 codes -> 4 images of 64 pixels
print(f"teacher accuracy on held-out digits: {accuracy:.3f}")

# %%
def estimate_upstream(teacher, student, x, queries, eps=1e-4, seed=1):
    """Zeroth-order estimate of dL/dx from `queries` random directions."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        base = disagreement(teacher(x), student(x))
        est = torch.zeros_like(x)
        for _ in range(queries):
            u = torch.randn(x.shape, generator=gen, dtype=x.dtype)
            u = u / u.norm(dim=-1, keepdim=True)
            moved = x + eps * u
            change = disagreement(teacher(moved), student(moved)) - base
            est += (change / eps)[:, None] * u
    return x.shape[-1] / queries * est


def generator_grads(upstream):
    """The generator's parameter gradients after gen_out.backward(upstream)."""
    generator.zero_grad(set_to_none=True)
    gen_out = generator(z)
    gen_out.backward(upstream)
    return torch.cat([p.grad.reshape(-1) for p in generator.parameters()])

# %%
with torch.no_grad():
    x = generator(z)
x_leaf = x.clone().requires_grad_(True)   # the truth: we own the teacher
disagreement(teacher(x_leaf), student(x_leaf)).sum().backward()
exact = x_leaf.grad
cos = nn.functional.cosine_similarity
exact_grads = generator_grads(exact)
for queries in (1, 16, 256, 1024):
    approx = estimate_upstream(teacher, student, x, queries)
    on_x = cos(approx.flatten(), exact.flatten(), 0)
    on_generator = cos(generator_grads(approx), exact_grads, 0)
    print(f"{queries:4d} queries: cosine {on_x:.3f} at x, "
          f"{on_generator:.3f} on the generator")

# %%
upstream = estimate_upstream(teacher, student, x, queries=256)
generator.zero_grad(set_to_none=True)
gen_out = generator(z)
names = {**dict(generator.named_parameters()), "gen_out": gen_out}
trace = gradarg.trace_backward(gen_out, upstream, names=names)  # .backward
trace.draw(source="black box: estimated ∂L/∂x")
