"""A small VQ-VAE whose quantizer is the page's ``quantize``: the encoder output ``z_e`` is snapped
to its nearest codebook row (``argmin`` of the squared distances) and ``z_q = codebook[idx]`` goes
to the decoder, with the loss the page gives: reconstruction ``+ ||sg[z_e] - e||^2 + beta ||z_e -
sg[e]||^2``.  ``argmin`` is an integer operation and ``codebook[idx]`` depends on ``z_e`` only
through it, so the reconstruction's gradient stops at the codebook rows: it never reaches the
encoder.  The straight-through copy the page describes (``z_e + (z_q - z_e).detach()``) is missing
from its code.  The encoder still gets a gradient, but only the commitment term's (``beta`` times
``z_e - z_q``): it is pulled toward the codes and never learns to reconstruct.  Every gradient is
finite and nonzero; nothing raises.

Source: https://blog.at-find.com/vq-vae ("Straight-through estimator: Backpropagate through
quantization by copying encoder gradients"; "Loss: reconstruction + ||sg[z_e] - e||^2 + beta
||z_e - sg[e]||^2"; its ``quantize`` returns ``z_q = codebook[idx]...``).  Adapted: vectors of 8
features instead of images, a codebook of 8 rows initialised near the encoder's first 8 outputs.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://blog.at-find.com/vq-vae"
DESCRIPTION = "VQ-VAE z_q = codebook[argmin] without straight-through: recon never reaches encoder"
ASK = ["enc.0.weight"]
MUST = [
    [
        r"straight[- ]through",
        r"argmin",
        r"\bindex",
        r"integer",
        r"quantiz\w*",
        r"codebook\[",
        r"nearest",
    ],
    [
        r"encoder",
        r"^summary:[^\n]*\benc\.",
        r"reconstruction",
        r"commitment",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"no_grad", r"dead (units?|relu|neurons?)"]
K, D, BETA = 8, 4, 0.25


class VQVAE(nn.Module):
    def __init__(self, straight_through: bool):
        super().__init__()
        self.straight_through = straight_through
        self.enc = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, D))
        self.codebook = nn.Parameter(torch.zeros(K, D))
        self.dec = nn.Sequential(nn.Linear(D, 16), nn.Tanh(), nn.Linear(16, 8))

    def quantize(self, z_e):
        d2 = (z_e[:, None, :] - self.codebook[None, :, :]).pow(2).sum(-1)
        idx = d2.argmin(dim=1)
        return self.codebook[idx], idx

    def forward(self, x):
        z_e = self.enc(x)
        z_q, idx = self.quantize(z_e)
        dec_in = z_e + (z_q - z_e).detach() if self.straight_through else z_q
        return self.dec(dec_in), z_e, z_q, idx


def losses(model, x):
    x_hat, z_e, z_q, idx = model(x)
    recon = F.mse_loss(x_hat, x)
    codebook = F.mse_loss(z_q, z_e.detach())
    commitment = F.mse_loss(z_e, z_q.detach())
    return recon, codebook, commitment, idx


def step(watch, straight_through: bool = False, codebook_init: str = "data"):
    torch.manual_seed(0)
    model = VQVAE(straight_through)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 8, generator=g)
    with torch.no_grad():
        if codebook_init == "data":  # near the first K encoder outputs, as k-means inits do
            model.codebook.copy_(model.enc(x[:K]) + 0.05 * torch.randn(K, D, generator=g))
        else:  # a plain random init far from the encoder's outputs (~0.5 in size)
            model.codebook.copy_(3.0 * torch.randn(K, D, generator=g) + 4.0)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    enc_params = list(model.enc.parameters())
    # what each term sends to the encoder, at the watched step's weights
    recon, _, commitment, _ = losses(model, x)
    recon_enc = torch.autograd.grad(recon, enc_params, allow_unused=True, retain_graph=True)
    commit_enc = torch.autograd.grad(BETA * commitment, enc_params)
    before = [p.detach().clone() for p in model.parameters()]
    with watch(model) as w:
        opt.zero_grad()
        recon, codebook, commitment, idx = losses(model, x)
        loss = recon + codebook + BETA * commitment
        loss.backward()
        opt.step()
    grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
    moved = {
        n: not torch.equal(p.detach(), b)
        for (n, p), b in zip(model.named_parameters(), before, strict=True)
    }
    return Run(
        w=w,
        grads=grads,
        moved=moved,
        idx=idx,
        recon_enc=recon_enc,
        commit_enc=commit_enc,
        loss=loss.item(),
    )


def truth(run):
    # the reconstruction does not reach the encoder; its gradient is the commitment term's alone
    assert all(g is None for g in run.recon_enc)
    enc = [run.grads[n] for n in ("enc.0.weight", "enc.0.bias", "enc.2.weight", "enc.2.bias")]
    for got, commit in zip(enc, run.commit_enc, strict=True):
        assert torch.allclose(got, commit, rtol=1e-5, atol=1e-8)
    assert len(set(run.idx.tolist())) == K  # every code used: no zero codebook row
    for n, gr in run.grads.items():
        assert bool(torch.isfinite(gr).all()), n
        assert bool((gr.abs().sum(-1) > 0).all()) if gr.dim() == 2 else bool(gr.abs().sum() > 0), n
