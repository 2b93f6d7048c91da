"""Control: prompt tuning done as described. The language model's parameters are frozen with
``requires_grad_(False)`` and left out of the optimizer; the soft prompt ``P`` (4 virtual tokens) is
the only trainable parameter. The forward pass runs with autograd on, so the gradient flows back
through the frozen transformer block into ``P``: ``P`` gets a finite nonzero gradient and moves, the
frozen weights get none and stay as they were. Nothing raises.

Source: https://learnprompting.org/docs/category/-prompt-tuning ("Prompt Tuning is an alternative to
model fine-tuning that adapts a large language model (LLM) for specific tasks by updating only a
small set of additional parameters called soft prompts, while keeping the main model weights
frozen"; "The main model parameters are kept fixed. A small set of soft prompt embeddings is added
to the input"). Adapted: a one-layer GELU transformer classifier over a 30-token vocabulary stands
for the language model, Adam on ``P``.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://learnprompting.org/docs/category/-prompt-tuning"
DESCRIPTION = "control: soft prompt tuning, LM frozen by requires_grad_(False), prompt trains"
ASK = []
MUST = [[HEALTHY_OK, r"requires_grad\s*=?\s*False", r"frozen"]]
MUST_NOT = [CLAIMS_ERROR, CLAIMS_NONFINITE, r"no_grad", r"prompt[^\n]{0,40}\b(no|zero) gradient"]
VOCAB, DIM, K = 30, 16, 4


class PromptTuned(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.block = nn.TransformerEncoderLayer(
            DIM, 2, dim_feedforward=32, dropout=0.0, activation="gelu", batch_first=True
        )
        self.head = nn.Linear(DIM, 2)
        self.prompt = nn.Parameter(0.5 * torch.randn(K, DIM))

    def forward(self, ids):
        x = torch.cat([self.prompt.expand(ids.shape[0], -1, -1), self.embed(ids)], dim=1)
        return self.head(self.block(x).mean(dim=1))


def data():
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, VOCAB, (32, 10), generator=g)
    return ids, (ids[:, 0] < VOCAB // 2).long()


def step(watch):
    torch.manual_seed(0)
    model = PromptTuned()
    for name, p in model.named_parameters():
        p.requires_grad_(name == "prompt")
    optimizer = torch.optim.Adam([model.prompt], lr=1e-2)
    ids, y = data()
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    error = None
    try:
        with watch(model) as w:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(ids), y)
            loss.backward()
            optimizer.step()
    except RuntimeError as e:
        error = e
    return Run(w=w, model=model, error=error, before=before)


def truth(run):
    assert run.error is None
    g = run.model.prompt.grad
    assert g is not None and bool(torch.isfinite(g).all()) and bool((g.abs().sum(1) > 0).all())
    for n, p in run.model.named_parameters():
        if n == "prompt":
            assert not torch.equal(p.detach(), run.before[n])
        else:
            assert p.grad is None and torch.equal(p.detach(), run.before[n]), n
