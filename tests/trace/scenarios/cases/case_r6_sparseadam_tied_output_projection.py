"""A language model whose embedding is ``sparse=True`` (to use ``SparseAdam``) and whose output
projection shares the embedding's weight (tied decoder embeddings).  The output projection adds a
dense gradient to the shared weight, so its ``.grad`` is dense, and ``SparseAdam.step()`` raises
"SparseAdam does not support dense gradients, please consider Adam instead" after a backward that
computed every gradient.  Nothing moves.

Source: https://github.com/OpenNMT/OpenNMT-py/issues/1015 ("SparseAdam does not support with
share_decoder_embeddings option"; "error occurred with message 'SparseAdam does not support dense
gradients, please consider Adam instead'").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/OpenNMT/OpenNMT-py/issues/1015"
DESCRIPTION = "sparse embedding tied to the output projection + SparseAdam: dense grad, step raises"
ASK = ["emb.weight"]
MUST = [
    [r"\braised\b", r"RuntimeError", r"exception", r"\berror\b"],
    [r"SparseAdam", r"sparse", r"dense grad", r"\btied\b", r"\bshared?\b"],
]
MUST_NOT = [FALSE_OK]


class TinyLM(nn.Module):
    def __init__(self, vocab: int = 20, dim: int = 8) -> None:
        super().__init__()
        self.emb = nn.Embedding(vocab, dim, sparse=True)
        self.hidden = nn.Linear(dim, dim, bias=False)
        self.out = nn.Linear(dim, vocab, bias=False)
        self.out.weight = self.emb.weight  # share_decoder_embeddings

    def forward(self, idx):
        return self.out(torch.tanh(self.hidden(self.emb(idx))))


def step(watch, optimizer: str = "SparseAdam"):
    torch.manual_seed(0)
    model = TinyLM()
    if optimizer == "SparseAdam":  # the embedding alone: SparseAdam accepts only it
        opts = [
            torch.optim.SparseAdam([model.emb.weight], lr=1e-2),
            torch.optim.Adam([model.hidden.weight], lr=1e-2),
        ]
    else:
        opts = [torch.optim.Adam(model.parameters(), lr=1e-2)]
    g = torch.Generator().manual_seed(1)
    idx = torch.randint(0, 20, (4, 6), generator=g)
    before = model.emb.weight.detach().clone()
    error = None
    with watch(model) as w:
        for opt in opts:
            opt.zero_grad()
        logits = model(idx[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, 20), idx[:, 1:].reshape(-1))
        loss.backward()
        try:
            for opt in opts:
                opt.step()
        except RuntimeError as e:
            error = e
    return Run(w=w, model=model, error=error, before=before)


def truth(run):
    assert run.error is not None and "does not support dense gradients" in str(run.error)
    grad = run.model.emb.weight.grad
    assert grad is not None and not grad.is_sparse  # the tied projection made it dense
    assert torch.equal(run.model.emb.weight.detach(), run.before)
