"""Control: the same shared-encoder model, one optimizer holding every parameter, zero_grad,
then loss1.backward(retain_graph=True) and loss2.backward() before one step.  This is the same
gradient as (loss1 + loss2).backward(): nothing is wrong.

Source: https://discuss.pytorch.org/t/multi-task-learning-whats-the-difference-between-jointly-backward-and-backward-with-retain-graph-true/28162
("what's the difference between (loss1+loss2).backward() and loss1.backward(retain_graph=True);
loss2.backward()?" answered: "they will have the same impact", "Joint backward and 'piecewise'
backward is usually the same").
"""

import torch
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://discuss.pytorch.org/t/multi-task-learning-whats-the-difference-between-jointly-backward-and-backward-with-retain-graph-true/28162"
DESCRIPTION = "control: two losses, backward(retain_graph) then backward, one optimizer step"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, r"(two|2|both) optimizers", r"\btwice\b"]


class TwoAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(8, 3)
        self.decoder1 = nn.Linear(3, 8)
        self.decoder2 = nn.Linear(3, 8)

    def forward(self, x):
        z = torch.tanh(self.encoder(x))
        return self.decoder1(z), self.decoder2(z)


def step(watch):
    torch.manual_seed(0)
    model = TwoAE()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    x = torch.randn(16, 8)
    before = model.encoder.weight.detach().clone()
    with watch(model) as w:
        opt.zero_grad()
        out1, out2 = model(x)
        loss1 = F.mse_loss(out1, x)
        loss2 = F.mse_loss(out2, 0.5 * x)
        loss1.backward(retain_graph=True)
        loss2.backward()
        enc_grad = model.encoder.weight.grad.clone()
        opt.step()
    return Run(w=w, model=model, x=x, before=before, enc_grad=enc_grad)


def truth(run):
    torch.manual_seed(0)
    ref = TwoAE()
    out1, out2 = ref(run.x)
    joint = F.mse_loss(out1, run.x) + F.mse_loss(out2, 0.5 * run.x)
    g = torch.autograd.grad(joint, ref.encoder.weight)[0]
    assert torch.allclose(run.enc_grad, g, rtol=1e-4, atol=1e-7)  # = joint backward
    moved = run.model.encoder.weight.detach() - run.before
    assert torch.allclose(moved, -1e-2 * g.sign(), rtol=1e-3, atol=1e-6)  # one Adam step
