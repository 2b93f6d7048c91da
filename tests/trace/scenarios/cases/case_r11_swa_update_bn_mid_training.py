"""Control, a step suspected wrongly: stochastic weight averaging evaluated in the middle of
training.  After the first step the averaged model is updated (``swa_model.update_parameters``),
its BatchNorm statistics recomputed with ``torch.optim.swa_utils.update_bn`` over a few batches,
and it is evaluated; then training goes on.  ``update_bn`` resets and re-estimates the statistics
of ``swa_model``'s own copy of the network (``AveragedModel`` holds a deep copy): the trained
model's BatchNorm buffers and parameters are untouched, and both training steps are ordinary.

Source: https://github.com/timgaripov/swa/issues/15 ("Isn't the mid-training evaluation of the SWA
performance corrupting the batchnorm running averages?" - "The mid-training evaluation of the SWA
performance does not really have any effect on the training.  We only apply bn_update to swa_model
which is separated from model trained by SGD").  The step uses today's ``torch.optim.swa_utils``.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F
from torch.optim.swa_utils import AveragedModel, update_bn

SOURCE = "https://github.com/timgaripov/swa/issues/15"
DESCRIPTION = "control: update_bn(loader, swa_model) between two SGD steps: trained model untouched"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"(updated|changed|moved) (again|twice)",
    r"\b1\.running_(mean|var)[^\n]{0,80}(reset|overwritten|corrupt)",
    r"frozen[^\n]{0,40}moved",
]


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Linear(6, 16, bias=False), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 1)
    )
    swa_model = AveragedModel(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    g = torch.Generator().manual_seed(1)
    batches = [(torch.randn(16, 6, generator=g), torch.randn(16, 1, generator=g)) for _ in range(4)]
    moved, around_update_bn = [], []
    with watch(model) as w:
        for i, (x, y) in enumerate(batches[:2]):
            before = [p.detach().clone() for p in model.parameters()]
            opt.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            moved.append(
                all(
                    not torch.equal(p.detach(), b)
                    for p, b in zip(model.parameters(), before, strict=True)
                )
            )
            if i == 0:  # mid-training SWA evaluation
                snapshot = [t.detach().clone() for t in model.state_dict().values()]
                swa_model.update_parameters(model)
                update_bn([b[0] for b in batches], swa_model)
                swa_model.eval()
                with torch.no_grad():
                    F.mse_loss(swa_model(batches[3][0]), batches[3][1])
                after = [t.detach().clone() for t in model.state_dict().values()]
                around_update_bn = list(zip(snapshot, after, strict=True))
    bn, swa_bn = model[1], swa_model.module[1]
    return Run(
        w=w,
        moved=moved,
        around=around_update_bn,
        bn_mean=bn.running_mean.clone(),
        swa_mean=swa_bn.running_mean.clone(),
    )


def truth(run):
    assert run.moved == [True, True]
    assert all(torch.equal(a, b) for a, b in run.around)  # update_bn left the trained model alone
    assert not torch.allclose(run.bn_mean, run.swa_mean)
