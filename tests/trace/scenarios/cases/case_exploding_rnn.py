"""A ReLU RNN whose recurrent matrix has gain 1.3 over 40 time steps: the gradient reaching the
encoder in front of it is orders of magnitude larger than the one arriving at the output.

Source: https://solana.garden/guides/gradient-clipping-explained/ (an LSTM churn model whose
loss went to nan from "a backprop spike through the unrolled graph"; exploding gradients in
recurrent networks).
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://solana.garden/guides/gradient-clipping-explained/"
DESCRIPTION = "ReLU RNN, recurrent gain 1.3, 40 steps: gradient at the encoder explodes"
ASK = []
MUST = [[r"explod", r"\bgrow", r"blow", r"increas", r"large"]]
MUST_NOT = [FALSE_OK, r"vanish"]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(4, 8)
        self.rnn = nn.RNN(8, 8, nonlinearity="relu", batch_first=True)
        self.head = nn.Linear(8, 1)

    def forward(self, x):
        out, _ = self.rnn(self.enc(x))
        return self.head(out[:, -1])


def step(watch):
    torch.manual_seed(0)
    model = Net()
    with torch.no_grad():
        model.rnn.weight_hh_l0.copy_(1.3 * torch.eye(8))
        model.rnn.bias_hh_l0.zero_()
        model.rnn.bias_ih_l0.fill_(0.1)
    x, y = torch.randn(2, 40, 4), torch.zeros(2, 1)
    seen = {}
    hooks = [
        model.enc.register_forward_hook(lambda m, i, o: seen.update(enc=o)),
        model.head.register_forward_hook(lambda m, i, o: seen.update(out=o)),
    ]
    try:
        with watch(model) as w:
            pred = model(x)
            loss = F.mse_loss(pred, y)
            g_enc, g_out = torch.autograd.grad(loss, [seen["enc"], seen["out"]], retain_graph=True)
            loss.backward()
    finally:
        for h in hooks:
            h.remove()
    return Run(w=w, model=model, g_enc=g_enc, g_out=g_out, loss=loss.detach())


def truth(run):
    assert bool(torch.isfinite(run.loss))
    assert float(run.g_enc.norm()) > 1e3 * float(run.g_out.norm())
