"""Control: multi-task training with one shared encoder and one head per task, one task sampled
per batch (hard parameter sharing), one Adam over everything, ``zero_grad()`` with its default
``set_to_none=True``.  In the watched batch (task "topic") the sentiment head is not used: its
``.grad`` stays None and Adam skips it, as designed; the encoder and the topic head train.

Source: https://mljourney.com/?p=4905 ("Hard parameter sharing ... All parameters in the backbone
are updated by gradients from every task, while each head is updated only by its own task's
loss"; its ``HardSharingMultiTaskModel`` with ``self.heads = nn.ModuleDict``).
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn

SOURCE = "https://mljourney.com/?p=4905"
DESCRIPTION = "control: per-batch sampled task, unused head's .grad None, Adam skips it: healthy"
ASK = []
MUST = [
    [
        HEALTHY_OK,
        r"heads\.sentiment[^\n]{0,100}(not (called|used|run)|did not run|never ran|unused)",
    ]
]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"heads\.sentiment[^\n]{0,80}(moved|weight decay|momentum)",
    r"zero_grad[^\n]{0,20}(missing|not called)",
    r"heads\.topic[^\n]{0,60}(no gradient|\bNone\b)",
]


class MultiTask(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(10, 32), nn.ReLU())
        self.heads = nn.ModuleDict(
            {
                "sentiment": nn.Sequential(nn.Dropout(0.1), nn.Linear(32, 3)),
                "topic": nn.Sequential(nn.Dropout(0.1), nn.Linear(32, 8)),
            }
        )

    def forward(self, x, task):
        return self.heads[task](self.encoder(x))


def step(watch):
    torch.manual_seed(0)
    model = MultiTask()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)

    def batch(task, n_classes):
        x, y = torch.randn(16, 10, generator=g), torch.randint(0, n_classes, (16,), generator=g)
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x, task), y).backward()
        optimizer.step()

    batch("sentiment", 3)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    with watch(model) as w:
        batch("topic", 8)
    after = {n: p.detach().clone() for n, p in model.named_parameters()}
    grads = {n: p.grad for n, p in model.named_parameters()}
    return Run(w=w, before=before, after=after, grads=grads)


def truth(run):
    for n in run.before:
        if n.startswith("heads.sentiment"):
            assert run.grads[n] is None and torch.equal(run.before[n], run.after[n]), n
        else:
            assert not torch.equal(run.before[n], run.after[n]), n
