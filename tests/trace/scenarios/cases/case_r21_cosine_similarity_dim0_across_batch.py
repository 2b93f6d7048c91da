"""An embedding regressor trained with ``1 - F.cosine_similarity(pred, target, dim=0).mean()`` on
``(32, 8)`` batches.  ``dim=0`` is the batch dimension: the similarity is taken between feature
columns across the 32 examples, giving 8 values, not one per example.  The loss runs and
decreases, but it asks each output feature to correlate with its target column over the batch
(a scale per feature, an offset allowed), not each prediction to point along its own target:
its gradient is not that of the per-example loss.  Every gradient is finite and nonzero; nothing
raises.

Source: https://runebook.dev/en/docs/pytorch/generated/torch.nn.functional.cosine_similarity
("The most frequent trouble is misunderstanding which dimension to use for the calculation";
"Incorrect dim: If your tensors represent a batch of vectors (e.g., [batch_size, vector_dim]), you
need to specify the vector dimension as dim"; "# Incorrect: Calculating similarity across the batch
dimension (dim=0)"; "Incorrect Output Shape: torch.Size([128]) - probably not what you want!").
Adapted: a ``Linear(10, 32)``, ``Tanh``, ``Linear(32, 8)`` model fitted to fixed target
embeddings of 32 examples, SGD at 0.1.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://runebook.dev/en/docs/pytorch/generated/torch.nn.functional.cosine_similarity"
DESCRIPTION = "cosine loss with cosine_similarity(dim=0) on (B, D): compares columns across batch"
ASK = []
MUST = [
    [
        r"dim\s*=\s*0",
        r"\bdim(ension)? 0\b",
        r"across (the )?batch",
        r"batch (dimension|axis)",
        r"(feature|column)s?[^\n]{0,40}(instead|rather)",
        r"wrong (dim\w*|axis)",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE]


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(32, 10, generator=g)
    target = torch.tanh(x @ torch.randn(10, 8, generator=g))
    return x, target


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 8))


def step(watch, dim=0):
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, target = data()
    with watch(model) as w:
        optimizer.zero_grad()
        pred = model(x)
        sims = F.cosine_similarity(pred, target, dim=dim)
        loss = 1 - sims.mean()
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    return Run(w=w, model=model, dim=dim, sims_shape=tuple(sims.shape), x=x, target=target,
               pred=pred.detach(), loss=loss.item(), grads=grads)  # fmt: skip


def truth(run):
    assert run.dim == 0
    assert run.sims_shape == (8,)  # one value per feature column, not per example
    ref = make_model()
    per_example = 1 - F.cosine_similarity(ref(run.x), run.target, dim=1).mean()
    ref_grads = torch.autograd.grad(per_example, list(ref.parameters()))
    flat = torch.cat([g.flatten() for g in run.grads])
    ref_flat = torch.cat([g.flatten() for g in ref_grads])
    assert float(F.cosine_similarity(flat, ref_flat, dim=0)) < 0.95  # another objective
    # scaling one example's prediction leaves its own cosine unchanged but not this loss
    scaled = run.pred.clone()
    scaled[0] *= 10
    per_ex = [F.cosine_similarity(p, run.target, dim=1).mean() for p in (run.pred, scaled)]
    cols = [F.cosine_similarity(p, run.target, dim=0).mean() for p in (run.pred, scaled)]
    assert abs(float(1 - cols[0]) - run.loss) < 1e-6
    assert abs(float(per_ex[1] - per_ex[0])) < 1e-6  # the per-example loss does not change
    assert abs(float(cols[1] - cols[0])) > 1e-3  # this one does
    for g in run.grads:
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
