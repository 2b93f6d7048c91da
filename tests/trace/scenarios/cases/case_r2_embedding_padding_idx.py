"""Control: nn.Embedding(padding_idx=0) on padded sequences.  The padding row's gradient is
exactly zero on purpose ("the entries at padding_idx do not contribute to the gradient"), every
other used row gets one, and the step is fine.

Source: https://minibatchai.com/nlp/2021/06/22/Embedding.html ("Padding in PyTorch and TensorFlow
embedding layers": embedding of size 7, padding_idx=0, inputs [[1, 1, 2, 6, 0], [1, 5, 5, 0,
0]] through a Linear(1, 1); "Note that the weight for padding_idx i.e. 0 here is zero").
"""

import torch
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn

SOURCE = "https://minibatchai.com/nlp/2021/06/22/Embedding.html"
DESCRIPTION = "control: Embedding(padding_idx=0); pad row's gradient zero by design"
ASK = []
MUST = [[HEALTHY_OK, r"padding_idx"]]
MUST_NOT = [
    CLAIMS_NO_ZERO_GRAD,
    CLAIMS_NONFINITE,
    r"embed\.weight[^\n]{0,40}(got|gets|has|had|received) (an? )?(all-?zero|zero|no) gradient",
    r"never called",
]


class PadModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(7, 1, padding_idx=0)
        self.lin = nn.Linear(1, 1)

    def forward(self, idx):
        return self.lin(self.embed(idx))


def step(watch):
    torch.manual_seed(0)
    model = PadModel()
    idx = torch.tensor([[1, 1, 2, 6, 0], [1, 5, 5, 0, 0]])
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with watch(model) as w:
        opt.zero_grad()
        z = model(idx)
        weight = torch.rand_like(z)  # weight each location so the rows' gradients differ
        loss = torch.sum(z * weight)
        loss.backward()
        opt.step()
    return Run(w=w, model=model)


def truth(run):
    g = run.model.embed.weight.grad
    assert bool((g[0] == 0).all())  # the padding row, by design
    assert bool((g[[1, 2, 5, 6]] != 0).all())  # every other row that was used
    assert bool((run.model.embed.weight.detach()[0] == 0).all())  # the pad stays zero
