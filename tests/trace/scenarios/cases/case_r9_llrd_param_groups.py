"""Control: fine-tuning with layer-wise learning-rate decay: one AdamW group per block, the head
at the base rate and each block below it at ``base_lr * decay ** depth`` (decay 0.8), the
embedding lowest.  Every parameter is in exactly one group; every parameter moves, the lower
blocks by less.

Source: https://markaicode.com/layer-wise-learning-rate-decay-implementation-guide
(``lr_layer_i = base_lr x (decay_factor)^(total_layers - i)``, "LLRD applies a decay factor to
reduce learning rates as you move from output to input layers").
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn

SOURCE = "https://markaicode.com/layer-wise-learning-rate-decay-implementation-guide"
DESCRIPTION = "control: LLRD, one AdamW group per block, lr base * 0.8**depth: all parameters move"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"no optimizer",
    r"not (held|in)[^\n]{0,40}optimi[sz]er",
    r"changed none",
    r"learning rate (is |of |was )?0\b",
]


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(30, 16)
        self.layers = nn.ModuleList(
            nn.Sequential(nn.LayerNorm(16), nn.Linear(16, 16), nn.GELU()) for _ in range(4)
        )
        self.head = nn.Linear(16, 3)

    def forward(self, tokens):
        h = self.embed(tokens)
        for layer in self.layers:
            h = h + layer(h)
        return self.head(h.mean(1))


def step(watch):
    torch.manual_seed(0)
    model = Encoder()
    base, decay, n = 1e-2, 0.8, len(model.layers)
    groups = [{"params": model.head.parameters(), "lr": base}]
    for i, layer in enumerate(model.layers):
        groups.append({"params": layer.parameters(), "lr": base * decay ** (n - i)})
    groups.append({"params": model.embed.parameters(), "lr": base * decay ** (n + 1)})
    optimizer = torch.optim.AdamW(groups, weight_decay=0.01)
    g = torch.Generator().manual_seed(1)
    tokens, y = torch.randint(0, 30, (16, 6), generator=g), torch.randint(0, 3, (16,), generator=g)
    before = {n_: p.detach().clone() for n_, p in model.named_parameters()}
    with watch(model) as w:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(tokens), y).backward()
        optimizer.step()
    after = {n_: p.detach().clone() for n_, p in model.named_parameters()}
    held = sum(len(group["params"]) for group in optimizer.param_groups)
    return Run(
        w=w, before=before, after=after, held=held, lrs=[gr["lr"] for gr in optimizer.param_groups]
    )


def truth(run):
    assert run.held == len(run.before)
    head, layers, embed = run.lrs[0], run.lrs[1:5], run.lrs[5]
    assert layers == sorted(layers) and embed < layers[0] < layers[-1] < head  # lower: smaller
    for n, b in run.before.items():
        assert not torch.equal(b, run.after[n]), n
