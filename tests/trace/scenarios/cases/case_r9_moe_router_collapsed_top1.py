"""A mixture-of-experts layer with top-1 routing whose router has collapsed: every token goes to
expert 0 (the router's bias favours it, as after the collapse reported).  Experts 1 to 3 never run
in the forward; their parameters get no gradient (``.grad`` None) and never train, and only expert
0 and the router's selected logit learn.

Source: https://github.com/pytorch/torchtitan/issues/1246 ("Router collapse on deepseek training
loop": "as the training progresses, sometimes most tokens are routed to the same expert";
``topk_idx: [30, 30, 30, 30, 30, 30, 30, 30]`` with topk=1).  The step is a small MoE regressor
with the loop over experts most implementations use (an expert runs only on its tokens).
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn

SOURCE = "https://github.com/pytorch/torchtitan/issues/1246"
DESCRIPTION = "MoE top-1, router collapsed onto expert 0: experts 1-3 never run, .grad None"
ASK = ["experts.1.weight"]
MUST = [
    [r"^summary:[^\n]*experts\.[123]"],
    [
        r"never (ran|run|called|used)",
        r"not (called|used|run)\b",
        r"did not run",
        r"no (tokens?|inputs?)",
        r"rout",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"detach", r"no_grad"]


class MoE(nn.Module):
    def __init__(self, top_k: int):
        super().__init__()
        self.top_k = top_k
        self.router = nn.Linear(8, 4)
        self.experts = nn.ModuleList(nn.Linear(8, 8) for _ in range(4))
        self.head = nn.Linear(8, 1)
        self.aux = None

    def forward(self, x):
        probs = self.router(x).softmax(-1)
        weights, idx = probs.topk(self.top_k, dim=-1)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            rows, slot = (idx == e).nonzero(as_tuple=True)
            if rows.numel():
                out = out.index_add(0, rows, weights[rows, slot, None] * expert(x[rows]))
        # Switch-style load balancing: fraction routed x mean router probability
        frac = torch.zeros(4).index_add(0, idx.flatten(), torch.ones(idx.numel())) / idx.numel()
        self.aux = 4 * (frac * probs.mean(0)).sum()
        return self.head(torch.relu(out)), idx


def step(watch, balanced: bool = False):
    torch.manual_seed(0)
    model = MoE(top_k=2 if balanced else 1)
    if not balanced:
        with torch.no_grad():
            model.router.bias.copy_(torch.tensor([6.0, 0.0, 0.0, 0.0]))  # collapsed
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(64, 8, generator=g), torch.randn(64, 1, generator=g)
    with watch(model) as w:
        optimizer.zero_grad()
        pred, idx = model(x)
        loss = nn.functional.mse_loss(pred, y)
        if balanced:
            loss = loss + 0.01 * model.aux
        loss.backward()
        optimizer.step()
    return Run(w=w, idx=idx, grads={n: p.grad for n, p in model.named_parameters()})


def truth(run):
    assert bool((run.idx == 0).all())  # every token to expert 0
    assert run.grads["experts.0.weight"] is not None
    for e in (1, 2, 3):
        assert run.grads[f"experts.{e}.weight"] is None, e
