"""A healthy recipe: a spectral-norm penalty added to the loss, the largest singular value of each
weight matrix estimated by power iteration.  The singular vectors ``u`` and ``v`` are buffers,
updated under ``torch.no_grad()`` (one iteration per step, after 20 to start), and the estimate
``sigma = u^T W v`` is differentiated with ``u`` and ``v`` held fixed: its gradient with respect to
``W`` is ``u v^T``, the subgradient of the spectral norm.  Each weight's gradient is the data loss's
plus ``lambda u v^T``; the estimates are within 0.1% of ``torch.linalg.matrix_norm(W, 2)``.  Every
gradient is finite and nonzero; nothing is wrong.

Source: https://www.howistudyai.com/concepts/dd691cc9-dff8-4203-ba6f-7116ba5753df ("Two common
approaches are adding a spectral-norm penalty to the loss or projecting/scaling weights"; "The
spectral norm can be efficiently approximated with power iteration without computing a full SVD";
"Gradients for a spectral penalty can be approximated using the top singular vectors u and v (a
subgradient is u vT)"; "a small fixed number (1–5) is often sufficient").  Adapted: a
``Linear(16, 32)``, ``Tanh``, ``Linear(32, 1)`` regressor, the penalty ``0.01 * sum(sigma)`` over
its two weight matrices, MSE, SGD at 0.05.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://www.howistudyai.com/concepts/dd691cc9-dff8-4203-ba6f-7116ba5753df"
DESCRIPTION = "healthy: spectral-norm penalty by power iteration (u, v fixed): grad += lam u v^T"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"\bdead\b", r"all[- ]zero", r"explod\w*"]
LAM = 0.01


class PenalisedMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 1))
        g = torch.Generator().manual_seed(3)
        for i in (0, 2):
            out_f, in_f = self.net[i].weight.shape
            self.register_buffer(f"u{i}", F.normalize(torch.randn(out_f, generator=g), dim=0))
            self.register_buffer(f"v{i}", F.normalize(torch.randn(in_f, generator=g), dim=0))

    def forward(self, x):
        return self.net(x)

    @torch.no_grad()
    def power_iteration(self, n=1):
        for i in (0, 2):
            w, u, v = self.net[i].weight, getattr(self, f"u{i}"), getattr(self, f"v{i}")
            for _ in range(n):
                v.copy_(F.normalize(w.T @ u, dim=0))
                u.copy_(F.normalize(w @ v, dim=0))

    def spectral_penalty(self):
        return sum(getattr(self, f"u{i}") @ self.net[i].weight @ getattr(self, f"v{i}")
                   for i in (0, 2))  # fmt: skip


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 16, generator=g)
    return x, torch.sin(x[:, :4]).sum(1, keepdim=True)


def step(watch):
    torch.manual_seed(0)
    model = PenalisedMLP()
    model.power_iteration(20)
    start = {n: p.detach().clone() for n, p in model.named_parameters()}
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    x, y = data()
    with watch(model) as w:
        optimizer.zero_grad()
        model.power_iteration(1)
        uv = {i: (getattr(model, f"u{i}").clone(), getattr(model, f"v{i}").clone()) for i in (0, 2)}
        sigma = [float(uv[i][0] @ model.net[i].weight.detach() @ uv[i][1]) for i in (0, 2)]
        loss = F.mse_loss(model(x), y) + LAM * model.spectral_penalty()
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, model=model, start=start, uv=uv, sigma=sigma, grads=grads, x=x, y=y)


def truth(run):
    ref = PenalisedMLP()
    ref.load_state_dict(run.start, strict=False)  # the weights; the data loss reads no buffer
    names = [n for n, _ in ref.named_parameters()]
    data_loss = F.mse_loss(ref(run.x), run.y)
    data_grads = dict(
        zip(names, torch.autograd.grad(data_loss, list(ref.parameters())), strict=True)
    )
    for k, i in enumerate((0, 2)):
        true_sigma = float(torch.linalg.matrix_norm(run.start[f"net.{i}.weight"], 2))
        assert abs(run.sigma[k] - true_sigma) / true_sigma < 1e-3  # the estimate is good
        u, v = run.uv[i]
        expected = data_grads[f"net.{i}.weight"] + LAM * torch.outer(u, v)
        assert torch.allclose(run.grads[f"net.{i}.weight"], expected, atol=1e-6)
    params = dict(run.model.named_parameters())
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        assert not torch.equal(params[n].detach(), run.start[n]), n
