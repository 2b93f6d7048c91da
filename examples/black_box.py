"""Upstream gradients from a black box: data-free model extraction.

In Data-Free Model Extraction (Truong et al., CVPR 2021, arXiv:2011.14779) a
generator ``G`` produces inputs ``x = G(z)`` for a *black-box* teacher ``T``
(we may only query it) and a student ``S``. The generator is trained to make
teacher and student disagree, ``L(x) = ||T(x) - S(x)||_1``, but autograd
cannot go through ``T``. The paper estimates ``∂L/∂x`` from queries only
(forward differences along random unit directions) and hands that estimate to
``x.backward(upstream)``, which carries it through the generator: the
``gradient`` argument used for what it is, an upstream gradient arriving from
outside the graph.

The teacher here is a real model: a small MLP trained, when the script runs,
on scikit-learn's bundled handwritten digits (8×8 images, no download).

Run: python examples/black_box.py
(the page docs/tutorial/black-box.md runs these functions)
"""

from __future__ import annotations

import torch
from sklearn.datasets import load_digits
from torch import nn

import gradarg

DTYPE = torch.float64
BATCH, Z_DIM, X_DIM, CLASSES = 4, 8, 64, 10  # x: one 8×8 image, flattened


def mlp(n_in, hidden, n_out):
    """``Linear -> tanh -> Linear``, in float64."""
    layers = [nn.Linear(n_in, hidden), nn.Tanh(), nn.Linear(hidden, n_out)]
    return nn.Sequential(*layers).to(DTYPE)


def digits(seed=0, n_train=1200):
    """scikit-learn's 1797 digit images, pixels scaled to [0, 1], split at
    random into ``n_train`` training and the rest test images."""
    images, labels = load_digits(return_X_y=True)
    x = torch.tensor(images / 16.0, dtype=DTYPE)
    y = torch.tensor(labels)
    gen = torch.Generator().manual_seed(seed)
    order = torch.randperm(len(y), generator=gen)
    train, test = order[:n_train], order[n_train:]
    return (x[train], y[train]), (x[test], y[test])


def train_teacher(seed=0, steps=40):
    """The model behind the black box: an MLP trained on the digits.

    Full-batch Adam on the cross-entropy; returns the model and its accuracy
    on the held-out test images.
    """
    (x_train, y_train), (x_test, y_test) = digits(seed)
    torch.manual_seed(seed)
    teacher = mlp(X_DIM, 32, CLASSES)
    opt = torch.optim.Adam(teacher.parameters(), lr=0.05)
    for _ in range(steps):
        opt.zero_grad()
        nn.functional.cross_entropy(teacher(x_train), y_train).backward()
        opt.step()
    teacher.requires_grad_(False)  # from now on it is only queried
    with torch.no_grad():
        hits = teacher(x_test).argmax(dim=1) == y_test
    return teacher, hits.double().mean().item()


def make_models(seed=0):
    """A generator, a trained teacher (to be queried only) and a student.

    Returns ``(generator, teacher, student, teacher_accuracy)``.
    """
    teacher, accuracy = train_teacher(seed)
    torch.manual_seed(seed + 1)
    generator = mlp(Z_DIM, 32, X_DIM)
    student = mlp(X_DIM, 32, CLASSES)
    return generator, teacher, student, accuracy


def query(teacher, x):
    """The black box: logits for a batch of inputs, no graph, no gradient."""
    with torch.no_grad():
        return teacher(x)


def disagreement(teacher_logits, student_logits):
    """Per-sample ``L1`` disagreement between teacher and student logits."""
    return (teacher_logits - student_logits).abs().sum(dim=-1)


def estimate_upstream(teacher, student, x, queries, eps=1e-4, seed=1):
    """Zeroth-order estimate of ``∂L/∂x`` from ``queries`` random directions.

    ``ĝ = d/m Σ_i [L(x + eps u_i) - L(x)] / eps · u_i``, with ``u_i``
    uniform on the unit sphere and ``d`` the input dimension
    (arXiv:2011.14779, section 3.2). Costs ``queries + 1`` queries of the
    teacher per sample.
    """
    gen = torch.Generator().manual_seed(seed)
    d = x.shape[-1]
    with torch.no_grad():
        base = disagreement(query(teacher, x), student(x))
        est = torch.zeros_like(x)
        for _ in range(queries):
            u = torch.randn(x.shape, generator=gen, dtype=x.dtype)
            u = u / u.norm(dim=-1, keepdim=True)
            moved = x + eps * u
            change = disagreement(query(teacher, moved), student(moved)) - base
            est += (change / eps)[:, None] * u
    return d / queries * est


def true_upstream(teacher, student, x):
    """``∂L/∂x`` by autograd through the teacher: there only because we
    built the teacher ourselves."""
    x = x.detach().requires_grad_(True)
    disagreement(teacher(x), student(x)).sum().backward()
    return x.grad


def generator_grads(generator, z, upstream):
    """Generator parameter gradients after ``gen_out.backward(upstream)``."""
    generator.zero_grad(set_to_none=True)
    gen_out = generator(z)
    gen_out.backward(upstream)
    return torch.cat([p.grad.reshape(-1) for p in generator.parameters()])


def cosine(a, b):
    a, b = a.reshape(-1), b.reshape(-1)
    return float(torch.nn.functional.cosine_similarity(a, b, dim=0))


def run(query_counts=(1, 4, 16, 64, 256, 1024), seed=0):
    """Quality of the estimate against the number of queries: on the upstream
    gradient itself and on the generator's parameter gradients."""
    generator, teacher, student, accuracy = make_models(seed)
    z = torch.randn(BATCH, Z_DIM, dtype=DTYPE)
    with torch.no_grad():
        x = generator(z)
    exact = true_upstream(teacher, student, x)
    exact_g = generator_grads(generator, z, exact)
    # End-to-end autograd through generator and teacher: the same gradients.
    generator.zero_grad(set_to_none=True)
    gx = generator(z)
    disagreement(teacher(gx), student(gx)).sum().backward()
    end_to_end = torch.cat([p.grad.reshape(-1) for p in generator.parameters()])
    rows = []
    for q in query_counts:
        approx = estimate_upstream(teacher, student, x, q)
        approx_g = generator_grads(generator, z, approx)
        rows.append({
            "queries": q,
            "cos_upstream": cosine(approx, exact),
            "cos_generator": cosine(approx_g, exact_g),
            "rel_error": float((approx - exact).norm() / exact.norm()),
        })
    return {
        "x": x, "z": z, "exact": exact, "exact_g": exact_g,
        "end_to_end": end_to_end, "rows": rows,
        "generator": generator, "teacher": teacher, "student": student,
        "teacher_accuracy": accuracy,
    }


def main():
    r = run()
    print(f"teacher accuracy on held-out digits: {r['teacher_accuracy']:.3f}")
    diff = float((r["exact_g"] - r["end_to_end"]).abs().max())
    print(f"gen_out.backward(true ∂L/∂x) vs end-to-end autograd: "
          f"max |diff| = {diff:.1e}")
    rows = [
        [row["queries"], row["cos_upstream"], row["cos_generator"],
         row["rel_error"]]
        for row in r["rows"]
    ]
    headers = ["queries per sample", "cosine(ĝ, ∂L/∂x)",
               "cosine of generator grads", "relative error"]
    print(gradarg.markdown_table(rows, headers))


if __name__ == "__main__":
    main()
