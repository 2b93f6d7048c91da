"""A small class-conditional DiT whose blocks are zero-initialised twice over: the adaLN-Zero
modulation (its last ``Linear`` zero, so every gate ``alpha`` starts at 0, as DiT does) and also the
last layer of each residual branch, the attention's output projection and the MLP's second layer
(the U-Net habit of zeroing a block's final layer).  Each branch adds ``alpha * out(...)`` to the
residual stream: ``alpha``'s gradient is the branch's output, which is zero, and the output layer's
gradient is scaled by ``alpha``, which is zero, and everything inside the branch sits behind both.
Every parameter of both blocks, modulation included, gets exactly zero gradient on every step; AdamW
never moves them from zero (the attention's ``qkv`` and the MLP's first layer only shrink under
weight decay) and the blocks stay identity maps.  The patch embedding, the conditioning embedders
(from the second step) and the final layer train.  Two steps are watched; nothing raises.

Source: https://notes.haroldbenoit.com/ML/Generative-modeling-(Diffusion)/Architecture/DiT ("Prior
work on ResNets has found that initializing each residual block as the identity function is
beneficial. . Diffusion U-Net models use a similar initialization strategy, zero-initializing the
final convolutional layer in each block prior to any residual connections. We explore a modification
of the adaLN DiT block which does the same. In addition to regressing γ and β, we also regress
dimension-wise scaling parameters α that are applied immediately prior to any residual connections
within the DiT block. We initialize the MLP to output the zero-vector for all α"; "AdamW with
constant learning rate of 1e-4, no weight decay").  Adapted: both zero-initialisations in one block;
latents of 2 x 8 x 8 in patches of 2 (16 tokens), width 32, two blocks with two heads and an MLP of
128, a timestep MLP and a 4-class label embedding summed into the condition, DiT's final layer with
its own zero-initialised adaLN and a default-initialised linear layer, noise prediction on a linear
beta schedule, AdamW at 1e-4 with weight decay 0.01.
"""

import math

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://notes.haroldbenoit.com/ML/Generative-modeling-(Diffusion)/Architecture/DiT"
DESCRIPTION = "DiT adaLN-Zero gates plus zero-init attn/MLP out layers: blocks stuck at zero grads"
ASK = ["blocks.0.attn_out.weight"]
MUST = [
    [
        r"^summary:[^\n]*blocks\.",
        r"^why blocks\.0\.attn_out\.weight:[^\n]*(\bzero\b|all-zero|exactly 0\b)",
    ],
    [
        r"zero[- ]init\w*|zeros?_\(|constant_\(",
        r"initiali[sz]\w* (to|at|with|as) (all )?zeros?",
        r"(both|two) (factors?|terms?|weights?|layers?) (are |start )?(at )?(zero|0)\b",
        r"stuck|fixed point|saddle",
        r"gate\w*[^\n]{0,60}(zero|0\b)",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"requires_grad\s*(=|is|was)?\s*False"]
WIDTH, HEADS, PATCH, CHANNELS, SIDE, CLASSES, STEPS = 32, 2, 2, 2, 8, 4, 1000


def modulate(x, shift, scale):
    return x * (1 + scale[:, None]) + shift[:, None]


class Block(nn.Module):
    def __init__(self, zero_out):
        super().__init__()
        self.norm1 = nn.LayerNorm(WIDTH, elementwise_affine=False)
        self.norm2 = nn.LayerNorm(WIDTH, elementwise_affine=False)
        self.qkv = nn.Linear(WIDTH, 3 * WIDTH)
        self.attn_out = nn.Linear(WIDTH, WIDTH)
        self.mlp = nn.Sequential(
            nn.Linear(WIDTH, 4 * WIDTH), nn.GELU(approximate="tanh"), nn.Linear(4 * WIDTH, WIDTH)
        )
        self.adaLN_modulation = nn.Sequential(nn.SiLU(), nn.Linear(WIDTH, 6 * WIDTH))
        nn.init.zeros_(self.adaLN_modulation[-1].weight)  # adaLN-Zero
        nn.init.zeros_(self.adaLN_modulation[-1].bias)
        if zero_out:  # ... and the residual branches' last layers, U-Net style
            for layer in (self.attn_out, self.mlp[2]):
                nn.init.zeros_(layer.weight)
                nn.init.zeros_(layer.bias)

    def attention(self, x):
        b, t, _ = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, HEADS, -1).permute(2, 0, 3, 1, 4)
        a = (q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])).softmax(-1) @ v
        return self.attn_out(a.transpose(1, 2).reshape(b, t, WIDTH))

    def forward(self, x, c):
        shift1, scale1, gate1, shift2, scale2, gate2 = self.adaLN_modulation(c).chunk(6, -1)
        x = x + gate1[:, None] * self.attention(modulate(self.norm1(x), shift1, scale1))
        return x + gate2[:, None] * self.mlp(modulate(self.norm2(x), shift2, scale2))


