"""A dense passage retriever trained against a passage index built once, before training: the
passage encoder embeds the whole corpus under ``torch.no_grad()`` (as for serving, where the index
is pre-encoded offline), and each step scores its questions against the rows of that index for its
gold passages (in-batch negatives).  The index rows carry no autograd history: the loss reaches only
the question encoder.  Over two steps the passage encoder, which the optimizer holds, gets no
gradient (``.grad`` stays ``None``) and never moves; the question encoder's gradients are finite and
nonzero.  Nothing raises.

Source: https://mixpeek.com/glossary/dense-passage-retrieval ("DPR uses two separate BERT-based
encoders: one for questions and one for passages. Both encoders produce single dense vector
embeddings. During indexing, all passages in the corpus are encoded and stored in a vector index";
"The training uses in-batch negatives and hard negatives to teach the model to distinguish relevant
passages from similar but irrelevant ones").  Adapted: the pre-encoded index used in training (the
page gives indexing and training separately, not the slip); a vocabulary of 100 tokens, 32 passages
of 10 tokens and 32 questions of 5 tokens (three of them from the gold passage), each encoder
``EmbeddingBag(100, 32), Linear(32, 32), Tanh, Linear(32, 16)``, dot-product scores, cross-entropy
over the batch's 8 passages, Adam at 1e-3, two steps.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://mixpeek.com/glossary/dense-passage-retrieval"
DESCRIPTION = "DPR trained on a passage index pre-encoded under no_grad: p_enc never gets a grad"
ASK = ["p_enc.head.0.weight"]
MUST = [
    [r"p_enc"],
    [
        r"no_grad",
        r"no[- ]grad mode|grad(ient)? mode",
        r"(without|no) (autograd )?(graph|history)",
        r"pre-?(encoded|computed)|cached",
        r"(built|computed|encoded) (once|before|earlier|outside)",
        r"detached",
        r"(not|never) (called|run|ran|used)[^\n]{0,40}(step|block|forward)",
        r"(did not|didn't|never) (run|ran|take part|participate)",
        r"outside (the |this )?(step|block|graph)",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b", r"requires_grad\s*(=|is|was)?\s*False"]
VOCAB, PASSAGES, BATCH = 100, 32, 8


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.bag = nn.EmbeddingBag(VOCAB, 32, mode="mean")
        self.head = nn.Sequential(nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 16))

    def forward(self, tokens):
        return self.head(self.bag(tokens))


class DPR(nn.Module):
    def __init__(self):
        super().__init__()
        self.q_enc, self.p_enc = Encoder(), Encoder()


def corpus():
    g = torch.Generator().manual_seed(1)
    passages = torch.randint(0, VOCAB, (PASSAGES, 10), generator=g)
    pick = torch.randint(0, 10, (PASSAGES, 3), generator=g)
    questions = torch.cat(
        [passages.gather(1, pick), torch.randint(0, VOCAB, (PASSAGES, 2), generator=g)], 1
    )
    return questions, passages


def step(watch, index_once=True):
    torch.manual_seed(0)
    model = DPR()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    questions, passages = corpus()
    if index_once:
        with torch.no_grad():
            index = model.p_enc(passages)
    grads = []
    with watch(model) as w:
        for start in (0, BATCH):
            ids = torch.arange(start, start + BATCH)
            optimizer.zero_grad()
            q = model.q_enc(questions[ids])
            p = index[ids] if index_once else model.p_enc(passages[ids])
            loss = F.cross_entropy(q @ p.T, torch.arange(BATCH))
            loss.backward()
            grads.append(
                {
                    n: None if t.grad is None else t.grad.detach().clone()
                    for n, t in model.named_parameters()
                }
            )
            optimizer.step()
    return Run(w=w, model=model, before=before, grads=grads)


def truth(run):
    for g in run.grads:
        for n, t in g.items():
            if n.startswith("p_enc"):
                assert t is None, n
            else:
                assert bool(torch.isfinite(t).all()) and bool(t.abs().sum() > 0), n
    for n, p in run.model.named_parameters():
        moved = not torch.equal(p.detach(), run.before[n])
        assert moved == n.startswith("q_enc"), n
