"""A masked autoencoder trained on images with blank borders, its reconstruction target the
per-patch normalized pixels (MAE's ``norm_pix_loss``) written without the epsilon: ``(patch - mean)
/ var.sqrt()``.  Every patch of the black border is constant, its variance exactly 0, and its target
``0 / 0`` is NaN.  The target is computed from the data, without autograd history; the NaN enters
the graph at ``pred - target``: the loss is NaN, and although only masked patches are counted, the
visible patches' NaN differences are multiplied by a mask of 0 (``0 * NaN`` is NaN), so every
parameter's gradient holds NaN.  Nothing raises.

Source: https://saikatkumardey.com/ml-wiki/sources/mae-masked-autoencoders-scalable-vision-learners
("MAE works exactly like this. It masks 75% of an image's patches at random and trains a model to
reconstruct the missing pixels. The high masking ratio is the key design choice"; "the encoder never
sees the masked patches. It only processes the visible 25%").  Adapted: the normalized-pixel target
without its epsilon (the page gives the method, not the slip); 32 single-channel 16 x 16 images,
zero outside a random 8 x 8 centre, 4 x 4 patches (16 per image, 12 of them blank), a patch
embedding ``Linear(16, 32)`` with learned positions, one pre-norm attention block (4 heads, an MLP
``Linear(32, 64), Tanh, Linear(64, 32)``) as encoder and one as decoder with a learned mask token,
75% random masking by ``argsort`` of uniform noise, the mean squared error over masked patches,
AdamW at 1e-3.
"""

import math

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn

SOURCE = (
    "https://saikatkumardey.com/ml-wiki/sources/mae-masked-autoencoders-scalable-vision-learners"
)
DESCRIPTION = "MAE norm_pix target (p - mean) / var.sqrt() without eps: blank patches 0/0 NaN"
ASK = []
MUST = [
    [r"\bnan\b"],
    [
        r"\b0\s?/\s?0\b",
        r"zero varian\w*|variance[^\n]{0,30}(zero|\b0\b)",
        r"constant (patch|patches|input|region)",
        r"blank|black",
        r"normali[sz]\w*",
        r"\bstd\b|standard deviation|\bvar\b|sqrt",
        r"\beps(ilon)?\b",
        r"target",
        r"(without|no) (autograd )?(graph|history)",
    ],
]
MUST_NOT = [FALSE_OK, r"\bdead\b", r"requires_grad\s*(=|is|was)?\s*False"]
D, PATCH, SIDE = 32, 4, 16
L = (SIDE // PATCH) ** 2


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(D), nn.LayerNorm(D)
        self.attn = nn.MultiheadAttention(D, 4, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(D, 64), nn.Tanh(), nn.Linear(64, D))

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


class MAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(PATCH * PATCH, D)
        self.pos = nn.Parameter(0.02 * torch.randn(1, L, D))
        self.encoder = Block()
        self.mask_token = nn.Parameter(0.02 * torch.randn(1, 1, D))
        self.dec_pos = nn.Parameter(0.02 * torch.randn(1, L, D))
        self.decoder = Block()
        self.head = nn.Linear(D, PATCH * PATCH)

    def forward(self, patches, ratio=0.75):
        n = patches.shape[0]
        x = self.embed(patches) + self.pos
        keep = int(L * (1 - ratio))
        ids_shuffle = torch.argsort(torch.rand(n, L), dim=1)
        ids_restore = torch.argsort(ids_shuffle, dim=1)
        visible = torch.gather(x, 1, ids_shuffle[:, :keep, None].expand(-1, -1, D))
        latent = self.encoder(visible)
        tokens = torch.cat([latent, self.mask_token.expand(n, L - keep, D)], 1)
        tokens = torch.gather(tokens, 1, ids_restore[..., None].expand(-1, -1, D))
        pred = self.head(self.decoder(tokens + self.dec_pos))
        mask = torch.ones(n, L)
        mask[:, :keep] = 0
        return pred, torch.gather(mask, 1, ids_restore)  # 1 where masked


def images():
    g = torch.Generator().manual_seed(1)
    img = torch.zeros(32, 1, SIDE, SIDE)
    img[:, :, 4:12, 4:12] = torch.rand(32, 1, 8, 8, generator=g)
    return img


def patchify(img):
    p = img.unfold(2, PATCH, PATCH).unfold(3, PATCH, PATCH)  # (N, 1, 4, 4, PATCH, PATCH)
    return p.reshape(img.shape[0], L, PATCH * PATCH)


def step(watch, eps=0.0):
    torch.manual_seed(0)
    model = MAE()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    patches = patchify(images())
    with watch(model) as w:
        optimizer.zero_grad()
        pred, mask = model(patches)
        mean, var = patches.mean(-1, keepdim=True), patches.var(-1, keepdim=True)
        target = (patches - mean) / (var + eps).sqrt()
        per_patch = ((pred - target) ** 2).mean(-1)
        loss = (per_patch * mask).sum() / mask.sum()
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(
        w=w,
        target=target,
        blank=(patches == 0).all(-1),
        mask=mask,
        loss=float(loss.detach()),
        grads=grads,
    )


def truth(run):
    assert bool(run.blank.any()) and int(run.blank.sum(1)[0]) == 12
    assert torch.equal(torch.isnan(run.target).any(-1), run.blank)  # NaN exactly at blank patches
    assert math.isnan(run.loss)
    for n, g in run.grads.items():
        assert bool(torch.isnan(g).any()), n
