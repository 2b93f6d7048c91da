"""A Flamingo-style adapter: a frozen language model with one gated cross-attention block inserted
before each of its two blocks, ``h = h + tanh(gate) * xattn(h, visual)`` (and the same for a gated
feed-forward), the gates starting at zero so that the model starts as the text-only LM.  The gates
are made as ``torch.zeros(1, requires_grad=True)``, plain tensors assigned to the module, not
``nn.Parameter``: they are not in ``model.parameters()``, so the optimizer, built over the
trainable parameters, does not hold them.  Backward gives them a ``.grad`` (which sums both watched
steps, nothing zeroes it) but nothing ever moves them off zero, so ``tanh(gate)`` stays 0: the
cross-attention, the feed-forward and the resampler get exactly zero gradient on every step, and the
adapter never trains.  Nothing raises; every gradient is finite.

Source: https://www.textbookofai.com/glossary/flamingo.html ("Each layer applies cross-attention
from LM hidden states (queries) to the visual tokens (keys/values), gated by a learned scalar:
h' = h + tanh(α) · CrossAttn(h, V_img). The gate α is initialised to 0 so that at the start of
training, Flamingo is exactly the original LM. Only the cross-attention layers, the resampler, and
the gate parameters are trained").  Adapted: a frozen LM of an embedding, two ``Linear, GELU,
Linear`` residual blocks and a head (width 16, 20 tokens), a fixed batch of visual features (6 per
image, width 12) through a trainable ``Linear`` resampler, ``nn.MultiheadAttention`` with 2 heads,
next-token cross-entropy, AdamW at 1e-3 over the parameters that require grad, two steps watched.
"""

import math

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://www.textbookofai.com/glossary/flamingo.html"
DESCRIPTION = "Flamingo gates are plain tensors, not nn.Parameter: not optimized, tanh(0) forever"
ASK = ["xattn.0.in_proj_weight"]
MUST = [
    [
        r"nn\.Parameter",
        r"not (a |an |registered|in (model\.)?parameters)",
        r"plain tensors?",
        r"unregistered",
        r"not (in|held by) (the |any )?optimi[sz]er",
        r"no optimi[sz]er",
    ],
    [r"gates?", r"tanh", r"zero"],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b"]
VOCAB, WIDTH, VIS, TOKENS, LENGTH = 20, 16, 12, 6, 8


class GatedXAttnLM(nn.Module):
    def __init__(self, parameter_gates):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.blocks = nn.ModuleList(
            nn.Sequential(nn.Linear(WIDTH, 32), nn.GELU(), nn.Linear(32, WIDTH)) for _ in range(2)
        )
        self.head = nn.Linear(WIDTH, VOCAB)
        for p in self.parameters():  # the pretrained LM stays frozen
            p.requires_grad_(False)
        self.resampler = nn.Linear(VIS, WIDTH)
        self.xattn = nn.ModuleList(
            nn.MultiheadAttention(WIDTH, 2, batch_first=True) for _ in range(2)
        )
        self.xff = nn.ModuleList(
            nn.Sequential(nn.Linear(WIDTH, 32), nn.GELU(), nn.Linear(32, WIDTH)) for _ in range(2)
        )
        if parameter_gates:
            self.attn_gates = nn.ParameterList(nn.Parameter(torch.zeros(1)) for _ in range(2))
            self.ff_gates = nn.ParameterList(nn.Parameter(torch.zeros(1)) for _ in range(2))
        else:
            self.attn_gates = [torch.zeros(1, requires_grad=True) for _ in range(2)]
            self.ff_gates = [torch.zeros(1, requires_grad=True) for _ in range(2)]

    def forward(self, tokens, visual):
        v = self.resampler(visual)
        h = self.embed(tokens)
        for i in range(2):
            h = h + torch.tanh(self.attn_gates[i]) * self.xattn[i](h, v, v)[0]
            h = h + torch.tanh(self.ff_gates[i]) * self.xff[i](h)
            h = h + self.blocks[i](h)
        return self.head(h)


def data():
    g = torch.Generator().manual_seed(3)
    tokens = torch.randint(0, VOCAB, (4, LENGTH + 1), generator=g)
    visual = torch.randn(4, TOKENS, VIS, generator=g)
    return tokens, visual


def step(watch, parameter_gates=False):
    torch.manual_seed(0)
    model = GatedXAttnLM(parameter_gates)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    tokens, visual = data()
    grads, losses = [], []
    with watch(model) as w:
        for _ in range(2):
            optimizer.zero_grad()
            logits = model(tokens[:, :-1], visual)
            loss = F.cross_entropy(logits.reshape(-1, VOCAB), tokens[:, 1:].reshape(-1))
            loss.backward()
            grads.append(
                {
                    n: p.grad.detach().clone()
                    for n, p in model.named_parameters()
                    if p.grad is not None
                }
            )
            optimizer.step()
            losses.append(float(loss.detach()))
    gates = list(model.attn_gates) + list(model.ff_gates)
    return Run(
        w=w,
        grads=grads,
        losses=losses,
        gates=[float(g.detach()) for g in gates],
        gate_grads=[None if g.grad is None else float(g.grad) for g in gates],
        held={id(p) for group in optimizer.param_groups for p in group["params"]},
        gate_ids=[id(g) for g in gates],
        names=[n for n, p in model.named_parameters() if p.requires_grad],
    )


def truth(run):
    assert all(math.isfinite(v) for v in run.losses)
    assert not any(i in run.held for i in run.gate_ids)  # no optimizer holds a gate
    assert run.gates == [0.0] * 4  # never moved
    assert all(g is not None and g != 0.0 for g in run.gate_grads[:2])  # .grad, never applied
    for grads in run.grads:
        assert set(grads) == set(run.names)  # the LM is frozen, the adapter has a .grad
        for n in run.names:
            assert bool(torch.isfinite(grads[n]).all()), n
            assert bool(grads[n].abs().sum() == 0), n  # behind tanh(0): exactly zero
    assert run.losses[0] == run.losses[1]
