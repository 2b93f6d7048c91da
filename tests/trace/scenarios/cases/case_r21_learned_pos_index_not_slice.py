"""A learned absolute position embedding, a ``(max_T, D)`` parameter, read with ``pos_embed[T]``
instead of ``pos_embed[:T]``.  Indexing with the integer ``T`` returns the single row ``T``, a
``(D,)`` vector that broadcasts over every position: all 12 positions of the batch get the same
vector, the model sees no order, and only row 12 of ``pos_embed`` gets a gradient (rows 0 to 11,
13 to 15 get exactly zero).  Nothing raises; nothing is NaN.  (With ``T = max_T`` the same line
raises an ``IndexError``; with shorter sequences it runs.)

Source: https://crackedaicode.com/problems/flax-learned-pos ("Learned position embeddings swap
that for a free (max_T, D) parameter matrix, training one vector per absolute position";
``return pos_embed[:T]``; "``pos_embed[:T]`` - slice the first ``T`` rows for the current
sequence"; "Common pitfalls": "``pos_embed[T]`` vs ``pos_embed[:T]``: the former ..." (the stored
text ends there; one look-up beyond the queries returned the same text)).  Adapted: the page is
Flax; here a torch model, an ``nn.Embedding(20, 16)`` token table plus ``pos_embed`` (16 x 16,
normal 0.02 as on the page), ``Tanh`` and a per-token ``Linear(16, 4)`` head whose label depends
on the token and its position, 8 sequences of length 12, SGD at 0.1.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://crackedaicode.com/problems/flax-learned-pos"
DESCRIPTION = "learned positions read as pos_embed[T] (one row broadcast): only row T gets a grad"
ASK = ["pos_embed"]
MUST = [
    [
        r"(only|just|a single|one) (row|position|entry|vector)",
        r"\brow 12\b",
        r"\b(15|11) (of (the )?16 )?rows",
        r"rows?[^\n]{0,60}(zero|no) grad",
        r"(zero|no) gradient[^\n]{0,80}rows?",
        r"same (position(al)? )?(vector|embedding|row)[^\n]{0,60}(every|all|each)",
    ],
    [
        r"\[T\]",
        r"\[:T\]",
        r"slic\w*",
        r"broadcast\w*",
        r"integer ind\w*",
        r"index\w*[^\n]{0,60}(instead of|rather than|not) ",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
]


class TokenTagger(nn.Module):
    def __init__(self, index_not_slice, max_t=16, d=16):
        super().__init__()
        self.index_not_slice = index_not_slice
        self.tok = nn.Embedding(20, d)
        self.pos_embed = nn.Parameter(0.02 * torch.randn(max_t, d))
        self.head = nn.Linear(d, 4)

    def forward(self, ids):
        t = ids.shape[1]
        pos = self.pos_embed[t] if self.index_not_slice else self.pos_embed[:t]
        return self.head(torch.tanh(self.tok(ids) + pos))


def data(length):
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, 20, (8, length), generator=g)
    labels = (ids + torch.arange(length)) % 4  # depends on the token and its position
    return ids, labels


def step(watch, index_not_slice=True, length=12):
    torch.manual_seed(0)
    model = TokenTagger(index_not_slice)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    ids, labels = data(length)
    before = model.pos_embed.detach().clone()
    with watch(model) as w:
        optimizer.zero_grad()
        logits = model(ids)
        loss = F.cross_entropy(logits.reshape(-1, 4), labels.reshape(-1))
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, model=model, index_not_slice=index_not_slice, length=length, ids=ids,
               before=before, grads=grads)  # fmt: skip


def truth(run):
    assert run.index_not_slice and run.length == 12
    g = run.grads["pos_embed"]
    rows_with_grad = (g.abs().sum(1) > 0).nonzero().flatten().tolist()
    assert rows_with_grad == [12]  # one row, the row numbered T
    moved = (run.model.pos_embed.detach() != run.before).any(1).nonzero().flatten().tolist()
    assert moved == [12]
    with torch.no_grad():  # every position gets the same vector: the model is blind to order
        out = run.model(run.ids)
        assert torch.allclose(run.model(run.ids.flip(1)), out.flip(1), atol=1e-6)
