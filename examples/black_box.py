"""Upstream gradients from a black box: the data-free model-extraction setting.

In Data-Free Model Extraction (Truong et al., CVPR 2021, arXiv:2011.14779) a generator ``G``
produces inputs ``x = G(z)`` for a *black-box* teacher ``T`` (we may only query it) and a student
``S``.  The generator is trained to make teacher and student disagree, ``L(x) = ||T(x) - S(x)||_1``,
but autograd cannot go through ``T``.  The paper estimates ``∂L/∂x`` from queries only (forward
differences along random unit directions) and hands that estimate to ``x.backward(upstream)``,
which carries it through the generator: the ``gradient`` argument used for what it is, an upstream
gradient arriving from outside the graph.

Run: python examples/black_box.py   (the page docs/tutorial/black-box.md runs these)
"""

from __future__ import annotations

import torch
from torch import nn

import gradarg

DTYPE = torch.float64
BATCH, Z_DIM, X_DIM, CLASSES = 4, 8, 16, 5


def make_models(seed=0):
    """A generator, a teacher (to be queried only) and a student, seeded."""
    torch.manual_seed(seed)

    def mlp(i, h, o):
        return nn.Sequential(nn.Linear(i, h), nn.Tanh(), nn.Linear(h, o)).to(DTYPE)

    return mlp(Z_DIM, 32, X_DIM), mlp(X_DIM, 32, CLASSES), mlp(X_DIM, 32, CLASSES)


def query(teacher, x):
    """The black box: logits for a batch of inputs, no graph, no gradient."""
    with torch.no_grad():
        return teacher(x)


def disagreement(teacher_logits, student_logits):
    """Per-sample ``L1`` disagreement between teacher and student logits."""
    return (teacher_logits - student_logits).abs().sum(dim=-1)


def estimate_upstream(teacher, student, x, queries, eps=1e-4, seed=1):
    """Zeroth-order estimate of ``∂L/∂x`` from ``queries`` random directions per sample.

    ``ĝ = d/m Σ_i [L(x + eps u_i) - L(x)] / eps · u_i`` with ``u_i`` uniform on the unit sphere
    and ``d`` the input dimension (arXiv:2011.14779, section 3.2). Costs ``queries + 1`` queries
    of the teacher per sample.
    """
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        base = disagreement(query(teacher, x), student(x))
        est = torch.zeros_like(x)
        for _ in range(queries):
            u = torch.randn(x.shape, generator=gen, dtype=x.dtype)
            u = u / u.norm(dim=-1, keepdim=True)
            moved = disagreement(query(teacher, x + eps * u), student(x + eps * u))
            est += ((moved - base) / eps)[:, None] * u
    return X_DIM / queries * est


def true_upstream(teacher, student, x):
    """``∂L/∂x`` by autograd through the teacher: available only because we built it."""
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
    return float(torch.nn.functional.cosine_similarity(a.reshape(-1), b.reshape(-1), dim=0))


def run(query_counts=(1, 4, 16, 64, 256), seed=0):
    """Approximation quality against the number of queries, on the upstream and on G's grads."""
    generator, teacher, student = make_models(seed)
    z = torch.randn(BATCH, Z_DIM, dtype=DTYPE)
    with torch.no_grad():
        x = generator(z)
    exact = true_upstream(teacher, student, x)
    exact_g = generator_grads(generator, z, exact)
    # End-to-end autograd through generator and teacher gives the same generator gradients.
    generator.zero_grad(set_to_none=True)
    gx = generator(z)
    disagreement(teacher(gx), student(gx)).sum().backward()
    end_to_end = torch.cat([p.grad.reshape(-1) for p in generator.parameters()])
    rows = []
    for q in query_counts:
        approx = estimate_upstream(teacher, student, x, q)
        rows.append({
            "queries": q,
            "cos_upstream": cosine(approx, exact),
            "cos_generator": cosine(generator_grads(generator, z, approx), exact_g),
            "rel_error": float((approx - exact).norm() / exact.norm()),
        })
    return {"x": x, "exact": exact, "exact_g": exact_g, "end_to_end": end_to_end, "rows": rows}


def main():
    r = run()
    diff = float((r["exact_g"] - r["end_to_end"]).abs().max())
    print(f"gen_out.backward(true ∂L/∂x) vs end-to-end autograd: max |diff| = {diff:.1e}")
    print(gradarg.markdown_table(
        [[row["queries"], row["cos_upstream"], row["cos_generator"], row["rel_error"]]
         for row in r["rows"]],
        ["queries per sample", "cosine(ĝ, ∂L/∂x)", "cosine of generator grads", "relative error"],
    ))


if __name__ == "__main__":
    main()
