"""A healthy step: a tiny Vision Transformer built from scratch, patches cut and embedded by a
``Conv2d`` whose kernel and stride are the patch size, a learnable class token (initialised to
zeros) prepended, a learnable position embedding added, one pre-norm ``TransformerEncoderLayer``
(GELU, no dropout) and a head on the class token's output, trained with AdamW at 3e-4.  The class
token and the position embedding get gradients like every other parameter (the class token's
through attention, although it starts at zero).  Every gradient is finite and nonzero.

Source: https://nipunbatra.github.io/vlm-from-scratch/vision-transformer-scratch.html ("The aim of
this notebook is to implement a Vision Transformer (ViT) from scratch using PyTorch. We will go
through the key steps involved in building a ViT model, including patch embedding, positional
encoding, self-attention, and the final classification head"; ``conv =
torch.nn.Conv2d(in_channels, embed_dim, kernel_size=patch_size, stride=patch_size)``).  Adapted:
16x16 one-channel images of 4 synthetic classes, patches of 4, width 32, AdamW at 3e-4 as the
taourl answer of the same query recommends.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://nipunbatra.github.io/vlm-from-scratch/vision-transformer-scratch.html"
DESCRIPTION = "healthy: tiny ViT (conv patch embedding, zero-init CLS token, learned positions)"
ASK = ["cls_token", "pos_embed"]
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"no gradient",
    r"all-zero",
    r"dead (units?|relu|neurons?)",
    r"not in (the |any )?optimizer",
]
PATCH, DIM, CLASSES = 4, 32, 4


class TinyViT(nn.Module):
    def __init__(self):
        super().__init__()
        self.patch = nn.Conv2d(1, DIM, kernel_size=PATCH, stride=PATCH)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, DIM))
        self.pos_embed = nn.Parameter(0.02 * torch.randn(1, 1 + (16 // PATCH) ** 2, DIM))
        self.encoder = nn.TransformerEncoderLayer(
            DIM, 4, 64, dropout=0.0, activation="gelu", batch_first=True, norm_first=True
        )
        self.norm = nn.LayerNorm(DIM)
        self.head = nn.Linear(DIM, CLASSES)

    def forward(self, x):
        tokens = self.patch(x).flatten(2).transpose(1, 2)  # (B, 16, DIM)
        cls = self.cls_token.expand(x.shape[0], -1, -1)
        h = torch.cat([cls, tokens], dim=1) + self.pos_embed
        h = self.encoder(h)
        return self.head(self.norm(h[:, 0]))


def data():
    g = torch.Generator().manual_seed(1)
    templates = torch.randn(CLASSES, 1, 16, 16, generator=g)
    y = torch.randint(0, CLASSES, (32,), generator=g)
    x = templates[y] + 0.5 * torch.randn(32, 1, 16, 16, generator=g)
    return x, y


def step(watch):
    torch.manual_seed(0)
    model = TinyViT()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.05)
    x, y = data()
    grads = []
    with watch(model) as w:
        for _ in range(2):
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            grads.append({n: p.grad.detach().clone() for n, p in model.named_parameters()})
            optimizer.step()
    return Run(w=w, grads=grads)


def truth(run):
    for gs in run.grads:
        for n, g in gs.items():
            assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert float(run.grads[0]["cls_token"].abs().sum()) > 0
    assert float(run.grads[0]["pos_embed"].abs().sum()) > 0
