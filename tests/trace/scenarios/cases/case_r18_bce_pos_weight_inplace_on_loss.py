"""Control, a healthy step its author suspected: an event detector over time series trained with
``BCELoss(reduction='none')`` on sigmoid outputs, the positive targets re-weighted by hand,
``loss_flat[target_flat == 1] *= pos_weight_factor``, an in-place edit of the flattened per-element
loss before its mean. The edit is recorded by autograd (the loss's backward needs its inputs, not
its output), and the gradient equals that of ``BCEWithLogitsLoss(pos_weight=factor)`` on the logits,
the built-in the answer recommends. Every gradient is finite and nonzero; nothing raises.

Source: https://discuss.pytorch.org/t/loss-function-for-binary-classification/72150 ("I currently
am using LSTM model to detect an event in time-series data. My output from the model and true_output
are as follows [batch_size, seq_length]"; "loss_flat[target_flat == 1] *= self.pos_weight_factor";
"Currently, I think I have managed to do hard code it but it's not the best way to achieve this";
answer: "use BCEWithLogitsLoss instead of BCELoss. This is because BCEWithLogitsLoss offers a
pos_weight argument"). Adapted: an LSTM of 8 units over 8 series of 25 steps with 3 features,
events about 5% of the steps, factor 20, Adam.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://discuss.pytorch.org/t/loss-function-for-binary-classification/72150"
DESCRIPTION = "control: BCELoss(reduction='none') with positives re-weighted in place: healthy"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"in-?place[^\n]{0,60}(wrong|corrupt\w*|break\w*|invalid\w*|overwr\w*)",
]
FACTOR = 20.0


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(3, 8, batch_first=True)
        self.out = nn.Linear(8, 1)

    def logits(self, x):
        return self.out(self.lstm(x)[0]).squeeze(-1)

    def forward(self, x):
        return torch.sigmoid(self.logits(x))


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(8, 25, 3, generator=g)
    return x, (x[..., 0] > 1.6).float()


def step(watch):
    torch.manual_seed(0)
    model = Detector()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.BCELoss(reduction="none")
    x, target = data()
    with watch(model) as w:
        optimizer.zero_grad()
        predictions = model(x)
        loss_get = criterion(predictions.float(), target.float())
        loss_flat = loss_get.flatten()
        target_flat = target.flatten()
        loss_flat[target_flat == 1] *= FACTOR
        loss = loss_flat.mean()
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    return Run(w=w, x=x, target=target, grads=grads)


def truth(run):
    assert 0.02 < float(run.target.mean()) < 0.1  # rare events
    torch.manual_seed(0)
    model = Detector()
    builtin = F.binary_cross_entropy_with_logits(
        model.logits(run.x), run.target, pos_weight=torch.tensor(FACTOR)
    )
    expect = torch.autograd.grad(builtin, list(model.parameters()))
    for g, e in zip(run.grads, expect, strict=True):
        assert torch.allclose(g, e, atol=1e-5)  # the built-in pos_weight's gradient
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
