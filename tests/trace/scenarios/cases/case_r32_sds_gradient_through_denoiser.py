"""One score distillation sampling (SDS) step whose surrogate loss forgets the stop-gradient: ``loss =
(w(t) * (eps_pred - eps) * x).sum()`` with ``eps_pred`` computed with grad enabled.  SDS's update for
the rendered image ``x`` is ``w(t) (eps_pred - eps)`` alone, the frozen denoiser's Jacobian left out;
without ``.detach()`` (or ``no_grad`` around the denoiser) the backward also goes through the
denoiser, ``eps_pred`` depends on ``x`` through ``x_t = sqrt(a) x + sqrt(1 - a) eps``, and the scene
gets ``w (eps_pred - eps) + w sqrt(a) J^T x`` instead: here the Jacobian term dominates, the
scene's gradient is about 73 times the size of the SDS gradient and points elsewhere.  The denoiser's weights are frozen and get nothing;
every gradient of the scene is finite and nonzero; nothing raises.

Source: https://www.emergentmind.com/topics/score-distillation-sampling-sds ("In its canonical form,
the procedure entails rendering the current state of the target representation (such as a NeRF, mesh,
or an audio signal), noising it according to the forward diffusion process at a sampled timestep, and
then using the difference between the predicted noise (from the frozen diffusion model, possibly
text-conditioned) and the true injected noise as a gradient signal for optimization"; "Its canonical
approach involves rendering a representation, applying diffusion noise, and computing loss as the
difference between predicted and injected noise to update model parameters").  Adapted: the scene is
a coordinate MLP ``Linear(4, 32), SiLU, Linear(32, 32), SiLU, Linear(32, 3)`` rendered to 8 x 8 RGB
views from 4 random angles; the frozen denoiser stands for a pretrained model: the best noise
prediction under a prior of independent pixels ``N(0.5, 0.2^2)`` plus 0.1 times a small
convolutional network with a timestep embedding; ``t`` in [20, 980] of a linear schedule,
``w(t) = 1 - alpha_bar``; Adam at 1e-2.
"""

import copy
import math

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn

SOURCE = "https://www.emergentmind.com/topics/score-distillation-sampling-sds"
DESCRIPTION = "SDS loss (w (eps_pred - eps) * x).sum() without detach: backprop through the U-Net"
ASK = []
MUST = [
    [r"detach\w*", r"no_grad", r"stop[- ]?grad\w*"],
    [
        r"denoiser|u-?net|diffusion model|eps_pred|noise predict\w*",
        r"jacobian",
        r"sds|score distillation",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b"]
SIDE, VIEWS, STEPS, MEAN, STD = 8, 4, 1000, 0.5, 0.2


class Scene(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(4, 32), nn.SiLU(), nn.Linear(32, 32), nn.SiLU(), nn.Linear(32, 3)
        )

    def forward(self, angles):  # one 8 x 8 RGB view per angle
        axis = torch.linspace(-1, 1, SIDE)
        yy, xx = torch.meshgrid(axis, axis, indexing="ij")
        grid = torch.stack([xx, yy], -1).expand(len(angles), SIDE, SIDE, 2)
        view = torch.stack([angles.cos(), angles.sin()], -1)[:, None, None].expand(
            -1, SIDE, SIDE, 2
        )
        return torch.sigmoid(self.net(torch.cat([grid, view], -1))).permute(0, 3, 1, 2)


class Denoiser(nn.Module):  # stands for the pretrained, frozen diffusion model
    def __init__(self):
        super().__init__()
        self.register_buffer("alpha_bar", torch.cumprod(1 - torch.linspace(1e-4, 0.02, STEPS), 0))
        self.inp = nn.Conv2d(3, 16, 3, padding=1)
        self.time = nn.Linear(16, 16)
        self.out = nn.Sequential(nn.SiLU(), nn.Conv2d(16, 16, 3, padding=1), nn.SiLU())
        self.head = nn.Conv2d(16, 3, 3, padding=1)

    def forward(self, x_t, t):
        # the best noise prediction under a prior of pixels ~ N(MEAN, STD^2), plus a learned part
        a = self.alpha_bar[t.long()][:, None, None, None]
        prior = (1 - a).sqrt() * (x_t - a.sqrt() * MEAN) / (a * STD**2 + 1 - a)
        freqs = torch.exp(-math.log(1000) * torch.arange(8) / 8)
        emb = torch.cat([torch.sin(t[:, None] * freqs), torch.cos(t[:, None] * freqs)], -1)
        return prior + 0.1 * self.head(self.out(self.inp(x_t) + self.time(emb)[..., None, None]))


def noising():
    g = torch.Generator().manual_seed(1)
    angles = 2 * math.pi * torch.rand(VIEWS, generator=g)
    t = torch.randint(20, 981, (VIEWS,), generator=g)
    eps = torch.randn(VIEWS, 3, SIDE, SIDE, generator=g)
    alpha_bar = torch.cumprod(1 - torch.linspace(1e-4, 0.02, STEPS), 0)[t][:, None, None, None]
    return angles, t.float(), eps, alpha_bar


def sds_grad(x, denoiser, t, eps, alpha_bar):
    x_t = alpha_bar.sqrt() * x + (1 - alpha_bar).sqrt() * eps
    return (1 - alpha_bar) * (denoiser(x_t, t) - eps)


def step(watch, detached=False):
    torch.manual_seed(0)
    denoiser = Denoiser().requires_grad_(False)
    scene = Scene()
    optimizer = torch.optim.Adam(scene.parameters(), lr=1e-2)
    angles, t, eps, alpha_bar = noising()
    reference = copy.deepcopy(scene)  # the SDS gradient, computed with torch alone
    x_ref = reference(angles)
    with torch.no_grad():
        g_ref = sds_grad(x_ref, denoiser, t, eps, alpha_bar)
    sds = torch.autograd.grad((g_ref * x_ref).sum(), list(reference.parameters()))
    with watch(scene) as w:
        optimizer.zero_grad()
        x = scene(angles)
        if detached:
            with torch.no_grad():
                grad = sds_grad(x, denoiser, t, eps, alpha_bar)
            loss = (grad * x).sum()
        else:
            loss = (sds_grad(x, denoiser, t, eps, alpha_bar) * x).sum()
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in scene.named_parameters()}
        optimizer.step()
    expected = dict(zip((n for n, _ in scene.named_parameters()), sds, strict=True))
    return Run(
        w=w, grads=grads, expected=expected, loss=float(loss.detach()),
        denoiser_grads=[p.grad for p in denoiser.parameters()],
    )  # fmt: skip


def _rel(a, b):
    return float((a - b).norm() / b.norm())


def truth(run):
    assert math.isfinite(run.loss)
    assert all(g is None for g in run.denoiser_grads)
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    flat = torch.cat([g.flatten() for g in run.grads.values()])
    expected = torch.cat([g.flatten() for g in run.expected.values()])
    assert _rel(flat, expected) > 10.0  # far from the SDS gradient
