"""Parameter groups built from ``model.state_dict()`` to keep the biases out of weight decay. The
tensors of a state dict are detached: they share the parameters' storage but are other tensor
objects, with ``requires_grad=False``. The optimizer holds those copies, whose ``.grad`` stays
``None``; ``loss.backward()`` fills the ``.grad`` of the model's real parameters, which the
optimizer does not hold, so ``optimizer.step()`` updates nothing and the loss cannot drop. The
regularisation term, summed from the same state dict, has no graph and contributes no gradient.
Every gradient is finite and nonzero; nothing raises.

Source: https://discuss.pytorch.org/t/problems-about-l2-regularization-excluding-bias/142816 ("I
want to do L2 excluding bias"; "weight_list += [model.state_dict()[para_weight]]", "bias_list +=
[model.state_dict()[para_bias]]", "optimizer = torch.optim.Adam([{'params': weight_list,
'weight_decay':1}, {'params': bias_list, 'weight_decay':0}], lr=lr)", "loss_reg +=
torch.sum(torch.square(model.state_dict()[para]))"; "when I applied them to torch.optim.Adam using
param_groups the loss did not drop"). Adapted: the thread's ``CatNetwork`` with ``Tanh`` in place of
``ReLU`` (12 inputs, 16 hidden units, a sigmoid output, ``BCELoss``), AdamW with weight decay 0.01
in place of Adam's 1, the regularisation weighted by 1e-3.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn

SOURCE = "https://discuss.pytorch.org/t/problems-about-l2-regularization-excluding-bias/142816"
DESCRIPTION = "optimizer param groups built from model.state_dict() tensors: detached, no update"
ASK = []
MUST = [
    [
        r"state_dict",
        r"detach\w*",
        r"not (held|in|among|one of)[^\n]{0,40}optimi[sz]er",
        r"optimi[sz]er[^\n]{0,80}(does not|doesn't|never|not) (hold|contain|include|update|step)",
        r"optimi[sz]er[^\n]{0,80}(other|different|copies|copy) (of )?(tensor|param)",
    ]
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE]


class CatNetwork(nn.Module):
    def __init__(self, in_dim, n_hidden_1, out_dim):
        super().__init__()
        self.layer1 = nn.Sequential(nn.Linear(in_dim, n_hidden_1), nn.Tanh())
        self.layer2 = nn.Sequential(nn.Linear(n_hidden_1, out_dim), nn.Sigmoid())

    def forward(self, x):
        return self.layer2(self.layer1(x))

    def regularization(self, model, weight_decay):
        loss_reg = 0
        for para in model.state_dict():
            loss_reg += torch.sum(torch.square(model.state_dict()[para]))
        return weight_decay * loss_reg


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 12, generator=g)
    return x, (x[:, 0] + x[:, 1] > 0).float().unsqueeze(1)


def step(watch):
    torch.manual_seed(0)
    model = CatNetwork(12, 16, 1)
    weight_list, bias_list = [], []
    for i in range(1, 3):
        weight_list += [model.state_dict()[f"layer{i}.0.weight"]]
        bias_list += [model.state_dict()[f"layer{i}.0.bias"]]
    optimizer = torch.optim.AdamW(
        [{"params": weight_list, "weight_decay": 0.01}, {"params": bias_list, "weight_decay": 0}],
        lr=1e-2,
    )
    criterion = nn.BCELoss()
    x, y = data()
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    with watch(model) as w:
        optimizer.zero_grad()
        reg = model.regularization(model, 1e-3)
        loss = criterion(model(x), y) + reg
        loss.backward()
        optimizer.step()
    return Run(w=w, model=model, optimizer=optimizer, before=before, reg=reg)


def truth(run):
    params = dict(run.model.named_parameters())
    held = [t for group in run.optimizer.param_groups for t in group["params"]]
    assert not any(t is p for t in held for p in params.values())  # other tensor objects
    assert {t.data_ptr() for t in held} == {p.data_ptr() for p in params.values()}  # same storage
    assert all(not t.requires_grad and t.grad is None for t in held)
    assert not run.reg.requires_grad  # the regularisation has no graph
    for n, p in params.items():
        assert p.grad is not None and bool(torch.isfinite(p.grad).all()), n
        assert bool(p.grad.abs().sum() > 0), n
        assert torch.equal(p.detach(), run.before[n]), n  # the step updated nothing
