"""Masked-language-model pretraining whose labels are the whole original sequence: 15% of the
tokens are replaced by ``[MASK]`` but the cross-entropy is taken at every position, the 85% left
visible included.  At a visible position the target is the input token itself, so most of the
loss, and most of its gradient, asks the encoder to copy its input through; the masked positions
that carry the task are a small share of the signal.  BERT predicts only the masked words (the
labels are ``-100``, cross-entropy's ``ignore_index``, elsewhere).  Every gradient is finite and
nonzero; nothing raises.

Source: https://discuss.huggingface.co/t/how-does-bert-know-if-a-token-is-a-mask-for-prediction-and-loss/19872
("the final hidden vectors corresponding to the mask tokens are fed into an output softmax over
the vocabulary"; "we only predict the masked words rather than reconstructing the entire input";
"how does BERT knows if a token is a mask to feed that embedding through a softmax and use it for
the loss ?").  Adapted: a one-layer encoder (``Embedding(21, 16)`` with learned positions, one
``TransformerEncoderLayer(16, 2, 32)`` with GELU and no dropout, ``Linear(16, 21)``), 32
sequences of 12 tokens from 20 (arithmetic progressions modulo 20), token 20 as ``[MASK]``, every
chosen position masked (no 80/10/10 split), labels the unmasked sequence, AdamW at 1e-3.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://discuss.huggingface.co/t/how-does-bert-know-if-a-token-is-a-mask-for-prediction-and-"
    "loss/19872"
)
DESCRIPTION = "MLM loss at every position (labels = whole input): mostly a copy task, no -100"
ASK = []
MUST = [
    [r"label\w*", r"\bloss\b", r"cross[- ]entropy", r"target\w*"],
    [
        r"-100",
        r"ignore_index",
        r"un-?masked",
        r"non-?masked",
        r"not masked",
        r"visible (positions|tokens)",
        r"(every|all) (the )?(positions|tokens)",
        r"cop(y|ies|ying)",
        r"identity",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"all[- ]zero", r"\bzero grad\w*"]
VOCAB, MASK, LENGTH = 21, 20, 12


class TinyBert(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, 16)
        self.pos = nn.Embedding(LENGTH, 16)
        self.layer = nn.TransformerEncoderLayer(
            16, 2, 32, dropout=0.0, activation="gelu", batch_first=True
        )
        self.head = nn.Linear(16, VOCAB)

    def forward(self, ids):
        return self.head(self.layer(self.tok(ids) + self.pos(torch.arange(ids.shape[1]))))


def data():
    g = torch.Generator().manual_seed(1)
    start = torch.randint(0, 20, (32, 1), generator=g)
    stride = torch.randint(1, 4, (32, 1), generator=g)
    ids = (start + stride * torch.arange(LENGTH)) % 20
    masked = torch.rand(ids.shape, generator=g) < 0.15
    return ids, masked, ids.masked_fill(masked, MASK)


def step(watch, ignore_unmasked=False):
    torch.manual_seed(0)
    model = TinyBert()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    ids, masked, inputs = data()
    labels = ids.clone()
    if ignore_unmasked:
        labels[~masked] = -100
    with watch(model) as w:
        optimizer.zero_grad()
        logits = model(inputs)
        logits.retain_grad()
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), labels.reshape(-1))
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, model=model, inputs=inputs, labels=labels, masked=masked,
               logit_grad=logits.grad.detach(), grads=grads)  # fmt: skip


def truth(run):
    scored = run.labels != -100
    copies = scored & (run.labels == run.inputs)  # target is the visible input token itself
    assert copies.sum() >= 0.75 * scored.sum()
    per_position = run.logit_grad.pow(2).sum(-1)
    assert per_position[~run.masked].sum() > per_position[run.masked].sum()  # the copies dominate
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
