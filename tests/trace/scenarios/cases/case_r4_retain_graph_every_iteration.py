"""Control: ``loss.backward(retain_graph=True)`` in every iteration of an ordinary loop, left over
from an experiment.  Each iteration builds a new graph, so nothing is backpropagated twice: the
gradients are exactly those without ``retain_graph`` (only memory is held longer).

Source: https://github.com/EagleW/Writing-editing-Network/issues/3 ("Why then do we have to
`retain_graph=True` during backpropagation. Won't that just add on to the memory footprint of the
model?"; "So, I can get rid of it and the model would still work? From the losses over an epoch,
removing it doesn't seem to have any impact"; "Yeah, I think so").
"""

import torch
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/EagleW/Writing-editing-Network/issues/3"
DESCRIPTION = "control: backward(retain_graph=True) each iteration on a new graph: same grads"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_NO_ZERO_GRAD,
    r"same graph",
    r"(backward|backpropagat\w*|graph)[^\n]{0,30}(twice|2 times|two times)",
    r"\.grad[^\n]{0,40}(sums?|holds?)[^\n]{0,30}\b(2|two) (backward )?passes",
]


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20, 8)
        self.gru = nn.GRU(8, 16, batch_first=True)
        self.out = nn.Linear(16, 20)

    def forward(self, tokens):
        h, _ = self.gru(self.emb(tokens))
        return self.out(h)


def _batches():
    g = torch.Generator().manual_seed(1)
    return [torch.randint(0, 20, (4, 7), generator=g) for _ in range(2)]


def _loss(model, tokens):
    logits = model(tokens[:, :-1])
    return F.cross_entropy(logits.reshape(-1, 20), tokens[:, 1:].reshape(-1))


def step(watch, retain=True):
    torch.manual_seed(0)
    model = Decoder()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    grads = []
    with watch(model) as w:
        for tokens in _batches():
            opt.zero_grad()
            _loss(model, tokens).backward(retain_graph=retain)
            grads.append([p.grad.clone() for p in model.parameters()])
            opt.step()
    return Run(w=w, model=model, grads=grads, retain=retain)


def truth(run):
    from scenario_kit import plain

    assert run.retain
    ref = step(plain, retain=False)
    for mine, theirs in zip(run.grads, ref.grads, strict=True):
        for a, b in zip(mine, theirs, strict=True):
            assert torch.equal(a, b)
    for a, b in zip(run.model.parameters(), ref.model.parameters(), strict=True):
        assert torch.equal(a.detach(), b.detach())