def timestep_embedding(t, dim=WIDTH):
    freqs = torch.exp(-math.log(10000) * torch.arange(dim // 2) / (dim // 2))
    args = t[:, None].float() * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], -1)


class DiT(nn.Module):
    def __init__(self, zero_out):
        super().__init__()
        self.patch = nn.Linear(CHANNELS * PATCH * PATCH, WIDTH)
        self.pos = nn.Parameter(0.02 * torch.randn((SIDE // PATCH) ** 2, WIDTH))
        self.t_embed = nn.Sequential(nn.Linear(WIDTH, WIDTH), nn.SiLU(), nn.Linear(WIDTH, WIDTH))
        self.y_embed = nn.Embedding(CLASSES, WIDTH)
        self.blocks = nn.ModuleList([Block(zero_out) for _ in range(2)])
        self.final_norm = nn.LayerNorm(WIDTH, elementwise_affine=False)
        self.final_modulation = nn.Sequential(nn.SiLU(), nn.Linear(WIDTH, 2 * WIDTH))
        nn.init.zeros_(self.final_modulation[-1].weight)
        nn.init.zeros_(self.final_modulation[-1].bias)
        self.final = nn.Linear(WIDTH, CHANNELS * PATCH * PATCH)

    def forward(self, x, t, y):
        b = x.shape[0]
        n = SIDE // PATCH
        patches = x.view(b, CHANNELS, n, PATCH, n, PATCH).permute(0, 2, 4, 1, 3, 5)
        h = self.patch(patches.reshape(b, n * n, -1)) + self.pos
        c = self.t_embed(timestep_embedding(t)) + self.y_embed(y)
        for block in self.blocks:
            h = block(h, c)
        shift, scale = self.final_modulation(c).chunk(2, -1)
        out = self.final(modulate(self.final_norm(h), shift, scale))
        out = out.view(b, n, n, CHANNELS, PATCH, PATCH).permute(0, 3, 1, 4, 2, 5)
        return out.reshape(b, CHANNELS, SIDE, SIDE)


def data():
    g = torch.Generator().manual_seed(1)
    x0 = torch.randn(16, CHANNELS, SIDE, SIDE, generator=g)
    y = torch.randint(0, CLASSES, (16,), generator=g)
    t = torch.randint(0, STEPS, (16,), generator=g)
    noise = torch.randn(16, CHANNELS, SIDE, SIDE, generator=g)
    alpha_bar = torch.cumprod(1 - torch.linspace(1e-4, 0.02, STEPS), 0)[t][:, None, None, None]
    return alpha_bar.sqrt() * x0 + (1 - alpha_bar).sqrt() * noise, t, y, noise


def step(watch, zero_out=True):
    torch.manual_seed(0)
    model = DiT(zero_out)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01)
    x_t, t, y, noise = data()
    grads, losses = [], []
    with watch(model) as w:
        for _ in range(2):
            optimizer.zero_grad()
            loss = F.mse_loss(model(x_t, t, y), noise)
            loss.backward()
            losses.append(float(loss.detach()))
            grads.append({n: p.grad.detach().clone() for n, p in model.named_parameters()})
            optimizer.step()
    gates = torch.stack([b.adaLN_modulation[-1].weight.detach().abs().sum() for b in model.blocks])
    return Run(w=w, model=model, grads=grads, losses=losses, gates=float(gates.sum()))


def _zero(g):
    return bool(torch.isfinite(g).all()) and bool(g.abs().sum() == 0)


def truth(run):
    assert all(math.isfinite(v) for v in run.losses)
    first, second = run.grads
    for n in first:
        if n.startswith("blocks."):
            assert _zero(first[n]) and _zero(second[n]), n
        else:
            assert _zero(first[n]) == n.startswith(("t_embed.", "y_embed.")), n
            assert bool(torch.isfinite(second[n]).all()) and bool(second[n].abs().sum() > 0), n
    assert run.gates == 0.0  # the modulation (gates included) never left zero
    assert float(run.model.blocks[0].attn_out.weight.detach().abs().sum()) == 0.0
