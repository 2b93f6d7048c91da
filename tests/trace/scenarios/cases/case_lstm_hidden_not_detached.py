"""An LSTM's hidden state carried from one batch to the next without detach: the second
backward runs into the first batch's freed graph and raises inside the block.

Source: https://learn.biosrag.com/ai/rnn-training-4.html ("This usually appears when hidden
state is reused across batches without detaching it from the previous computation graph");
the PyTorch error: https://discuss.pytorch.org/t/runtimeerror-trying-to-backward-through-the-graph-a-second-time-but-the-buffers-have-already-been-freed-specify-retain-graph-true-when-calling-backward-the-first-time/6795/2
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://learn.biosrag.com/ai/rnn-training-4.html"
DESCRIPTION = "LSTM hidden state not detached across batches: 2nd backward raises in the block"
ASK = ["lstm.weight_ih_l0"]
MUST = [
    [r"second time", r"\braised\b", r"exception", r"\berror\b", r"\bfailed\b", r"RuntimeError"],
    [r"hidden", r"\bstate\b", r"detach", r"retain_graph", r"previous (batch|step|graph)", r"freed"],
]
MUST_NOT = [FALSE_OK, r"\.grad (was |is )?reset"]


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
    state, error, done = None, None, 0
    try:
        with watch(model) as w:
            for x, y in batches:
                opt.zero_grad()
                pred, state = model(x, state)
                loss = F.mse_loss(pred, y)
                loss.backward()
                opt.step()
                done += 1
    except RuntimeError as e:
        error = e
    return Run(w=w, model=model, error=error, done=done)


def truth(run):
    assert run.done == 1 and run.error is not None
    assert "second time" in str(run.error) or "inplace" in str(run.error)
