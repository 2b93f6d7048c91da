"""A classifier whose output layer is built inside ``forward``: ``self.head = nn.Linear(...)`` runs
at every call.  A first forward (a shape check) ran before the optimizer was built, so the
optimizer holds that first head; each training forward replaces it with a new, untrained one.
The head used in the loss gets a gradient that no optimizer reads, the head the optimizer holds
gets none, and the logits come from fresh random weights at every batch.

Source: https://thecodeforge.io/ml-ai/pytorch-neural-network/ ("Layers in forward() create new
weights each batch--optimizer updates old ones"; "Defining layers inside forward() creates new
untrained weights every pass -- the optimizer updates weights that are immediately discarded").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://thecodeforge.io/ml-ai/pytorch-neural-network/"
DESCRIPTION = "self.head = nn.Linear(...) inside forward: a new head each call, optimizer's unused"
ASK = ["head.weight"]
MUST = [
    [
        r"(made|created|built|defined|assigned)[^\n]{0,40}(in|inside|during) [^\n]{0,10}forward",
        r"forward[^\n]{0,40}(creat|build|construct|assign)",
        r"(new|fresh|another) (nn\.)?(Parameter|module|layer|Linear|head|weights?)",
        r"replac",
        r"re-?(created|built|initiali[sz]ed|assigned)",
        r"not (held|in (the|any) optimizer)",
        r"no optimizer",
        r"optimizer[^\n]{0,60}(does not|doesn't|did not|never) (hold|read|see)",
    ]
]
MUST_NOT = [FALSE_OK]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 16), nn.ReLU())

    def forward(self, x):
        h = self.body(x)
        self.head = nn.Linear(16, 3)  # the slip: a new layer at every call
        return self.head(h)


def step(watch):
    torch.manual_seed(0)
    model = Net()
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        model(torch.randn(2, 8, generator=g))  # shape check before the optimizer exists
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    held_head = model.head
    held_before = held_head.weight.detach().clone()
    body_before = model.body[0].weight.detach().clone()
    batches = [
        (torch.randn(16, 8, generator=g), torch.randint(0, 3, (16,), generator=g)) for _ in range(2)
    ]
    used_heads = []
    with watch(model) as w:
        for x, y in batches:
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            used_heads.append(model.head)
            opt.step()
    return Run(
        w=w,
        model=model,
        opt=opt,
        held_head=held_head,
        held_before=held_before,
        body_before=body_before,
        used_heads=used_heads,
    )


def truth(run):
    held = {id(p) for group in run.opt.param_groups for p in group["params"]}
    assert run.held_head.weight.grad is None  # the head the optimizer holds is never used
    assert torch.equal(run.held_head.weight.detach(), run.held_before)
    assert run.used_heads[0] is not run.used_heads[1]  # a new head at every call
    for head in run.used_heads:
        assert id(head.weight) not in held  # no optimizer holds the heads that were used
        assert head.weight.grad is not None and bool(head.weight.grad.abs().sum() > 0)
    assert not torch.equal(run.model.body[0].weight.detach(), run.body_before)  # body trains
