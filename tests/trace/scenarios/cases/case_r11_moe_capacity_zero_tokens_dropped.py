"""A top-1 mixture-of-experts layer with an expert capacity, ``capacity = int(capacity_factor *
tokens / num_experts)``, tokens over capacity dropped and passed through the residual unchanged.
With a small micro-batch (16 tokens, 4 experts) and a capacity factor of 0.2 the capacity rounds
down to 0: every token is dropped, no expert ever runs, and the experts and the router (whose
gate only multiplies the experts' outputs) get no gradient (``.grad`` None).  Only the head after
the residual trains; the layer is the identity.

Source: https://apxml.com/courses/mixture-of-experts/chapter-3-moe-training-dynamics-optimization/handling-dropped-tokens
("Tokens assigned to an expert that has already reached its capacity C are referred to as
"dropped tokens" ... their input representation is passed through the MoE layer unchanged"; "yk =
xk + 0.  The MoE contribution is zero because the token never entered the expert computation").
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://apxml.com/courses/mixture-of-experts/"
    "chapter-3-moe-training-dynamics-optimization/handling-dropped-tokens"
)
DESCRIPTION = "MoE capacity int(0.2 * 16 / 4) = 0: every token dropped, experts and router no grad"
ASK = ["experts.0.weight"]
MUST = [
    [r"^summary:[^\n]*experts\.\d"],
    [
        r"never (ran|run|called|used)",
        r"not (called|used|run)\b",
        r"did not run",
        r"no (tokens?|inputs?)",
        r"capacity",
        r"dropped",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"no_grad", r"detach"]
E, TOKENS = 4, 16


class CapacityMoE(nn.Module):
    def __init__(self, capacity_factor: float):
        super().__init__()
        self.capacity_factor = capacity_factor
        self.router = nn.Linear(8, E)
        self.experts = nn.ModuleList(nn.Linear(8, 8) for _ in range(E))
        self.head = nn.Linear(8, 1)
        self.tokens_per_expert = None

    def forward(self, x):
        probs = self.router(x).softmax(-1)
        gate, idx = probs.max(-1)
        capacity = int(self.capacity_factor * x.shape[0] / E)
        out = torch.zeros_like(x)
        counts = []
        for e, expert in enumerate(self.experts):
            rows = (idx == e).nonzero().flatten()[:capacity]  # over capacity: dropped
            counts.append(rows.numel())
            if rows.numel():
                out = out.index_add(0, rows, gate[rows, None] * expert(x[rows]))
        self.tokens_per_expert = counts
        return self.head(torch.tanh(x + out))  # dropped tokens pass through the residual


def step(watch, capacity_factor: float = 0.2):
    torch.manual_seed(0)
    model = CapacityMoE(capacity_factor)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(TOKENS, 8, generator=g), torch.randn(TOKENS, 1, generator=g)
    with watch(model) as w:
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
    grads = {n: p.grad for n, p in model.named_parameters()}
    return Run(w=w, grads=grads, counts=model.tokens_per_expert)


def truth(run):
    assert run.counts == [0] * E
    for n, g in run.grads.items():
        if n.startswith(("experts.", "router.")):
            assert g is None, n
        else:
            assert g is not None and bool(g.abs().sum() > 0), n
