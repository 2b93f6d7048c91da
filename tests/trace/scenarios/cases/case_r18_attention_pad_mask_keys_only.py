"""Control: the same one-head self-attention classifier with the padding mask applied to the keys
only, ``masked_fill(~mask.unsqueeze(1), float('-inf'))``: every query row keeps at least one real
key, so no row of the softmax is all -inf. Padded positions still produce outputs (they attend to
the real tokens) and are zeroed before mean pooling. The loss and every gradient are finite; the
step moves every weight.

Source: https://ai.stackexchange.com/questions/41367 ("To ignore pad tokens, you would create a
mask with -inf along columns corresponding to the location of padding, and add this to QK^T before
softmax"; the comment: "If we put -inf in rows corresponding to the pad tokens, the softmax will
take in rows that are all -inf"). Adapted: a one-head self-attention classifier (projections
without bias: a key bias only shifts each row of scores and gets no gradient) over a 20-token
vocabulary, 12 sequences of length 3 to 8 padded to 8, padded outputs zeroed before mean pooling,
SGD.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://ai.stackexchange.com/questions/41367"
DESCRIPTION = "control: padding mask on the keys only (-inf columns): every gradient finite"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR]
VOCAB, DIM, LEN = 20, 16, 8


class Attn(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.q = nn.Linear(DIM, DIM, bias=False)
        self.k = nn.Linear(DIM, DIM, bias=False)
        self.v = nn.Linear(DIM, DIM, bias=False)
        self.head = nn.Linear(DIM, 2)

    def forward(self, ids, mask):
        x = self.embed(ids)
        scores = self.q(x) @ self.k(x).transpose(1, 2) / DIM**0.5
        attn = F.softmax(scores.masked_fill(~mask.unsqueeze(1), float("-inf")), dim=-1)
        out = (attn @ self.v(x)).masked_fill(~mask.unsqueeze(-1), 0.0)
        pooled = out.sum(1) / mask.sum(1, keepdim=True)
        return self.head(pooled), attn


def data():
    g = torch.Generator().manual_seed(1)
    lengths = torch.randint(3, LEN + 1, (12,), generator=g)
    lengths[0] = 5  # at least one padded sequence
    mask = torch.arange(LEN) < lengths.unsqueeze(1)
    ids = torch.randint(1, VOCAB, (12, LEN), generator=g).masked_fill(~mask, 0)
    return ids, mask, (ids[:, 0] < VOCAB // 2).long()


def step(watch):
    torch.manual_seed(0)
    model = Attn()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    ids, mask, y = data()
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    with watch(model) as w:
        optimizer.zero_grad()
        logits, attn = model(ids, mask)
        loss = F.cross_entropy(logits, y)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(
        w=w,
        model=model,
        mask=mask,
        attn=attn.detach(),
        loss=loss.item(),
        grads=grads,
        before=before,
    )


def truth(run):
    assert bool((~run.mask).any())
    assert bool(torch.isfinite(run.attn).all())  # no row of the softmax is all -inf
    assert bool((run.attn[~run.mask.unsqueeze(1).expand_as(run.attn)] == 0).all())  # padded keys
    assert run.loss == run.loss
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    for n, p in run.model.named_parameters():
        assert not torch.equal(p.detach(), run.before[n]), n
