"""Control: quantization-aware training in eager mode: ``model.qconfig =
get_default_qat_qconfig("fbgemm")``, ``prepare_qat`` on the model in train mode, then an ordinary
training step.  The fake-quantize modules round weights and activations in the forward and pass
the gradient straight through in the backward: every parameter gets a finite, nonzero gradient
and moves, and the observers' buffers record the ranges they saw.

Source: http://theneuralbase.com/quantization/qna/what-is-quantization-aware-training/ (its
``model.qconfig = torch.quantization.get_default_qat_qconfig('fbgemm')`` and
``prepare_qat``; the page says ``prepare_qat()`` ignores a ``qconfig`` assigned to the model,
which torch 2.13 does not: the fake-quantize modules are inserted, asserted in the truth).
``torch.ao.quantization`` warns that it is deprecated; the step ignores its warnings.
"""

import warnings

import torch
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "http://theneuralbase.com/quantization/qna/what-is-quantization-aware-training/"
DESCRIPTION = "control: eager QAT (prepare_qat, fake-quant STE), one Adam step: every param moves"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, r"no gradient", r"all-?zero"]


def step(watch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.ao.quantization's deprecation and range notes
        import torch.ao.quantization as tq

        torch.manual_seed(0)
        model = nn.Sequential(
            tq.QuantStub(), nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 5), tq.DeQuantStub()
        )
        model.train()
        model.qconfig = tq.get_default_qat_qconfig("fbgemm")
        tq.prepare_qat(model, inplace=True)
        g = torch.Generator().manual_seed(1)
        x, y = torch.randn(32, 10, generator=g), torch.randint(0, 5, (32,), generator=g)
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        before = {n: p.detach().clone() for n, p in model.named_parameters()}
        with watch(model) as w:
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            grads = {n: p.grad.clone() for n, p in model.named_parameters()}
            opt.step()
    return Run(w=w, model=model, before=before, grads=grads)


def truth(run):
    fake = [m for m in run.model.modules() if type(m).__name__.endswith("FakeQuantize")]
    assert len(fake) >= 4  # prepare_qat did read model.qconfig
    assert all(bool(m.fake_quant_enabled[0]) for m in fake)
    for n, p in run.model.named_parameters():
        g = run.grads[n]
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        assert not torch.equal(p.detach(), run.before[n]), n
