"""Control: variable-length sequences through an LSTM with ``pack_padded_sequence(...,
enforce_sorted=False)`` and unsorted lengths, the documentation's advice ("For unsorted sequences,
use enforce_sorted = False"); the classifier reads ``h_n[-1]``, which PyTorch returns in the
batch's original order, each the state after that sequence's own last token (asserted against the
LSTM run on each sequence alone).  A healthy step.

Source: https://pytorch.org/docs/master/generated/torch.nn.utils.rnn.pack_padded_sequence.html
(a documentation page, not a bug report).
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence

SOURCE = "https://pytorch.org/docs/master/generated/torch.nn.utils.rnn.pack_padded_sequence.html"
DESCRIPTION = "control: packed LSTM, unsorted lengths, enforce_sorted=False, h_n[-1] to the head"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, r"never called", r"\bdead\b", r"vanish"]


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20, 8, padding_idx=0)
        self.lstm = nn.LSTM(8, 16, batch_first=True)
        self.head = nn.Linear(16, 3)

    def forward(self, tokens, lengths):
        packed = pack_padded_sequence(
            self.emb(tokens), lengths, batch_first=True, enforce_sorted=False
        )
        _, (h_n, _) = self.lstm(packed)
        return self.head(h_n[-1]), h_n[-1]


def step(watch):
    torch.manual_seed(0)
    model = Classifier()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    lengths = torch.tensor([5, 2, 7, 3])
    g = torch.Generator().manual_seed(1)
    tokens = torch.randint(1, 20, (4, 7), generator=g)
    for i, n in enumerate(lengths):
        tokens[i, n:] = 0
    y = torch.tensor([0, 2, 1, 2])
    with torch.no_grad():  # each sequence alone, unpadded, with the weights before the step
        alone = torch.stack(
            [
                model.lstm(model.emb(tokens[i : i + 1, : int(n)]))[1][0][-1, 0]
                for i, n in enumerate(lengths)
            ]
        )
    with watch(model) as w:
        optimizer.zero_grad()
        logits, last = model(tokens, lengths)
        nn.functional.cross_entropy(logits, y).backward()
        optimizer.step()
    return Run(w=w, model=model, alone=alone, last=last.detach())


def truth(run):
    # h_n[-1] of each sequence is the state after its own last token, in the batch's order
    assert torch.allclose(run.last, run.alone, atol=1e-6)
    assert all(p.grad is not None for p in run.model.parameters())
