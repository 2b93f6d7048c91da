"""A Gaussian-splatting fit whose per-Gaussian rotations are quaternions initialised with
``torch.zeros(n, 4)``, like the other parameters, and normalised in the forward by ``q /
q.norm(dim=-1, keepdim=True)``.  Every norm is 0, so every unit quaternion is ``0 / 0 = NaN``; the
rotation matrices ``R``, the covariances ``R S S^T R^T``, the rendered densities and the loss are
NaN, and so is every parameter's gradient (the means', scales' and opacities' through the NaN
densities).  Adam's step writes NaN into every parameter.  Nothing raises.

Source: https://wiredwisdom.netlify.app/posts/3d-gaussian-covariance/ ("Covariance matrix is
decomposed for stable optimization: $$ \\Sigma = RSS^TR^T $$ Where: \\(R\\): Rotation matrix
(quaternion-based) \\(S\\): Scaling matrix (diagonal)"; "Per Gaussian: - Position: (x, y, z) -
Scale: (s_x, s_y, s_z) - Rotation: quaternion (q_w, q_x, q_y, q_z) - Opacity: α").  Adapted: no
camera; 16 Gaussians with means drawn near those of a reference set of 16 anisotropic Gaussians,
random anisotropic log-scales, quaternions and opacity logits, the summed density ``sum_i
sigmoid(o_i) exp(-d^T Sigma_i^-1 d / 2)`` with ``d = x - mu_i`` (``Sigma^-1 = R S^-2 R^T``) fitted
by MSE to the reference's at 512 points in 3-D, Adam at 1e-2.
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://wiredwisdom.netlify.app/posts/3d-gaussian-covariance/"
DESCRIPTION = "splatting quaternions zeros(n, 4) normalised by q / q.norm(): 0 / 0, NaN everywhere"
ASK = []
MUST = [
    [r"\bnan\b|non-?finite"],
    [
        r"quaternion\w*|\bquats?\b|rotation\w*",
        r"0\s?/\s?0|zero (divided )?by zero|divi\w* by (a )?(zero|0)",
        r"(norm|length)[^\n]{0,30}(is |of |= ?)(exactly )?(zero|0)\b",
        r"zero[- ]init\w*|zeros?\(",
        r"normali[sz]\w*",
    ],
]
MUST_NOT = [FALSE_OK, r"\bdead\b", r"requires_grad\s*(=|is|was)?\s*False"]
N_GAUSS, N_POINTS = 16, 512


def rotation(q):  # unit quaternions (w, x, y, z) -> (n, 3, 3)
    w, x, y, z = q.unbind(-1)
    return torch.stack([
        1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
        2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
        2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y),
    ], -1).view(-1, 3, 3)  # fmt: skip


def density(points, means, log_scales, quats, opacity_logits):
    r = rotation(quats / quats.norm(dim=-1, keepdim=True))
    inv_cov = r @ torch.diag_embed(torch.exp(-2 * log_scales)) @ r.transpose(1, 2)
    d = points[:, None, :] - means[None]  # (P, n, 3)
    mahalanobis = torch.einsum("pni,nij,pnj->pn", d, inv_cov, d)
    return (torch.sigmoid(opacity_logits) * torch.exp(-0.5 * mahalanobis)).sum(-1)


class Splats(nn.Module):
    def __init__(self, means, log_scales, identity_rotations):
        super().__init__()
        self.means = nn.Parameter(means)
        self.log_scales = nn.Parameter(log_scales)
        quats = torch.zeros(N_GAUSS, 4)
        if identity_rotations:
            quats[:, 0] = 1.0
        self.quats = nn.Parameter(quats)
        self.opacity_logits = nn.Parameter(torch.zeros(N_GAUSS))

    def forward(self, points):
        return density(points, self.means, self.log_scales, self.quats, self.opacity_logits)


def scene():
    g = torch.Generator().manual_seed(1)
    means = 2 * torch.randn(N_GAUSS, 3, generator=g)
    log_scales = torch.log(torch.rand(N_GAUSS, 3, generator=g) * 0.9 + 0.1)
    quats = torch.randn(N_GAUSS, 4, generator=g)
    opacity = torch.randn(N_GAUSS, generator=g)
    points = means[torch.randint(0, N_GAUSS, (N_POINTS,), generator=g)] + torch.randn(
        N_POINTS, 3, generator=g
    )
    target = density(points, means, log_scales, quats, opacity)
    start = means + 0.5 * torch.randn(N_GAUSS, 3, generator=g)
    start_log_scales = torch.log(torch.rand(N_GAUSS, 3, generator=g) * 0.7 + 0.3)  # anisotropic
    return points, target, start, start_log_scales


def step(watch, identity_rotations=False):
    torch.manual_seed(0)
    points, target, start, start_log_scales = scene()
    model = Splats(start, start_log_scales, identity_rotations)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    with watch(model) as w:
        optimizer.zero_grad()
        rendered = model(points)
        loss = F.mse_loss(rendered, target)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, model=model, rendered=rendered.detach(), loss=float(loss.detach()), grads=grads)


def truth(run):
    assert bool(torch.isnan(run.rendered).all())
    for n, g in run.grads.items():
        assert bool(torch.isnan(g).all()), n
    for n, p in run.model.named_parameters():
        assert bool(torch.isnan(p).all()), n
