"""A speech model's raw outputs (``Linear`` scores, shape ``(T, N, C)``) passed to ``nn.CTCLoss``,
which expects log-probabilities (``log_softmax`` over the classes).  CTC then sums ``exp`` of
unnormalised path scores, which is not a probability: the loss is negative from the first batch
and can decrease without bound while the model learns nothing useful.

Source: https://github.com/SeanNaren/deepspeech.pytorch/issues/488 ("always the value of the loss
becomes negative ... I read the document of the CTCLoss of pytorch that the output of the model
should be logarithmized probabilities. Then, I add log_softmax function and the loss function
becomes positive").
"""

import torch
import torch.nn.functional as F
from scenario_kit import FALSE_OK, Run
from torch import nn

SOURCE = "https://github.com/SeanNaren/deepspeech.pytorch/issues/488"
DESCRIPTION = "CTCLoss given raw Linear scores instead of log_softmax: negative loss"
ASK = []
MUST = [[r"log_softmax|log-?probabilit|not normali[sz]ed|negative (ctc )?loss|loss[^\n]*negative"]]
MUST_NOT = [FALSE_OK]

T, N, C, S = 20, 4, 6, 5


def step(watch, log_softmax: bool = False):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, C))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    feats = torch.randn(T, N, 10, generator=g)
    targets = torch.randint(1, C, (N, S), generator=g)  # 0 is the blank
    in_len, tgt_len = torch.full((N,), T), torch.full((N,), S)
    ctc = nn.CTCLoss(blank=0)
    losses = []
    with watch(model) as w:
        for _ in range(2):
            optimizer.zero_grad()
            out = model(feats)
            if log_softmax:
                out = F.log_softmax(out, dim=-1)
            loss = ctc(out, targets, in_len, tgt_len)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    return Run(w=w, losses=losses)


def truth(run):
    assert all(v < 0 for v in run.losses)  # impossible for log-probabilities
