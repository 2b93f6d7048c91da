"""A healthy step that looks broken: Tent's fully test-time adaptation.  The source-trained
classifier is put in train mode with every parameter frozen except the BatchNorm layers' scale and
shift, which the optimizer alone holds; the BatchNorm layers normalise with the test batch's own
statistics (no running statistics kept); the loss is the entropy of the model's predictions on an
unlabelled, shifted test batch.  Only the four BatchNorm affine parameters get gradients (finite
and nonzero at both test batches) and move; the linear layers' ``.grad`` stay ``None`` by design.

Source: https://tomesphere.com/paper/2006.10726 ("Tent is a test-time adaptation method that
minimizes prediction entropy"; "we optimize the model for confidence as measured by the entropy of
its predictions. Our method estimates normalization statistics and optimizes channel-wise affine
transformations to update online on each batch").  Adapted: a ``Linear(10, 32), BatchNorm1d,
GELU, Linear(32, 32), BatchNorm1d, GELU, Linear(32, 4)`` classifier trained 50 Adam steps on
source data, then two test batches of 64 shifted and scaled examples, Adam at 1e-3 on the
BatchNorm parameters.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://tomesphere.com/paper/2006.10726"
DESCRIPTION = "healthy: Tent, entropy minimisation on test batches training BatchNorm affine only"
ASK = []
MUST = [
    [
        HEALTHY_OK,
        r"(batch ?norm\w*|\bbn\b|affine)[^\n]{0,80}(only|trained|adapt\w*)",
        r"(only|just)[^\n]{0,40}(batch ?norm\w*|\bbn\b|affine)",
        r"requires_grad\s*(=|is|was)?\s*False",
        r"\bfrozen\b|freez\w*",
    ]
]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    CLAIMS_NO_ZERO_GRAD,
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bdead\b",
]


def data():
    g = torch.Generator().manual_seed(1)
    mix = torch.randn(10, 4, generator=g)
    x_src = torch.randn(256, 10, generator=g)
    y_src = (x_src @ mix).argmax(1)
    x_test = torch.randn(2, 64, 10, generator=g) * 1.5 + 0.8  # a shifted domain
    return x_src, y_src, x_test


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Linear(10, 32),
        nn.BatchNorm1d(32),
        nn.GELU(),
        nn.Linear(32, 32),
        nn.BatchNorm1d(32),
        nn.GELU(),
        nn.Linear(32, 4),
    )
    x_src, y_src, x_test = data()
    source_opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(50):  # source training
        source_opt.zero_grad()
        F.cross_entropy(model(x_src), y_src).backward()
        source_opt.step()
    model.zero_grad(set_to_none=True)
    # Tent's configuration: train mode, batch statistics, only the BN affine parameters trained
    model.train()
    model.requires_grad_(False)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm1d):
            m.requires_grad_(True)
            m.track_running_stats = False
            m.running_mean, m.running_var = None, None
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.Adam(params, lr=1e-3)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    batches = []
    with watch(model) as w:
        for x in x_test:
            optimizer.zero_grad()
            logits = model(x)
            entropy = -(logits.softmax(1) * logits.log_softmax(1)).sum(1).mean()
            entropy.backward()
            batches.append(
                {
                    n: None if p.grad is None else p.grad.detach().clone()
                    for n, p in model.named_parameters()
                }
            )
            optimizer.step()
    return Run(w=w, model=model, before=before, batches=batches, n_params=len(params))


def truth(run):
    assert run.n_params == 4
    for grads in run.batches:
        for n, g in grads.items():
            if n.split(".")[0] in ("1", "4"):  # the BatchNorm layers
                assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
            else:
                assert g is None, n
    for n, p in run.model.named_parameters():
        assert torch.equal(p.detach(), run.before[n]) == (n.split(".")[0] not in ("1", "4")), n
