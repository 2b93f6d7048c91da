"""A conditional VAE that concatenates one-hot labels to the encoder's and the decoder's inputs,
with the one-hot written ``F.one_hot(y)``: without ``num_classes`` its width is ``y.max() + 1``,
the largest label of the batch plus one.  The first batch holds all 10 classes and trains; the last,
short batch (6 examples of classes 0 to 5) gets one-hot vectors of width 6, the encoder's first
``Linear(64 + 10, 64)`` receives 70 features and the forward raises ``RuntimeError: mat1 and mat2
shapes cannot be multiplied (6x70 and 74x64)``.  The second step never runs: its ``zero_grad`` has
already set every ``.grad`` to ``None``, and the parameters keep the values of the first step.

Source: https://burakkagann.github.io/Pixels2GenAI/content/Module_12_generative_ai_models/12.2_variational_autoencoders/12.2.3_conditional_vaes/README.html
("Conditional Variational Autoencoders (CVAEs) solve this problem by incorporating class labels into
both the encoder and decoder"; "Implement label conditioning by concatenating one-hot encoded labels
to network inputs").  Adapted: 70 flattened 8 x 8 images around 10 class templates in batches of 64
and 6; encoder ``Linear(74, 64), Tanh, Linear(64, 16)`` (mean and log-variance of 8 latents),
decoder ``Linear(18, 64), Tanh, Linear(64, 64)``; squared error summed per image plus the KL term,
Adam at 1e-3.
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://burakkagann.github.io/Pixels2GenAI/content/Module_12_generative_ai_models/"
    "12.2_variational_autoencoders/12.2.3_conditional_vaes/README.html"
)
DESCRIPTION = "CVAE F.one_hot(y) without num_classes: last batch (classes 0-5) width 6, raises"
ASK = []
MUST = [
    [r"\braised\b", r"RuntimeError", r"exception", r"\berror\b"],
    [
        r"one[_ -]?hot",
        r"num_classes",
        r"shapes? cannot be multiplied",
        r"\b6x70\b|\b70\b[^\n]{0,40}\b74\b|\b74\b[^\n]{0,40}\b70\b",
        r"(label|class)[^\n]{0,60}(width|size|missing|absent|max)",
        r"(last|second|short) batch",
    ],
]
MUST_NOT = [FALSE_OK]
CLASSES, LATENT = 10, 8


class CVAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(64 + CLASSES, 64), nn.Tanh(), nn.Linear(64, 2 * LATENT))
        self.dec = nn.Sequential(nn.Linear(LATENT + CLASSES, 64), nn.Tanh(), nn.Linear(64, 64))

    def forward(self, x, c):
        mu, logvar = self.enc(torch.cat([x, c], 1)).chunk(2, 1)
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        return self.dec(torch.cat([z, c], 1)), mu, logvar


def batches():
    g = torch.Generator().manual_seed(1)
    templates = torch.rand(CLASSES, 64, generator=g)
    y = torch.cat([torch.randperm(64, generator=g) % CLASSES, torch.arange(6)])
    x = templates[y] + 0.1 * torch.randn(70, 64, generator=g)
    return [(x[:64], y[:64]), (x[64:], y[64:])]


def step(watch, num_classes=None):
    torch.manual_seed(0)
    model = CVAE()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    after_first, grads, error = None, [], None
    try:
        with watch(model) as w:
            for x, y in batches():
                optimizer.zero_grad()
                c = F.one_hot(y) if num_classes is None else F.one_hot(y, num_classes)
                recon, mu, logvar = model(x, c.float())
                kl = -0.5 * (1 + logvar - mu**2 - logvar.exp()).sum(1).mean()
                loss = (recon - x).pow(2).sum(1).mean() + kl
                loss.backward()
                grads.append({n: p.grad.detach().clone() for n, p in model.named_parameters()})
                optimizer.step()
                if after_first is None:
                    after_first = {n: p.detach().clone() for n, p in model.named_parameters()}
    except RuntimeError as e:
        error = e
    return Run(w=w, model=model, before=before, after_first=after_first, grads=grads, error=error)


def truth(run):
    assert run.error is not None and "shapes cannot be multiplied (6x70 and 74x64)" in str(
        run.error
    )
    assert len(run.grads) == 1  # the first batch trained
    for n, p in run.model.named_parameters():
        assert p.grad is None, n  # zero_grad of the second step ran, its backward did not
        assert not torch.equal(run.after_first[n], run.before[n]), n
        assert torch.equal(p.detach(), run.after_first[n]), n
