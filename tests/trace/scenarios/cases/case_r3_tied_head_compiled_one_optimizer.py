"""Control: the nanoGPT way of tying (wte.weight = lm_head.weight, one Parameter), the model
compiled with torch.compile (backend "eager"), one AdamW over model.parameters(): the shared
weight's .grad is the sum of its two uses and it is stepped once.

Source: https://github.com/karpathy/build-nanogpt/issues/89 ("Why does weights sharing have to
be in that direction?": "self.transformer.wte.weight = self.lm_head.weight  # why the other way
is not working?"; a reply: "I tried weight sharing in both ways but they all seem to work out
the same"); build-nanogpt compiles its model with torch.compile.
"""

import torch
from case_r3_tied_head_two_optimizers import (
    LR,
    TiedLM,
    batch,
    lm_loss,
    moved_in_lr_units,
    reference_grad,
)
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run

SOURCE = "https://github.com/karpathy/build-nanogpt/issues/89"
DESCRIPTION = "control: nanoGPT tying, torch.compile(backend='eager'), one AdamW; stepped once"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_NO_ZERO_GRAD,
    r"(two|2|both) optimizers",
    r"\btwice\b",
    r"never called",
    r"no gradient",
    r"replaced after",
    r"not (held )?in (the|any) optimizer",
]


def step(watch):
    torch.manual_seed(0)
    model = TiedLM(head_owns_weight=True)
    compiled = torch.compile(model, backend="eager")
    idx, y = batch()
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.0)
    before = model.wte.weight.detach().clone()
    with watch(compiled) as w:
        opt.zero_grad()
        loss = lm_loss(compiled(idx), y)
        loss.backward()
        grad = model.wte.weight.grad.clone()
        opt.step()
    return Run(w=w, model=model, before=before, grad=grad, idx=idx, y=y, head_owns_weight=True)


def truth(run):
    assert run.model.lm_head.weight is run.model.wte.weight
    assert [n for n, _ in run.model.named_parameters()] == [
        "wte.weight",
        "block.weight",
        "block.bias",
    ]
    expected = reference_grad(run.head_owns_weight, run.idx, run.y)
    assert torch.allclose(run.grad, expected, rtol=1e-4, atol=1e-7)
    assert torch.allclose(moved_in_lr_units(run), torch.tensor(1.0), atol=1e-2)  # one step
