"""Slot attention with every slot started from the learned mean alone, ``slots =
slots_mu.expand(B, K, D)`` (the deterministic start some code uses at evaluation), the Gaussian
noise ``exp(slots_log_sigma) * randn`` left out.  The K slots start equal, and every operation of
an iteration treats them alike: the softmax over slots gives each input exactly ``1/K`` to every
slot, the weighted means of the values are the same, the shared GRU and MLP return equal slots.
After three iterations the slots are still identical; each slot decodes the same prediction for
every input.  The loss's gradient cannot break the tie: the gradient of the softmax over equal
slots cancels, so the query and key projections and the slots' ``LayerNorm`` get gradients of
rounding size (below 1e-8, against 1e-1 elsewhere), and ``slots_log_sigma``, unused, gets none
(``.grad`` stays ``None``).  Nothing raises, nothing is NaN.

Source: https://www.emergentmind.com/topics/slot-attention-mechanism ("Slot Attention enables the
extraction of a fixed set of task-dependent “slot” representations from dense perceptual features";
"Each slot is intended to bind to a distinct entity or object within a scene through a competitive,
iterative attention routing scheme"; "The module operates via rounds of refinement, starting from
randomly (or learnably) initialized slots").  Adapted: the slots started from the mean without
noise (the page gives the module, not the slip); 8 scenes of 16 points (2-D position and 2 colour
values, three clusters), encoder ``Linear(4, 32), Tanh, Linear(32, 32)`` and ``LayerNorm``, K = 3
slots of 32, 3 iterations with a ``GRUCell(32, 32)`` and an MLP ``Linear(32, 64), Tanh, Linear(64,
32)``, the slots' ``LayerNorm`` without a bias (a shift common to every slot cancels in the
softmax over slots: its gradient would be rounding), each point reconstructed as the
attention-weighted sum of the slots' ``Linear(32, 4)`` predictions, a mean squared error, Adam at
1e-3.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://www.emergentmind.com/topics/slot-attention-mechanism"
DESCRIPTION = "slot attention slots = mu.expand(...), no noise: slots stay identical, q/k grads ~0"
ASK = ["slot_attention.slots_log_sigma"]
MUST = [
    [
        r"identical",
        r"\b(the )?same (value|slot|vector|row|initial)",
        r"equal (slots|rows|candidates|scores|values)",
        r"symmetr\w*",
        r"\b1\s?/\s?K\b|uniform",
        r"noise",
        r"random(ly)? (init\w*|start\w*|sampl\w*)",
        r"log_sigma[^\n]{0,80}(not used|unused|never used|not part of)",
        r"log_sigma[^\n]{0,80}does not (enter|reach|affect)",
    ]
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b", r"requires_grad\s*(=|is|was)?\s*False"]
K, D, ITERS, POINTS = 3, 32, 3, 16


class SlotAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.slots_mu = nn.Parameter(torch.randn(1, 1, D) * 0.5)
        self.slots_log_sigma = nn.Parameter(torch.full((1, 1, D), -1.0))
        self.to_q = nn.Linear(D, D, bias=False)
        self.to_k = nn.Linear(D, D, bias=False)
        self.to_v = nn.Linear(D, D, bias=False)
        self.gru = nn.GRUCell(D, D)
        self.mlp = nn.Sequential(nn.Linear(D, 64), nn.Tanh(), nn.Linear(64, D))
        self.norm_inputs, self.norm_mlp = nn.LayerNorm(D), nn.LayerNorm(D)
        self.norm_slots = nn.LayerNorm(D, bias=False)

    def forward(self, inputs, noise):
        b = inputs.shape[0]
        if noise:
            slots = self.slots_mu + self.slots_log_sigma.exp() * torch.randn(b, K, D)
        else:
            slots = self.slots_mu.expand(b, K, D)
        inputs = self.norm_inputs(inputs)
        k, v = self.to_k(inputs), self.to_v(inputs)
        for _ in range(ITERS):
            q = self.to_q(self.norm_slots(slots))
            attn = torch.softmax(torch.einsum("bnd,bkd->bnk", k, q) * D**-0.5, dim=-1) + 1e-8
            updates = torch.einsum("bnk,bnd->bkd", attn / attn.sum(1, keepdim=True), v)
            slots = self.gru(updates.reshape(-1, D), slots.reshape(-1, D)).reshape(b, K, D)
            slots = slots + self.mlp(self.norm_mlp(slots))
        return slots, attn


class Autoencoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(4, D), nn.Tanh(), nn.Linear(D, D))
        self.slot_attention = SlotAttention()
        self.decoder = nn.Linear(D, 4)

    def forward(self, x, noise):
        slots, attn = self.slot_attention(self.encoder(x), noise)
        recon = torch.einsum("bnk,bkf->bnf", attn, self.decoder(slots))
        return recon, slots, attn


def scenes():
    g = torch.Generator().manual_seed(1)
    centres = torch.randn(8, 3, 4, generator=g) * 2
    which = torch.randint(0, 3, (8, POINTS), generator=g)
    return centres.gather(1, which[..., None].expand(-1, -1, 4)) + 0.1 * torch.randn(
        8, POINTS, 4, generator=g
    )


def step(watch, noise=False):
    torch.manual_seed(0)
    model = Autoencoder()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = scenes()
    with watch(model) as w:
        optimizer.zero_grad()
        recon, slots, attn = model(x, noise)
        loss = F.mse_loss(recon, x)
        loss.backward()
        grads = {
            n: None if p.grad is None else p.grad.detach().clone()
            for n, p in model.named_parameters()
        }
        optimizer.step()
    return Run(w=w, slots=slots.detach(), attn=attn.detach(), grads=grads)


def truth(run):
    for k in range(1, K):  # the slots never separate
        assert torch.equal(run.slots[:, k], run.slots[:, 0]), k
        assert torch.equal(run.attn[..., k], run.attn[..., 0]), k
    assert run.grads["slot_attention.slots_log_sigma"] is None
    tie = (
        "slot_attention.to_q.weight",
        "slot_attention.to_k.weight",
        "slot_attention.norm_slots.weight",
    )
    for n in tie:
        assert float(run.grads[n].abs().max()) < 1e-7, n
    for n in ("encoder.0.weight", "slot_attention.to_v.weight", "decoder.weight"):
        assert bool(run.grads[n].abs().sum() > 1e-3), n
