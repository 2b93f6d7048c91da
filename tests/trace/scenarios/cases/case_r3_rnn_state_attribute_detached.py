"""Control: a stateful language model in the fast.ai style: the hidden state lives in a plain
tensor attribute (self.h), is fed to nn.RNN and replaced by the new state detached
(self.h = h.detach()) at each forward.  Two consecutive chunks are trained: the second
backward stops at the detached state (truncated backpropagation through time), no graph is
reused, and the gradients are those of the chunk with the carried state as a constant.

Source: https://forums.fast.ai/t/rnn-hidden-state-initializations-chapter-12/91887 ("RNN hidden
state initializations (chapter 12)": "res,h = self.rnn(self.i_h(x), self.h); self.h =
h.detach()" with "self.h = torch.zeros(n_layers, bs, n_hidden)").
"""

import torch
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://forums.fast.ai/t/rnn-hidden-state-initializations-chapter-12/91887"
DESCRIPTION = "control: fast.ai LMModel5, self.h = h.detach() each forward, two chunks: TBPTT"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_NO_ZERO_GRAD,
    r"not (a |registered as a )?parameter",
    r"second time",
    r"retain_graph",
    r"sum of (2|two) backward",
]

VOCAB, HIDDEN, LAYERS, BS, SEQ = 30, 16, 2, 4, 6


class LMModel5(nn.Module):
    def __init__(self):
        super().__init__()
        self.i_h = nn.Embedding(VOCAB, HIDDEN)
        self.rnn = nn.RNN(HIDDEN, HIDDEN, LAYERS, batch_first=True)
        self.h_o = nn.Linear(HIDDEN, VOCAB)
        self.h = torch.zeros(LAYERS, BS, HIDDEN)

    def forward(self, x):
        res, h = self.rnn(self.i_h(x), self.h)
        self.h = h.detach()
        return self.h_o(res)


def step(watch):
    torch.manual_seed(0)
    model = LMModel5()
    g = torch.Generator().manual_seed(1)
    stream = torch.randint(0, VOCAB, (BS, 2 * SEQ + 1), generator=g)
    chunks = [(stream[:, i : i + SEQ], stream[:, i + 1 : i + SEQ + 1]) for i in (0, SEQ)]
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    states, grads = [], []
    with watch(model) as w:
        for x, y in chunks:
            states.append(model.h.clone())
            params = [p.detach().clone() for p in model.parameters()]
            opt.zero_grad()
            loss = F.cross_entropy(model(x).reshape(-1, VOCAB), y.reshape(-1))
            loss.backward()
            grads.append([p.grad.clone() for p in model.parameters()])
            opt.step()
    return Run(w=w, chunks=chunks, states=states, grads=grads, params=params)


def truth(run):
    (x, y), h0 = run.chunks[1], run.states[1]
    assert bool(h0.abs().sum() > 0) and not h0.requires_grad  # state carried, detached
    ref = LMModel5()
    with torch.no_grad():
        for p, v in zip(ref.parameters(), run.params, strict=True):
            p.copy_(v)
    ref.h = h0
    expected = torch.autograd.grad(
        F.cross_entropy(ref(x).reshape(-1, VOCAB), y.reshape(-1)), list(ref.parameters())
    )
    for g, e in zip(run.grads[1], expected, strict=True):
        assert torch.allclose(g, e, rtol=1e-5, atol=1e-7)
