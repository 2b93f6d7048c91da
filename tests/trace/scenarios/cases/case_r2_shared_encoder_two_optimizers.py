"""Two autoencoders share one encoder; each has its own Adam holding the encoder and its own
decoder.  Both losses are backpropagated (retain_graph=True) before either step, so each
optimizer reads the encoder's gradient of *both* losses, and the encoder is stepped twice per
iteration, once by each optimizer.

Source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1 (forum thread "How to
Implement Back Propagation of Multiple Models that Share a Portion of Their Weights":
error1.backward(retain_graph=True); error2.backward(); optimizer1.step(); optimizer2.step(),
with "optimizer1 = optim.Adam([encoder, decoder1])", "optimizer2 = optim.Adam([encoder,
decoder2])"; "the concern raised is that ... both loss functions being used to optimize the
second autoencoder, rather than being optimized separately").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1 (forum thread 'How to Implement Back Propagation of Multiple Models that Share a Portion of Their Weights')"
DESCRIPTION = "encoder held by two Adams, both losses backpropagated first: stepped twice"
ASK = ["encoder.weight"]
MUST = [
    [r"encoder"],
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
    opt1 = torch.optim.Adam([*model.encoder.parameters(), *model.decoder1.parameters()], lr=1e-2)
    opt2 = torch.optim.Adam([*model.encoder.parameters(), *model.decoder2.parameters()], lr=1e-2)
    x = torch.randn(16, 8)
    before = model.encoder.weight.detach().clone()
    with watch(model) as w:
        out1, out2 = model(x)
        error1 = F.mse_loss(out1, x)
        error2 = F.mse_loss(out2, 0.5 * x)
        error1.backward(retain_graph=True)
        error2.backward()
        enc_grad = model.encoder.weight.grad.clone()
        opt1.step()
        opt2.step()
        opt1.zero_grad()
        opt2.zero_grad()
    return Run(w=w, model=model, x=x, before=before, enc_grad=enc_grad)


def truth(run):
    torch.manual_seed(0)
    ref = TwoAE()
    out1, out2 = ref(run.x)
    g1 = torch.autograd.grad(F.mse_loss(out1, run.x), ref.encoder.weight, retain_graph=True)[0]
    g2 = torch.autograd.grad(F.mse_loss(out2, 0.5 * run.x), ref.encoder.weight)[0]
    assert torch.allclose(run.enc_grad, g1 + g2, rtol=1e-4, atol=1e-7)  # both losses
    moved = run.model.encoder.weight.detach() - run.before
    # two Adam first steps, each lr * sign(g1 + g2): the encoder moved by 2 * lr per entry
    assert torch.allclose(moved, -2e-2 * (g1 + g2).sign(), rtol=1e-3, atol=1e-6)
