"""An IP-Adapter trained on a frozen text-to-image denoiser: each cross-attention block of the
denoiser gets a decoupled image branch, ``Z = softmax(Q K^T) V + softmax(Q K'^T) V'`` with new
projections ``to_k_ip`` and ``to_v_ip`` (new layers loaded with the text ones' weights), fed by a trainable image
projection of a frozen image encoder's embedding.  The script attaches the adapter's projections
to the denoiser's blocks and then freezes the denoiser with ``unet.requires_grad_(False)``: the
freeze reaches the projections just attached, so ``to_k_ip`` and ``to_v_ip``, the weights the
adapter exists to train, have ``requires_grad=False`` and get no gradient, while the optimizer,
built from the parameters whose name holds ``_ip`` and the image projection, holds them.  The image
projection still trains (the gradient flows through the frozen projections to their input).
Nothing raises; every gradient that exists is finite and nonzero.

Source: http://mfbz.cn/a/323788.html ("解决问题: 如何将图片作为prompt输入网络,并无需更改开源模型参数 解决思路: 新增一个
cross-attention layers,结果与text prompt的cross-attention layers结果相加后输入网络,只需要训练Wk, Wv两个参数").
Adapted: a denoiser of an input ``Linear(16, 16)``, two cross-attention blocks (width 16, one head)
and an output ``Linear(16, 16)`` over 16 latent tokens, 6 text tokens, an image embedding of width
12 projected to 4 tokens (``Linear(12, 64)`` and ``LayerNorm``), the noise-prediction MSE, AdamW at
1e-4.
"""

import math

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "http://mfbz.cn/a/323788.html"
DESCRIPTION = "IP-Adapter to_k_ip/to_v_ip attached, then unet.requires_grad_(False): frozen too"
ASK = ["blocks.0.to_k_ip.weight"]
MUST = [
    [r"requires_grad", r"frozen|freez\w*"],
    [
        r"to_[kv]_ip",
        r"adapter",
        r"attach\w*|added|inserted",
        r"(before|after) (the )?(freez\w*|requires_grad)",
        r"order",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b"]
WIDTH = 16


class CrossAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.to_q = nn.Linear(WIDTH, WIDTH, bias=False)
        self.to_k = nn.Linear(WIDTH, WIDTH, bias=False)
        self.to_v = nn.Linear(WIDTH, WIDTH, bias=False)
        self.to_out = nn.Linear(WIDTH, WIDTH)

    def attach_ip(self):  # new layers loaded with the text projections' weights
        self.to_k_ip = nn.Linear(WIDTH, WIDTH, bias=False)
        self.to_v_ip = nn.Linear(WIDTH, WIDTH, bias=False)
        self.to_k_ip.load_state_dict(self.to_k.state_dict())
        self.to_v_ip.load_state_dict(self.to_v.state_dict())

    def forward(self, z, text, image):
        q = self.to_q(z)
        out = F.scaled_dot_product_attention(q, self.to_k(text), self.to_v(text))
        out = out + F.scaled_dot_product_attention(q, self.to_k_ip(image), self.to_v_ip(image))
        return z + self.to_out(out)


class Denoiser(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(WIDTH, WIDTH)
        self.blocks = nn.ModuleList(CrossAttention() for _ in range(2))
        self.out = nn.Linear(WIDTH, WIDTH)

    def forward(self, z, text, image):
        h = self.inp(z)
        for block in self.blocks:
            h = block(h, text, image)
        return self.out(h)


class ImageProjection(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(12, 4 * WIDTH)
        self.norm = nn.LayerNorm(WIDTH)

    def forward(self, embedding):
        return self.norm(self.proj(embedding).view(-1, 4, WIDTH))


class Model(nn.Module):
    def __init__(self, freeze_first):
        super().__init__()
        self.unet = Denoiser()
        if freeze_first:
            self.unet.requires_grad_(False)
        for block in self.unet.blocks:
            block.attach_ip()
        if not freeze_first:
            self.unet.requires_grad_(False)
        self.image_proj = ImageProjection()


def step(watch, freeze_first=False):
    torch.manual_seed(0)
    model = Model(freeze_first)
    trainable = [p for n, p in model.unet.named_parameters() if "_ip" in n]
    optimizer = torch.optim.AdamW(trainable + list(model.image_proj.parameters()), lr=1e-4)
    g = torch.Generator().manual_seed(13)
    latents = torch.randn(4, 16, WIDTH, generator=g)
    noise = torch.randn(4, 16, WIDTH, generator=g)
    text = torch.randn(4, 6, WIDTH, generator=g)
    image_embedding = torch.randn(4, 12, generator=g)  # the frozen image encoder's output
    with watch(model) as w:
        optimizer.zero_grad()
        image = model.image_proj(image_embedding)
        pred = model.unet(latents + noise, text, image)
        loss = F.mse_loss(pred, noise)
        loss.backward()
        optimizer.step()
    held = {id(p) for group in optimizer.param_groups for p in group["params"]}
    return Run(
        w=w, loss=float(loss.detach()),
        grads={n: None if p.grad is None else p.grad.detach().clone()
               for n, p in model.named_parameters()},
        flags={n: p.requires_grad for n, p in model.named_parameters()},
        held={n for n, p in model.named_parameters() if id(p) in held},
    )  # fmt: skip


def truth(run):
    assert math.isfinite(run.loss)
    for n, g in run.grads.items():
        if "_ip." in n:
            assert n in run.held and not run.flags[n] and g is None, n
        elif n.startswith("image_proj."):
            assert n in run.held and g is not None and bool(torch.isfinite(g).all()), n
            assert bool(g.abs().sum() > 0), n
        else:
            assert n not in run.held and g is None, n
