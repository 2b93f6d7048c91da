"""DreamBooth with prior preservation, fine-tuning the denoiser and the text encoder: each batch
holds the subject's images with the prompt "a sks dog" and class images the frozen pretrained model
generated beforehand with "a dog", ``model_pred`` and the noise target are split with
``torch.chunk(..., 2)`` into the instance and prior halves, and ``loss = mse(instance) + 1.0 *
mse(prior)``.  The text encoder is set to train (``requires_grad`` on, its token embeddings being
what binds "sks" to the subject), but the optimizer is built over ``unet.parameters()`` only: the
text encoder gets a gradient on every step that no optimizer applies, and since
``optimizer.zero_grad()`` clears only the denoiser, its ``.grad`` sums both watched steps.  The
rare token's embedding never moves.  Nothing raises; every gradient is finite and nonzero.

Source: https://theneuralbase.com/stable-diffusion/learn/advanced/dreambooth-subject-fine-tuning/
("During training, DreamBooth simultaneously: (1) optimizes the UNet and text encoder to map your
rare token to the subject's visual embedding, and (2) uses prior_preservation to prevent mode
collapse by generating images of similar subjects (e.g., "person") and applying a regularization
loss").  Adapted: a text encoder of an ``Embedding(10, 16)`` and a ``Linear(16, 16)`` mean-pooled
over the prompt, a denoiser ``Linear(16 + 1 + 16, 64), SiLU, Linear(64, 16)`` on 16-dimensional
latents, 4 instance and 4 class latents, a cosine noise schedule, AdamW at 5e-4, two steps watched.
"""

import math

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://theneuralbase.com/stable-diffusion/learn/advanced/dreambooth-subject-fine-tuning/"
DESCRIPTION = "DreamBooth text encoder trains (requires_grad) but the optimizer holds the UNet only"
ASK = []
MUST = [
    [
        r"not in (the |any )?optimi[sz]er",
        r"no optimi[sz]er",
        r"optimi[sz]er[^\n]{0,60}(only|unet)",
        r"never (applied|stepped|updated)",
    ],
    [r"text[_ ]encoder"],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b"]
SKS, DOG, A = 1, 2, 3


class TextEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.tokens = nn.Embedding(10, 16)
        self.proj = nn.Linear(16, 16)

    def forward(self, ids):
        return self.proj(self.tokens(ids)).mean(1)


class Denoiser(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(33, 64), nn.SiLU(), nn.Linear(64, 16))

    def forward(self, x, t, c):
        return self.net(torch.cat([x, t[:, None], c], -1))


class DreamBooth(nn.Module):
    def __init__(self):
        super().__init__()
        self.text_encoder = TextEncoder()
        self.unet = Denoiser()


def step(watch, both=False):
    torch.manual_seed(0)
    model = DreamBooth()
    params = list(model.parameters()) if both else list(model.unet.parameters())
    optimizer = torch.optim.AdamW(params, lr=5e-4)
    g = torch.Generator().manual_seed(14)
    instance = 1.0 + 0.1 * torch.randn(4, 16, generator=g)  # the subject
    prior = torch.randn(4, 16, generator=g)  # the class images, generated beforehand
    latents = torch.cat([instance, prior])
    prompts = torch.tensor([[A, SKS, DOG]] * 4 + [[A, DOG, DOG]] * 4)
    grads, sks = [], []
    with watch(model) as w:
        for _ in range(2):
            optimizer.zero_grad()
            t = torch.rand(8, generator=g)
            noise = torch.randn(8, 16, generator=g)
            alpha = torch.cos(t * math.pi / 2)[:, None]
            noisy = alpha * latents + (1 - alpha**2).sqrt() * noise
            model_pred = model.unet(noisy, t, model.text_encoder(prompts))
            pred, pred_prior = torch.chunk(model_pred, 2, dim=0)
            target, target_prior = torch.chunk(noise, 2, dim=0)
            loss = F.mse_loss(pred, target) + 1.0 * F.mse_loss(pred_prior, target_prior)
            loss.backward()
            grads.append({n: p.grad.detach().clone() for n, p in model.named_parameters()})
            optimizer.step()
            sks.append(model.text_encoder.tokens.weight[SKS].detach().clone())
    return Run(
        w=w, grads=grads, sks=sks, loss=float(loss.detach()),
        held={id(p) for group in optimizer.param_groups for p in group["params"]},
        ids={n: id(p) for n, p in model.named_parameters()},
    )  # fmt: skip


def truth(run):
    assert math.isfinite(run.loss)
    first, second = run.grads
    for n in first:
        assert bool(torch.isfinite(second[n]).all()) and bool(second[n].abs().sum() > 0), n
        if n.startswith("text_encoder."):
            assert run.ids[n] not in run.held, n
            assert not torch.equal(first[n], second[n]), n
        else:
            assert run.ids[n] in run.held, n
    assert torch.equal(run.sks[0], run.sks[1])  # the rare token never moves
