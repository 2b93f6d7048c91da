"""The control of ``head_requires_grad_set_on_module``: the same "pretrained" network loaded
partially into a model with a new 5-class head, by filtering the checkpoint for the entries whose
name and shape match (the old head's are skipped), then freezing what was reused with
``requires_grad = False`` on the body's parameters.  The new head's parameters keep
``requires_grad = True``: they get finite, nonzero gradients and move; the body has no gradient
and does not move, as intended.

Source: https://codemia.io/knowledge-hub/path/how_can_i_load_a_partial_pretrained_pytorch_model
("Filter the Checkpoint for Matching Shapes"; "This pattern is very common when the feature
extractor is unchanged but the output layer has a different number of classes"; "Freeze What You
Reused").  Adapted: the bug's body, a ``Linear(32, 5)`` head, SGD at 0.1 over the parameters that
require a gradient, 64 examples.
"""

import torch
from case_r23_head_requires_grad_set_on_module import Net, data, pretrained
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://codemia.io/knowledge-hub/path/how_can_i_load_a_partial_pretrained_pytorch_model"
DESCRIPTION = "control: checkpoint filtered by shape, reused body frozen, new 5-class head trains"
ASK = []
MUST = [[HEALTHY_OK, r"frozen", r"freez\w*", r"requires_grad\s*(=|is)?\s*False"]]
MUST_NOT = [CLAIMS_ERROR, CLAIMS_NONFINITE, r"all[- ]zero", r"\bzero grad\w*", r"\bdead\b"]


def step(watch):
    checkpoint = pretrained().state_dict()
    torch.manual_seed(1)
    model = Net()
    model.fc = nn.Linear(32, 5)
    own = model.state_dict()
    kept = {k: v for k, v in checkpoint.items() if k in own and v.shape == own[k].shape}
    model.load_state_dict(kept, strict=False)
    for p in model.body.parameters():
        p.requires_grad = False
    optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    x, y = data()
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    with watch(model) as w:
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        grads = {n: None if p.grad is None else p.grad.clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, model=model, before=before, grads=grads, kept=kept, checkpoint=checkpoint)


def truth(run):
    assert set(run.kept) == {k for k in run.checkpoint if k.startswith("body.")}
    for n, p in run.model.named_parameters():
        if n.startswith("body."):
            assert run.grads[n] is None and torch.equal(p.detach(), run.before[n]), n
            assert torch.equal(p.detach(), run.checkpoint[n]), n  # the pretrained values
        else:
            g = run.grads[n]
            assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
            assert not torch.equal(p.detach(), run.before[n]), n
