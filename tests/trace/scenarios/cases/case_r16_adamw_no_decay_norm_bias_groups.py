"""A healthy step: AdamW with two parameter groups built the nanoGPT way, weight decay 0.1 on every
tensor of two or more dimensions (the embedding and the linear weights) and none on the
one-dimensional ones (biases and LayerNorm weights).  Every parameter is in exactly one group, the
optimizer holds them all, and on the first step the undecayed tensors move by exactly the plain
Adam step while the decayed ones also shrink by ``lr * 0.1 * w``.  Every gradient is finite and
nonzero.

Source: https://yao-lirong.github.io/2024/03/13/decoupled-weight-decay-regularization-sgdw-adamw.html
("When we apply weight decay in transformers, we apply it to all layers except LayerNorm and bias
layers. In nanoGPT, Karp[athy] ..."; nanoGPT's ``configure_optimizers``: ``decay_params = [p for n,
p in param_dict.items() if p.dim() >= 2]``, ``nodecay_params = [p for n, p in param_dict.items() if
p.dim() < 2]``).  Adapted: a small pre-norm token model (embedding, LayerNorm, GELU MLP with a
residual, LayerNorm, head) on random tokens.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://yao-lirong.github.io/2024/03/13/decoupled-weight-decay-regularization-sgdw-adamw.html"
)
DESCRIPTION = (
    "healthy: AdamW, decay on >=2-D weights, none on biases and LayerNorm (nanoGPT groups)"
)
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"not in (the |any )?optimizer",
    r"weight.?decay[^\n]{0,40}(missing|not applied|skipped)",
    r"no gradient",
    r"all-zero",
]
VOCAB, DIM, LR, WD = 16, 32, 1e-3, 0.1


class TokenModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, DIM)
        self.ln1 = nn.LayerNorm(DIM)
        self.fc = nn.Linear(DIM, 64)
        self.proj = nn.Linear(64, DIM)
        self.ln2 = nn.LayerNorm(DIM)
        self.head = nn.Linear(DIM, VOCAB)

    def forward(self, tokens):
        h = self.emb(tokens)
        h = h + self.proj(F.gelu(self.fc(self.ln1(h))))
        return self.head(self.ln2(h))


def make_model():
    torch.manual_seed(0)
    return TokenModel()


def groups(model):
    params = dict(model.named_parameters())
    decay = [p for _, p in params.items() if p.dim() >= 2]
    nodecay = [p for _, p in params.items() if p.dim() < 2]
    return [{"params": decay, "weight_decay": WD}, {"params": nodecay, "weight_decay": 0.0}]


def batch():
    g = torch.Generator().manual_seed(1)
    tokens = torch.randint(0, VOCAB, (128,), generator=g)
    return tokens, (3 * tokens + 1) % VOCAB


def step(watch):
    model = make_model()
    optimizer = torch.optim.AdamW(groups(model), lr=LR)
    tokens, target = batch()
    names = [n for n, _ in model.named_parameters()]
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    with watch(model) as w:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(tokens), target)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    update = {n: p.detach() - before[n] for n, p in model.named_parameters()}
    ref = make_model()
    ref_opt = torch.optim.Adam(ref.parameters(), lr=LR)
    F.cross_entropy(ref(tokens), target).backward()
    ref_opt.step()
    plain = {n: p.detach() - before[n] for n, p in ref.named_parameters()}
    group_of = {}
    for k, group in enumerate(optimizer.param_groups):
        for p in group["params"]:
            group_of.setdefault(id(p), []).append(k)
    membership = {n: group_of.get(id(p), []) for n, p in model.named_parameters()}
    return Run(
        w=w,
        names=names,
        grads=grads,
        update=update,
        plain=plain,
        before=before,
        membership=membership,
    )


def truth(run):
    for n in run.names:
        assert len(run.membership[n]) == 1, n  # in exactly one group
        g = run.grads[n]
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        decayed = run.membership[n] == [0]
        assert decayed == (run.before[n].dim() >= 2), n
        expected = run.plain[n] - (LR * WD * run.before[n] if decayed else 0.0)
        assert torch.allclose(run.update[n], expected, atol=1e-6), n
    assert run.membership["ln1.weight"] == [1] and run.membership["fc.bias"] == [1]
