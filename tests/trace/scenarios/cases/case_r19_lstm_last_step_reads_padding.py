"""A sequence classifier over right-padded token sequences that runs the LSTM on the padded batch
without packing and reads ``out[:, -1]``, the output at the last padded position. For every sequence
shorter than the batch's longest, that is the state after the LSTM has also read the padding (the
zero vectors of ``padding_idx``), not the state after its own last token: three of the four
sequences are classified from a state that differs from the one the LSTM reaches on the sequence
alone. Every gradient is finite; nothing raises.

Source: https://stackoverflow.com/questions/51030782/why-do-we-pack-the-sequences-in-pytorch ("We
pad seq_batch to get the batch of sequences with equal length of 5 (The max length in the batch).
Now, the new batch has 10 elements totally"; "Now, we pass the tuple packed_seq_batch to the
recurrent modules in Pytorch, such as RNN, LSTM. This only requires 5 + 2=7 computations in the
recurrrent module"). Adapted: round 10's packed classifier (``r10_packed_lstm_unsorted``, its
control here) without ``pack_padded_sequence``, the same weights, tokens and lengths.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn

SOURCE = "https://stackoverflow.com/questions/51030782/why-do-we-pack-the-sequences-in-pytorch"
DESCRIPTION = "padded LSTM batch without packing, out[:, -1] read: the state after the padding"
ASK = []
MUST = [[r"\bpad", r"pack", r"sequence lengths?", r"lengths?[^\n]{0,20}(unused|ignored)"]]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE]
LENGTHS = torch.tensor([5, 2, 7, 3])


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20, 8, padding_idx=0)
        self.lstm = nn.LSTM(8, 16, batch_first=True)
        self.head = nn.Linear(16, 3)

    def forward(self, tokens, lengths):
        out, _ = self.lstm(self.emb(tokens))  # the padded batch, lengths unused
        return self.head(out[:, -1]), out[:, -1]


def step(watch):
    torch.manual_seed(0)
    model = Classifier()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    lengths = LENGTHS
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
    full = LENGTHS.eq(LENGTHS.max())
    assert torch.allclose(run.last[full], run.alone[full], atol=1e-6)  # the longest: its own end
    gap = (run.last[~full] - run.alone[~full]).abs().amax(1)
    assert bool((gap > 1e-3).all())  # the shorter ones: a state after the padding
    assert all(
        p.grad is not None and bool(torch.isfinite(p.grad).all()) for p in run.model.parameters()
    )
