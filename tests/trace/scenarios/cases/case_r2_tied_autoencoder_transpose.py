"""Control: a tied autoencoder whose decoder uses the encoder's weight transposed
(F.linear(h, enc.weight.t())).  The weight's gradient is the sum of its two uses, in one
backward pass, as it should be.

Source: https://wiki.hoelee.com/content/stats.stackexchange.com_en_all_2022-05/questions/239943/autoencoders-gradient-when-using-tied-weights
(a copy of Cross Validated 239943, "Autoencoders' gradient when using tied weights": "the
gradient with respect to W ... is equal to adding up the backpropagation gradients of each
layer").
"""

import torch
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://wiki.hoelee.com/content/stats.stackexchange.com_en_all_2022-05/questions/239943/autoencoders-gradient-when-using-tied-weights"
DESCRIPTION = "control: decoder uses enc.weight.t(); grad = sum of both uses, one pass"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NO_ZERO_GRAD,
    CLAIMS_NONFINITE,
    r"\b2 (backward )?passes",
    r"two (backward )?passes",
]


class TiedAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(8, 3)
        self.dec_bias = nn.Parameter(torch.zeros(8))

    def forward(self, x):
        h = torch.sigmoid(self.enc(x))
        return F.linear(h, self.enc.weight.t(), self.dec_bias)


def step(watch):
    torch.manual_seed(0)
    model = TiedAE()
    x = torch.rand(16, 8)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with watch(model) as w:
        opt.zero_grad()
        loss = F.mse_loss(model(x), x)
        loss.backward()
        grad = model.enc.weight.grad.clone()
        opt.step()
    return Run(w=w, model=model, x=x, grad=grad)


def truth(run):
    torch.manual_seed(0)
    ref = TiedAE()
    w_in = ref.enc.weight.detach().clone().requires_grad_()
    w_out = ref.enc.weight.detach().clone().requires_grad_()
    h = torch.sigmoid(F.linear(run.x, w_in, ref.enc.bias))
    loss = F.mse_loss(F.linear(h, w_out.t(), ref.dec_bias), run.x)
    g_in, g_out = torch.autograd.grad(loss, [w_in, w_out])
    assert torch.allclose(run.grad, g_in + g_out, rtol=1e-4, atol=1e-7)
    assert not torch.allclose(run.grad, g_in, rtol=1e-2) and not torch.allclose(
        run.grad, g_out, rtol=1e-2
    )
