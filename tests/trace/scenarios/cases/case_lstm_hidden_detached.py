"""Control: the same LSTM with the hidden state detached at each batch (truncated BPTT).

Source: https://learn.biosrag.com/ai/rnn-training-4.html ("Before each new sequence segment
that will call backward(), detach hidden from the old graph").
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://learn.biosrag.com/ai/rnn-training-4.html"
DESCRIPTION = "control: LSTM state detached between batches; two clean steps"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_ERROR, CLAIMS_NONFINITE, r"second time"]


class Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(4, 8, batch_first=True)
        self.head = nn.Linear(8, 1)

    def forward(self, x, state=None):
        out, state = self.lstm(x, state)
        return self.head(out[:, -1]), state


def step(watch):
    torch.manual_seed(0)
    model = Seq()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    batches = [(torch.randn(3, 5, 4), torch.randn(3, 1)) for _ in range(2)]
    state, done = None, 0
    with watch(model) as w:
        for x, y in batches:
            opt.zero_grad()
            if state is not None:
                state = tuple(s.detach() for s in state)
            pred, state = model(x, state)
            loss = F.mse_loss(pred, y)
            loss.backward()
            opt.step()
            done += 1
    return Run(w=w, model=model, done=done)


def truth(run):
    assert run.done == 2
    for p in run.model.parameters():
        assert p.grad is not None and bool(torch.isfinite(p.grad).all())
