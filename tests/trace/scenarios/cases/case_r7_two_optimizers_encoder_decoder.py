"""Control: one model, two optimizers over disjoint parts: ``optimizer_encoder = Adam(set(
model.encoder.parameters()))`` and one for the decoder, kept in a list ``opts``; each iteration
zeroes every optimizer, runs one backward and steps every optimizer.  Each parameter is held by
exactly one optimizer and stepped once per iteration.

Source: https://www.jianshu.com/p/f8955dbc3553 ("关于optimizer(torch.optim)的使用": "params =
set(model.encoder.parameters()); optimizer_encoder = optim.Adam(params, lr=5e-4) ... for optimizer
in opts: optimizer.zero_grad() ... loss.backward() / for optimizer in opts: optimizer.step()").
torch 2.13 accepts the ``set`` of parameters without a warning.
"""

import torch
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://www.jianshu.com/p/f8955dbc3553"
DESCRIPTION = "control: encoder and decoder Adams in a list, zeroed and stepped each: healthy"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_NO_ZERO_GRAD,
    r"(updated|stepped) twice",
    r"two optimizers[^\n]{0,60}(same|both|twice)",
    r"(read|held|stepped) by (two|both|2) optimizers",
    r"no optimizer",
    r"not (held|in (the|any) optimizer)",
    r"accumulat",
]


class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(12, 8), nn.Tanh(), nn.Linear(8, 3))
        self.decoder = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 12))

    def forward(self, x):
        return F.mse_loss(self.decoder(self.encoder(x)), x)  # model(...) returns the loss


def step(watch):
    torch.manual_seed(0)
    model = AutoEncoder()
    params = set(model.encoder.parameters())
    optimizer_encoder = torch.optim.Adam(params, lr=5e-4)
    optimizer_decoder = torch.optim.Adam(model.decoder.parameters(), lr=5e-4)
    opts = [optimizer_encoder, optimizer_decoder]
    g = torch.Generator().manual_seed(1)
    batches = [torch.randn(32, 12, generator=g) for _ in range(2)]
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    read, starts = [], []
    with watch(model) as w:
        for x in batches:
            starts.append({n: p.detach().clone() for n, p in model.named_parameters()})
            for optimizer in opts:
                optimizer.zero_grad()
            loss = model(x)
            loss.backward()
            read.append({n: p.grad.clone() for n, p in model.named_parameters()})
            for optimizer in opts:
                optimizer.step()
    return Run(
        w=w, model=model, opts=opts, before=before, read=read, starts=starts, batches=batches
    )


def truth(run):
    held = [id(p) for opt in run.opts for group in opt.param_groups for p in group["params"]]
    assert sorted(held) == sorted(id(p) for p in run.model.parameters())  # each exactly once
    for n, p in run.model.named_parameters():
        assert not torch.equal(p.detach(), run.before[n]), n
    # each step read its own batch's gradient only (zero_grad on both optimizers): plain torch
    for start, x, read in zip(run.starts, run.batches, run.read, strict=True):
        fresh = AutoEncoder()
        fresh.load_state_dict(start)
        fresh(x).backward()
        for n, p in fresh.named_parameters():
            assert torch.allclose(read[n], p.grad, atol=1e-7), n
