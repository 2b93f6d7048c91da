"""Control: input embedding and output projection share one Parameter (weight tying); the
shared weight receives the sum of both uses' gradients in one backward pass.

Source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1 (copy of the PyTorch forum
thread "Tying weights from different neurons and averaging the gradients", 2018: "You can just
assign the same Parameter to two different modules. You'll get the sum of gradients").
"""

import torch
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1 (forum thread 'Tying weights from different neurons and averaging the gradients')"
DESCRIPTION = "control: tied embedding/output weight; grad = sum of both uses, one pass"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NO_ZERO_GRAD,
    CLAIMS_NONFINITE,
    r"\b2 (backward )?passes",
    r"two (backward )?passes",
]


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20, 8)
        self.mix = nn.Linear(8, 8)
        self.out = nn.Linear(8, 20, bias=False)
        self.out.weight = self.emb.weight  # tied

    def forward(self, idx):
        return self.out(torch.tanh(self.mix(self.emb(idx))))


def step(watch):
    torch.manual_seed(0)
    model = TinyLM()
    idx, target = torch.randint(0, 20, (16,)), torch.randint(0, 20, (16,))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with watch(model) as w:
        opt.zero_grad()
        loss = F.cross_entropy(model(idx), target)
        loss.backward()
        grad = model.emb.weight.grad.clone()
        opt.step()
    return Run(w=w, model=model, idx=idx, target=target, grad=grad)


def truth(run):
    torch.manual_seed(0)
    ref = TinyLM()
    w_in = ref.emb.weight.detach().clone().requires_grad_()
    w_out = ref.emb.weight.detach().clone().requires_grad_()
    h = torch.tanh(ref.mix(F.embedding(run.idx, w_in)))
    g_in, g_out = torch.autograd.grad(F.cross_entropy(h @ w_out.t(), run.target), [w_in, w_out])
    assert run.model.out.weight is run.model.emb.weight
    assert torch.allclose(run.grad, g_in + g_out, rtol=1e-4, atol=1e-6)
