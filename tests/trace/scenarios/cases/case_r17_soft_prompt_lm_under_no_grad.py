"""Prompt tuning with the frozen language model "frozen" by running it under ``torch.no_grad()``.
Only the soft prompt ``P`` (4 virtual tokens) is meant to train; it is prepended to the token
embeddings and the sequence goes through the frozen transformer and classification head inside a
``no_grad`` block to save memory. The logits then carry no graph, so ``loss.backward()`` raises
``RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn``: the
gradient cannot flow back through the frozen blocks into ``P``, which never gets a gradient and
never moves.

Source: https://diomgis.com/learn/prompt-tuning-with-soft-prompts ("During training, only P is
updated. The rest of the model, billions of parameters, is completely frozen. The gradient signal
flows back through the frozen transformer blocks (whose weights do not change) and into P").
Adapted: a one-layer GELU transformer classifier over a 30-token vocabulary stands for the frozen
language model, Adam on ``P`` only, the frozen part called under ``torch.no_grad()``.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://diomgis.com/learn/prompt-tuning-with-soft-prompts"
DESCRIPTION = "soft prompt tuning with the frozen LM run under torch.no_grad(): backward raises"
ASK = ["prompt"]
MUST = [
    [
        r"no_grad",
        r"(grad mode|autograd)[^\n]{0,30}(off|disabled)",
        r"without (autograd|a graph|grad)",
    ],
    [
        r"(does not|doesn't) require grad",
        r"grad_fn",
        r"\braised\b",
        r"RuntimeError",
        r"exception",
        r"\berror\b",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"not in (the |any )?optimizer"]
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
        with torch.no_grad():  # "the model is frozen"
            h = self.block(x)
            return self.head(h.mean(dim=1))


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
    before = model.prompt.detach().clone()
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
    assert run.error is not None
    assert "does not require grad" in str(run.error)
    assert run.model.prompt.grad is None
    assert torch.equal(run.model.prompt.detach(), run.before)
