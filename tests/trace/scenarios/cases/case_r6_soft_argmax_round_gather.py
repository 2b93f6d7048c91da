"""A classifier branch picks which output of a regression branch to return: a soft-argmax gives
a (fractional) class index, ``.round().long()`` makes it an integer and ``gather`` indexes the
regression outputs with it.  Rounding and the integer cast have no gradient, so the classifier
layers get no gradient at all (``.grad`` None) and never train; only the regression layer does.

Source: https://ai.stackexchange.com/questions/41264/how-to-do-backpropagation-with-argmax
("Based on the output class of the first network, my goal is to retrieve the corresponding value
from the linear network using indexing"; "converting classification_value, which essentially
represents the index, to an integer causes the backpropagation to be truncated").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://ai.stackexchange.com/questions/41264/how-to-do-backpropagation-with-argmax"
DESCRIPTION = "soft-argmax index .round().long() into gather: classifier layers get no gradient"
ASK = ["classifier_fc1.weight"]
MUST = [
    [
        r"classifier_fc1[^\n]{0,160}(None|no gradient|never|not reach|did not|didn't)",
        r"(None|no gradient|never|not reach|did not)[^\n]{0,160}classifier_fc1",
    ],
    [
        r"\bround",
        r"RoundBackward",
        r"\.long\(",
        r"integer",
        r"\bint64\b",
        r"\bgather",
        r"\bindex",
        r"non-?differentiable",
        r"not differentiable",
    ],
]
MUST_NOT = [FALSE_OK]


class CombinedNetwork(nn.Module):
    def __init__(self, input_size=6, hidden_size=16, num_classes=3, soft=False) -> None:
        super().__init__()
        self.classifier_fc1 = nn.Linear(input_size, hidden_size)
        self.classifier_fc2 = nn.Linear(hidden_size, num_classes)
        self.regression_fc = nn.Linear(input_size, num_classes)
        self.soft = soft

    def forward(self, x):
        scores = self.classifier_fc2(F.relu(self.classifier_fc1(x)))
        regression_value = self.regression_fc(x)
        smax = torch.softmax(scores * 100, dim=1)
        if self.soft:  # the expected value under the classifier's distribution: differentiable
            return (smax * regression_value).sum(dim=1)
        index = (smax * torch.arange(scores.shape[1])).sum(dim=1)  # soft-argmax
        return regression_value.gather(1, index.round().long().unsqueeze(1)).squeeze(1)


def step(watch, soft: bool = False):
    torch.manual_seed(0)
    model = CombinedNetwork(soft=soft)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(32, 6, generator=g), torch.randn(32, generator=g)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    with watch(model) as w:
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
    return Run(w=w, model=model, before=before)


def truth(run):
    m = run.model
    for layer in (m.classifier_fc1, m.classifier_fc2):
        for name, p in layer.named_parameters():
            assert p.grad is None, name
    assert m.regression_fc.weight.grad is not None and bool(m.regression_fc.weight.grad.any())
    assert torch.equal(m.classifier_fc1.weight.detach(), run.before["classifier_fc1.weight"])
