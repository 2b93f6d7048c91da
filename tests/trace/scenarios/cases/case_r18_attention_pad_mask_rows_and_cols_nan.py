"""A padding mask built for both sides of the attention matrix, ``mask.unsqueeze(1) &
mask.unsqueeze(2)``, and applied with ``masked_fill(~mask, float('-inf'))`` before the softmax. The
rows of the padded *query* positions are then -inf everywhere: ``softmax`` of a row of -inf is NaN
(0 / 0), so the attention output is NaN at every padded position. The classifier pools the outputs
with the padded positions zeroed (``masked_fill(~mask, 0.0)``), so the pooled features and the loss
are finite. In the backward, ``masked_fill`` zeroes the gradient of the masked scores, so the query
and key projections get finite gradients; but the value projection's gradient is ``attn^T @
grad_out``, where the NaN attention rows meet the zero gradient of the padded rows (NaN * 0 = NaN):
the value projection and the embedding get NaN gradients while the query, key and head gradients
stay finite. The step writes NaN into the value projection and the embedding.

Source: https://theneuralbase.com/pytorch/learn/intermediate/attention-mask-for-padding/ ("The code
uses `mask_expanded = mask.unsqueeze(1) & mask.unsqueeze(2)` which is correct for bidirectional
(encoder) attention"; "A mask sets those attention logits to negative infinity before the
softmax"). The rows of -inf it makes are named in https://ai.stackexchange.com/questions/41367 ("the
softmax will take in rows that are all -inf and will then output" NaN). Adapted: a one-head
self-attention classifier (projections without bias) over a 20-token vocabulary, 12 sequences of
length 3 to 8 padded to 8, padded outputs zeroed before mean pooling, SGD.
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://theneuralbase.com/pytorch/learn/intermediate/attention-mask-for-padding/"
DESCRIPTION = "padding mask on queries and keys with -inf: padded rows softmax NaN, finite loss"
ASK = ["v.weight"]
MUST = [
    [r"\bnan\b", r"non-?finite"],
    [
        r"softmax",
        r"mask\w*",
        r"attention",
        r"(row|query|position)s?[^\n]{0,40}(all|entirely|fully)[^\n]{0,20}(-inf|masked)",
    ],
]
MUST_NOT = [FALSE_OK, r"\bloss (is|was|became) (nan|inf|non-?finite)"]
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
        pair = mask.unsqueeze(1) & mask.unsqueeze(2)  # queries and keys both masked
        attn = F.softmax(scores.masked_fill(~pair, float("-inf")), dim=-1)
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
    with watch(model) as w:
        optimizer.zero_grad()
        logits, attn = model(ids, mask)
        loss = F.cross_entropy(logits, y)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, model=model, mask=mask, attn=attn.detach(), loss=loss.item(), grads=grads)


def truth(run):
    padded = ~run.mask
    assert bool(padded.any())
    assert run.loss == run.loss and abs(run.loss) < float("inf")  # the loss is finite
    assert bool(torch.isnan(run.attn[padded]).all())  # padded query rows: softmax of all -inf
    assert not bool(torch.isnan(run.attn[run.mask]).any())
    for name in ("embed.weight", "v.weight"):  # through attn^T @ grad_out: NaN * 0
        assert bool(torch.isnan(run.grads[name]).any()), name
    for name in ("q.weight", "k.weight", "head.weight"):  # masked_fill zeroed the scores' grad
        assert bool(torch.isfinite(run.grads[name]).all()), name
    assert bool(torch.isnan(run.model.v.weight).any())  # the step wrote NaN
