"""Truncated backpropagation through time written from a documentation snippet that shows the
chunk loop and the truncation but no backward: the sequence is split into chunks along time, the
RNN runs on each chunk from the carried hidden state, the loss is computed and the hidden state
detached ("Truncate"), and the optimizer steps at the end; ``loss.backward()`` is never called.
No parameter ever gets a gradient (every ``.grad`` None), the optimizer step moves nothing.

Source: https://lightning.ai/docs/pytorch/stable/_sources/common/tbptt.rst.txt ("# 3. Split the
batch in chunks along the time dimension ... # 4. Perform the optimization in a loop ... loss,
hiddens = self.my_rnn(split_batch, hiddens) ... # 5. \"Truncate\" hiddens = hiddens.detach()":
the snippet's loop holds no backward nor optimizer call).  The step is that loop in plain
PyTorch, with the optimizer's ``zero_grad`` and ``step`` around it.
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://lightning.ai/docs/pytorch/stable/_sources/common/tbptt.rst.txt"
DESCRIPTION = "TBPTT chunk loop from the docs: loss per chunk, hidden detached, no backward at all"
ASK = []
MUST = [
    [
        r"no backward",
        r"backward(\(\))?[^\n]{0,40}(never|not) (called|run|ran|reached)",
        r"without (a |any )?backward",
        r"no (parameter|gradient)[^\n]{0,30}(got|received|reached)",
        r"no gradient",
        r"\.grad (is|was|stayed|remained|still) None",
    ]
]
MUST_NOT = [FALSE_OK, r"second time", r"not detached"]
CHUNK, VOCAB = 4, 12


class CharRNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, 16)
        self.rnn = nn.RNN(16, 32, batch_first=True)
        self.out = nn.Linear(32, VOCAB)

    def forward(self, tokens, h):
        out, h = self.rnn(self.emb(tokens), h)
        return self.out(out), h


def data():
    g = torch.Generator().manual_seed(1)
    seq = torch.randint(0, VOCAB, (8, 2 * CHUNK + 1), generator=g)
    return seq[:, :-1], seq[:, 1:]


def step(watch, backward: bool = False):
    torch.manual_seed(0)
    model = CharRNN()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = data()
    before = [p.detach().clone() for p in model.parameters()]
    losses = []
    with watch(model) as w:
        h = torch.zeros(1, 8, 32)
        if not backward:
            opt.zero_grad()
        for t in range(0, x.shape[1], CHUNK):
            if backward:
                opt.zero_grad()
            logits, h = model(x[:, t : t + CHUNK], h)
            loss = F.cross_entropy(logits.reshape(-1, VOCAB), y[:, t : t + CHUNK].reshape(-1))
            losses.append(loss)
            if backward:
                loss.backward()
                opt.step()
            h = h.detach()  # truncate
        if not backward:
            opt.step()
    moved = [
        not torch.equal(p.detach(), b) for p, b in zip(model.parameters(), before, strict=True)
    ]
    grads = [p.grad for p in model.parameters()]
    return Run(w=w, moved=moved, grads=grads, losses=losses)


def truth(run):
    assert all(loss.requires_grad for loss in run.losses)  # a graph was there to backpropagate
    assert all(g is None for g in run.grads)
    assert not any(run.moved)
