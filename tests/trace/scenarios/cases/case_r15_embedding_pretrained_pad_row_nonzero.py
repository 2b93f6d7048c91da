"""A bag-of-words classifier on pretrained word vectors loaded with
``nn.Embedding.from_pretrained(vectors, freeze=False, padding_idx=0)``.  ``padding_idx`` only
stops the padding row's gradient; ``from_pretrained`` keeps the row it is given, and the
pretrained table's row 0 is an ordinary nonzero vector.  Every padded position adds that fixed
vector to the sentence's sum (pooled as sum over positions / number of real tokens): the features
change with the amount of padding, and the row, with an exactly zero gradient, never moves to
cancel it.  Every gradient is finite; the padding row's is zero, as ``padding_idx`` makes it.

Source: https://prodissertation.co.uk/post/why-is-the-0-vector-still-not-returned-after-set-padding-idx
("Why is the 0 vector still not returned after set padding_idx?"; "It seems counterintuitive that
setting padding_idx in PyTorch's nn.Embedding layer doesn't automatically result in zero vectors
for padding tokens"; "It's not designed to directly produce zero vectors, but rather to instruct
the embedding layer to ignore gradients").  Adapted: random "pretrained" vectors (20 words, 8
dimensions), sentences of 3 to 7 tokens padded to 8, a tanh MLP head, Adam.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://prodissertation.co.uk/post/why-is-the-0-vector-still-not-returned-after-set-padding-idx"
DESCRIPTION = "from_pretrained(padding_idx=0) keeps a nonzero pad row: padding shifts the features"
ASK = ["emb.weight"]
MUST = [
    [r"pad\w*", r"row 0", r"index 0"],
    [
        r"non-?zero",
        r"not (all )?zero",
        r"from_pretrained",
        r"pretrained",
        r"depend\w* on (the )?(amount|number|length)",
        r"(adds?|contribut\w*)[^\n]{0,40}(sum|pool\w*|features?|output)",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"dead (units?|relu|neurons?)",
    r"no_grad",
    r"not in (the |any )?optimizer",
]
VOCAB, DIM, LENGTH = 20, 8, 8


class BagOfWords(nn.Module):
    def __init__(self, vectors):
        super().__init__()
        self.emb = nn.Embedding.from_pretrained(vectors, freeze=False, padding_idx=0)
        self.head = nn.Sequential(nn.Linear(DIM, 16), nn.Tanh(), nn.Linear(16, 2))

    def features(self, tokens):
        lengths = (tokens != 0).sum(1, keepdim=True)
        return self.emb(tokens).sum(1) / lengths

    def forward(self, tokens):
        return self.head(self.features(tokens))


def pretrained_vectors(zero_pad_row):
    g = torch.Generator().manual_seed(3)
    vectors = torch.randn(VOCAB, DIM, generator=g)
    if zero_pad_row:
        vectors[0] = 0.0
    return vectors


def sentences():
    g = torch.Generator().manual_seed(1)
    lengths = torch.randint(3, 8, (16,), generator=g)
    tokens = torch.randint(1, VOCAB, (16, LENGTH), generator=g)
    tokens[torch.arange(LENGTH) >= lengths[:, None]] = 0
    return tokens, torch.randint(0, 2, (16,), generator=g)


def step(watch, zero_pad_row=False):
    torch.manual_seed(0)
    model = BagOfWords(pretrained_vectors(zero_pad_row))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    tokens, labels = sentences()
    pad_before = model.emb.weight[0].detach().clone()
    with watch(model) as w:
        for _ in range(2):
            opt.zero_grad()
            loss = F.cross_entropy(model(tokens), labels)
            loss.backward()
            grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
            opt.step()
    with torch.no_grad():  # the same sentence with more padding (8 -> 12 positions)
        longer = torch.cat([tokens, torch.zeros(16, 4, dtype=tokens.dtype)], dim=1)
        shift = float((model.features(longer) - model.features(tokens)).abs().max())
    return Run(
        w=w,
        pad_before=pad_before,
        pad_after=model.emb.weight[0].detach().clone(),
        grads=grads,
        shift=shift,
    )


def truth(run):
    assert bool(run.pad_before.abs().sum() > 0)  # row 0 is the pretrained, nonzero vector
    assert torch.equal(run.pad_after, run.pad_before)  # and it never moves
    g = run.grads["emb.weight"]
    assert bool((g[0] == 0).all()) and bool(g[1:].abs().sum() > 0)
    for n, gr in run.grads.items():
        assert bool(torch.isfinite(gr).all()), n
    assert run.shift > 0.1  # more padding, other features
