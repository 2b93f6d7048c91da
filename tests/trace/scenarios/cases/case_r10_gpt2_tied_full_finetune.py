"""Control: the tiny GPT-2 with its LM head tied to the token embedding, fine-tuned whole with one
AdamW over ``model.parameters()``.  The shared tensor is used twice in the forward (lookup and
output projection) and its ``.grad`` is the sum of both uses after one backward; the optimizer
holds it once and steps it once.  The thread asks whether fine-tuning the head means fine-tuning
``wte``: it does, and nothing is wrong.

Source: https://discuss.huggingface.co/t/why-is-the-lm-head-layer-in-gpt2lmheadmodel-not-a-parameter/639
("Does that mean if I want to fine-tune the lm_head layer, I would need to fine-tune the
embedding layer (wte)?").
"""

import torch
from case_r10_gpt2_freeze_all_but_tied_lm_head import batch, tiny_gpt2
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run

SOURCE = (
    "https://discuss.huggingface.co/t/"
    "why-is-the-lm-head-layer-in-gpt2lmheadmodel-not-a-parameter/639"
)
DESCRIPTION = "control: tied GPT-2 fine-tuned whole, one AdamW: wte's grad sums both uses, one step"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_NO_ZERO_GRAD,
    r"two optimizers|updated twice|stepped twice",
    r"sum of \d+ backward",
    r"no gradient for",
]


def step(watch):
    model = tiny_gpt2(True)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    ids = batch()
    wte0 = model.transformer.wte.weight.detach().clone()
    with watch(model) as w:
        optimizer.zero_grad()
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        optimizer.step()
    return Run(w=w, model=model, wte0=wte0, optimizer=optimizer)


def truth(run):
    m = run.model
    assert m.lm_head.weight is m.transformer.wte.weight
    assert all(p.grad is not None for p in m.parameters())
    held = [p for g in run.optimizer.param_groups for p in g["params"]]
    assert sum(p is m.transformer.wte.weight for p in held) == 1
    assert not torch.equal(m.transformer.wte.weight.detach(), run.wte0)
