"""Control: selective freezing by requires_grad (every layer frozen but the last block and the
classifier), with AdamW(weight_decay=0.01) built over model.parameters(), frozen ones included.
The frozen parameters never get a .grad, AdamW skips parameters without one, so neither the
update nor the weight decay touches them: they stay exactly as they were; the rest trains.

Source: https://skillcurb.com/tutorials/generative-ai/lecture-15-fine-tuning-a-bert-model-with-selective-layer-freezing
("we freeze all layers except for: Encoder blocks 10 and 11, Pooler layer, Final classification
head ... param.requires_grad = any(layer in name for layer in trainable_layers)").
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://skillcurb.com/tutorials/generative-ai/lecture-15-fine-tuning-a-bert-model-with-selective-layer-freezing"
DESCRIPTION = "control: freeze by requires_grad, AdamW(wd) over all params: frozen stay put"
ASK = []
MUST = [[HEALTHY_OK, r"frozen", r"requires_grad"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"frozen[^\n]{0,60}(moved|still (moved|changed|updated))",
    r"weight.decay[^\n]{0,60}(moved|changed)",
]


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embeddings = nn.Embedding(50, 16)
        self.layer = nn.ModuleList([nn.Sequential(nn.Linear(16, 16), nn.Tanh()) for _ in range(4)])
        self.classifier = nn.Linear(16, 2)

    def forward(self, ids):
        h = self.embeddings(ids).mean(1)
        for block in self.layer:
            h = h + block(h)
        return self.classifier(h)


def step(watch):
    torch.manual_seed(0)
    model = Encoder()
    trainable_layers = ["layer.3", "classifier"]
    for name, param in model.named_parameters():
        param.requires_grad = any(layer in name for layer in trainable_layers)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    ids, y = torch.randint(0, 50, (16, 10)), torch.randint(0, 2, (16,))
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    with watch(model) as w:
        opt.zero_grad()
        loss = F.cross_entropy(model(ids), y)
        loss.backward()
        opt.step()
    return Run(w=w, model=model, before=before)


def truth(run):
    for name, p in run.model.named_parameters():
        if p.requires_grad:
            assert p.grad is not None and not torch.equal(p.detach(), run.before[name])
        else:
            assert p.grad is None and torch.equal(p.detach(), run.before[name])
