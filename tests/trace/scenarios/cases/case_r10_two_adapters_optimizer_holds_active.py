"""Two LoRA adapters, ``a`` and ``b``, on one frozen base; ``set_adapter(name)`` makes that adapter
the one used in the forward and the only one with ``requires_grad`` (as PEFT's does).  Requests
interleave: ``forward_backward(a)``, ``forward_backward(b)``, ``optim_step(a)``; the optimizer of
``optim_step(a)`` is built from ``[p for p in model.parameters() if p.requires_grad]``, which
depends on the adapter active *now*: ``b``.  So adapter ``a``'s step updates ``b``'s parameters
with ``b``'s gradient, and ``a``'s parameters, which hold a gradient, never move.

Source: https://github.com/gke-labs/open-rl/pull/80 ("optim_step(A) grabbed params with [p for p in
self.peft_model.parameters() if p.requires_grad], but requires_grad depends on whichever adapter is
currently active. So if B was active, A's optimizer could accidentally get B's params").  The
adapters start from trained values (B nonzero), as adapters of running jobs are.
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn


class TwoAdapters(nn.Module):
    def __init__(self):
        super().__init__()
        self.base = nn.Linear(8, 16)
        self.head = nn.Linear(16, 3)
        self.adapters = nn.ModuleDict(
            {
                k: nn.Sequential(nn.Linear(8, 2, bias=False), nn.Linear(2, 16, bias=False))
                for k in ("a", "b")
            }
        )
        self.base.requires_grad_(False)
        self.head.requires_grad_(False)
        self.active = "a"

    def set_adapter(self, name):
        self.active = name
        for k, ad in self.adapters.items():
            ad.requires_grad_(k == name)

    def forward(self, x):
        h = self.base(x) + self.adapters[self.active](x)
        return self.head(torch.relu(h))


SOURCE = "https://github.com/gke-labs/open-rl/pull/80"
DESCRIPTION = (
    "two adapters; optim_step(a) builds its optimizer from requires_grad params while b is active"
)
ASK = ["adapters.a.0.weight"]
MUST = [
    [r"adapters\.a\."],
    [
        (
            r"no optimizer|not (held|in)[^\n]*optimizer|optimizer[^\n]*(does not|doesn't|never) hold"
            r"|(did not|didn't|never) (move|change)|unchanged|not (been )?updated"
        )
    ],
]
MUST_NOT = [FALSE_OK]


def step(watch, cached: bool = False):
    torch.manual_seed(0)
    model = TwoAdapters()
    cache = {}
    for k in ("a", "b"):
        model.set_adapter(k)
        cache[k] = [p for p in model.parameters() if p.requires_grad]
    g = torch.Generator().manual_seed(1)
    data = {
        k: (torch.randn(16, 8, generator=g), torch.randint(0, 3, (16,), generator=g))
        for k in ("a", "b")
    }
    a0 = [p.detach().clone() for p in model.adapters["a"].parameters()]
    b0 = [p.detach().clone() for p in model.adapters["b"].parameters()]
    optimizers = {}
    with watch(model) as w:
        for k in ("a", "b"):  # forward_backward(a), forward_backward(b)
            model.set_adapter(k)
            x, y = data[k]
            nn.functional.cross_entropy(model(x), y).backward()
        for k in ("a", "b") if cached else ("a",):  # optim_step(a) (then b's, when cached)
            params = cache[k] if cached else [p for p in model.parameters() if p.requires_grad]
            optimizers[k] = torch.optim.AdamW(params, lr=1e-2)
            optimizers[k].step()
            optimizers[k].zero_grad()
    return Run(w=w, model=model, a0=a0, b0=b0, optimizers=optimizers)


def truth(run):
    a_params = list(run.model.adapters["a"].parameters())
    b_params = list(run.model.adapters["b"].parameters())
    held = run.optimizers["a"].param_groups[0]["params"]
    assert all(any(p is q for q in b_params) for p in held)  # a's optimizer holds b's parameters
    assert all(torch.equal(p.detach(), p0) for p, p0 in zip(a_params, run.a0, strict=True))
    assert all(p.grad is not None for p in a_params)  # a's gradient is there, never used
    assert not torch.equal(b_params[0].detach(), run.b0[0])
