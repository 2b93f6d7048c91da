"""An argmax between two parts of the model: the index it returns carries no gradient, so the
layer before it gets none (its .grad stays None).

Source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1 (copy of the PyTorch forum
thread "Confused about torch.max() and gradient": "argmax ... it cannot have a gradient
function"); same cause in https://codemia.io/knowledge-hub/path/intermediate_layer_makes_tensorflow_optimizer_to_stop_working_1
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1 (forum thread 'Confused about torch.max() and gradient')"
DESCRIPTION = "argmax between 'first' and a lookup table: first gets no gradient"
ASK = ["first.weight"]
MUST = [
    [r"\bfirst\b"],
    [
        r"argmax",
        r"integer",
        r"not differentiable",
        r"non-differentiable",
        r"\bcut\b",
        r"\blong\b",
        r"\bindex",
    ],
]
MUST_NOT = [FALSE_OK]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = nn.Linear(8, 5)
        self.table = nn.Embedding(5, 8)
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        choice = self.first(x).argmax(1)
        return self.head(self.table(choice))


def step(watch):
    torch.manual_seed(0)
    model = Net()
    x, y = torch.randn(16, 8), torch.randint(0, 2, (16,))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with watch(model) as w:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    return Run(w=w, model=model)


def truth(run):
    assert run.model.first.weight.grad is None and run.model.first.bias.grad is None
    assert run.model.table.weight.grad is not None and run.model.head.weight.grad is not None
