"""A class token concatenated to the sequence *after* the encoder instead of before it, and the
head read from position 0.  The class token then never attends to anything: ``z[:, 0]`` is the
class token itself, the same vector for every input, so the logits are identical across the
batch and the loss does not depend on the input.  Backward reaches the encoder and the patch
embedding only through the concatenation's other rows, whose gradient is zero: every encoder and
embedding parameter gets an exactly zero gradient, while the class token and the head train.
Nothing raises; nothing is NaN.

Source: https://alessioborgi.github.io/blog/transformers/cls-token-vs-pooling/ ("a learnable
vector [CLS] is prepended to the patch sequence at position 0"; "After L blocks of multi-head
attention, the [CLS] position has attended to every patch at every layer"; "The classification
head is applied only to z_CLS"; "Only one token receives the gradient from the classification loss
directly").  Adapted: a ``Linear(6, 16)`` patch embedding, one ``TransformerEncoderLayer(16, 2,
32)`` (GELU, no dropout), a class token drawn from N(0, 0.02^2) and ``torch.cat``'d after the
encoder, a ``Linear(16, 3)`` head, 64 inputs of 8 "patches" of 6 features, AdamW at 1e-3.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://alessioborgi.github.io/blog/transformers/cls-token-vs-pooling/"
DESCRIPTION = "class token cat'd after the encoder, head on position 0: encoder grads all zero"
ASK = ["embed.weight"]
MUST = [
    [
        r"all[- ]zero",
        r"\bzero grad\w*",
        r"gradients? (is |are |was |were )?(exactly )?(all )?(0|zero)",
        r"no gradient",
    ],
    [
        r"\bcls\b",
        r"class token",
        r"\bcat\b",
        r"concat\w*",
        r"(after|outside) the encoder",
        r"position 0",
        r"(constant|identical|same) (output|logits|predictions?)",
        r"does not depend on (the )?input",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
]


class PatchClassifier(nn.Module):
    def __init__(self, cls_first):
        super().__init__()
        self.cls_first = cls_first
        self.embed = nn.Linear(6, 16)
        self.cls = nn.Parameter(0.02 * torch.randn(1, 1, 16))
        self.encoder = nn.TransformerEncoderLayer(
            16, 2, 32, dropout=0.0, activation="gelu", batch_first=True
        )
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        tokens = self.embed(x)
        cls = self.cls.expand(x.shape[0], 1, 16)
        if self.cls_first:  # prepended, then attended
            z = self.encoder(torch.cat([cls, tokens], dim=1))
        else:  # concatenated after the encoder
            z = torch.cat([cls, self.encoder(tokens)], dim=1)
        return self.head(z[:, 0])


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 8, 6, generator=g)
    return x, x.mean(1)[:, :3].argmax(1)


def step(watch, cls_first=False):
    torch.manual_seed(0)
    model = PatchClassifier(cls_first)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x, y = data()
    with watch(model) as w:
        optimizer.zero_grad()
        logits = model(x)
        F.cross_entropy(logits, y).backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, model=model, logits=logits.detach(), grads=grads)


def truth(run):
    assert torch.equal(run.logits, run.logits[:1].expand_as(run.logits))  # input-independent
    for n, g in run.grads.items():
        if n.startswith(("embed.", "encoder.")):
            assert bool((g == 0).all()), n  # present and exactly zero
        else:
            assert bool(g.abs().sum() > 0), n  # the class token and the head
