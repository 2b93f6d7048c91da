"""A small language model with its output projection tied to the token embedding
(lm_head.weight = wte.weight, one Parameter).  The embedding gets its own Adam and the rest of
the model (lm_head included) another: the tied weight is held by both, each reads the same
.grad (the sum of the embedding's and the head's gradient), and it is stepped twice per
iteration, with two separate moment states.

Source: https://github.com/paiml/entrenar/issues/314 ("Tied weight gradient not accumulated —
LM head and embedding get separate optimizer steps": "PyTorch shares one tensor for
embed_tokens and lm_head.  The optimizer sees the SUM of both gradients in one step" ...
"These are TWO SEPARATE optimizer steps with TWO SEPARATE momentum/variance states.  The
weights diverge after step 1").  Reproduced in PyTorch with two torch.optim.Adam.
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/paiml/entrenar/issues/314"
DESCRIPTION = "tied embedding / lm_head held by two Adams: the shared weight is stepped twice"
ASK = ["wte.weight"]
MUST = [
    [r"wte", r"lm_head"],
    [
        r"(two|2|both) optimizers",
        r"held by (two|2|both|more than one)",
        r"more than one optimizer",
        r"\btwice\b",
        r"second optimizer",
        r"(stepped|updated|moved) (two|2) times",
    ],
]
MUST_NOT = [FALSE_OK]

VOCAB, DIM, LR = 40, 12, 1e-2


class TiedLM(nn.Module):
    """wte registered first, so the shared Parameter is named wte.weight either way."""

    def __init__(self, head_owns_weight=False):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, DIM)
        self.block = nn.Linear(DIM, DIM)
        self.lm_head = nn.Linear(DIM, VOCAB, bias=False)
        if head_owns_weight:  # nanoGPT: self.transformer.wte.weight = self.lm_head.weight
            self.wte.weight = self.lm_head.weight
        else:  # Hugging Face tie_word_embeddings: output embeddings = input embeddings
            self.lm_head.weight = self.wte.weight

    def forward(self, idx):
        return self.lm_head(torch.tanh(self.block(self.wte(idx))))


def batch():
    g = torch.Generator().manual_seed(1)
    return torch.randint(0, VOCAB, (6, 8), generator=g), torch.randint(
        0, VOCAB, (6, 8), generator=g
    )


def lm_loss(logits, y):
    return F.cross_entropy(logits.reshape(-1, VOCAB), y.reshape(-1))


def reference_grad(head_owns_weight, idx, y):
    """The gradient of the tied weight computed by hand: embedding use plus head use."""
    torch.manual_seed(0)
    ref = TiedLM(head_owns_weight)
    w = ref.wte.weight.detach().clone()
    w_in, w_out = w.clone().requires_grad_(), w.clone().requires_grad_()
    h = torch.tanh(ref.block(F.embedding(idx, w_in)))
    g_in, g_out = torch.autograd.grad(lm_loss(F.linear(h, w_out), y), [w_in, w_out])
    return g_in + g_out


def step(watch):
    torch.manual_seed(0)
    model = TiedLM()
    idx, y = batch()
    opt_embed = torch.optim.Adam(model.wte.parameters(), lr=LR)
    opt_rest = torch.optim.Adam([*model.block.parameters(), *model.lm_head.parameters()], lr=LR)
    before = model.wte.weight.detach().clone()
    with watch(model) as w:
        opt_embed.zero_grad()
        opt_rest.zero_grad()
        loss = lm_loss(model(idx), y)
        loss.backward()
        grad = model.wte.weight.grad.clone()
        opt_embed.step()
        opt_rest.step()
    return Run(w=w, model=model, before=before, grad=grad, idx=idx, y=y, head_owns_weight=False)


def moved_in_lr_units(run):
    """How far the tied weight moved, in units of lr * sign(grad) (Adam's first step)."""
    moved = run.model.wte.weight.detach() - run.before
    big = run.grad.abs() > 1e-5
    return -(moved[big] / (LR * run.grad[big].sign()))


def truth(run):
    assert run.model.lm_head.weight is run.model.wte.weight  # tied: one Parameter
    expected = reference_grad(run.head_owns_weight, run.idx, run.y)
    assert torch.allclose(run.grad, expected, rtol=1e-4, atol=1e-7)  # the sum of both uses
    assert torch.allclose(moved_in_lr_units(run), torch.tensor(2.0), atol=1e-2)  # two steps
