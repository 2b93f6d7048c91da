"""Control: a batch of sequences of different lengths, each run through the GRU model on its own,
their losses summed in a Python loop (``loss += loss_part``) and one ``backward()`` of the sum,
then one optimizer step.  The user suspected the summed loss (memory grew); the gradient is
exactly the sum of the per-sequence gradients, from one backward pass.

Source: https://discuss.pytorch.org/t/gpu-memory-increase-while-i-wanna-to-backward-with-accumulative-loss/43284
("loss = 0; for i in range(n): loss_part = criteria(); loss += loss_part; loss.backward()";
"I have different dimension of data in a batch (sequence in different length). So I wanna to
calculate every criteria(seq_i) and then sum them"; "It seems the increase is not caused by
accumulative loss").
"""

import torch
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://discuss.pytorch.org/t/"
    "gpu-memory-increase-while-i-wanna-to-backward-with-accumulative-loss/43284"
)
DESCRIPTION = "control: per-sequence losses of 3 GRU calls summed, one backward, one step"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_NO_ZERO_GRAD,
    r"\b(2|3|two|three|several) backward passes",
    r"same graph",
    r"retain_graph",
    r"micro-?batch",
]


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(5, 12, batch_first=True)
        self.out = nn.Linear(12, 3)

    def forward(self, seq):
        h, _ = self.gru(seq)
        return self.out(h)


def _data():
    g = torch.Generator().manual_seed(1)
    return [
        (torch.randn(1, n, 5, generator=g), torch.randint(0, 3, (n,), generator=g))
        for n in (3, 6, 4)
    ]


def _summed_loss(model, data):
    loss = 0
    for seq, tags in data:
        loss_part = F.cross_entropy(model(seq)[0], tags)
        loss += loss_part
    return loss


def step(watch):
    torch.manual_seed(0)
    model = Tagger()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    data = _data()
    with watch(model) as w:
        opt.zero_grad()
        loss = _summed_loss(model, data)
        loss.backward()
        grads = [p.grad.clone() for p in model.parameters()]
        opt.step()
    return Run(w=w, model=model, grads=grads, data=data)


def truth(run):
    torch.manual_seed(0)
    ref = Tagger()
    parts = [
        torch.autograd.grad(F.cross_entropy(ref(seq)[0], tags), list(ref.parameters()))
        for seq, tags in run.data
    ]
    for i, g in enumerate(run.grads):
        assert torch.allclose(g, sum(p[i] for p in parts), atol=1e-6)
        assert bool(g.abs().sum() > 0)
