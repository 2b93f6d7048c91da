"""Fine-tuning a tiny GPT-2 (``GPT2LMHeadModel``) with labels the user shifted by hand:
``labels = input_ids[:, 1:]`` padded with -100 at the end.  The model shifts the labels again
inside its loss (logits at position t are scored against ``labels[t + 1]``), so every position is
trained to predict the token two places ahead, and the loss "cannot go down at all".

Source: https://discuss.huggingface.co/t/where-does-the-transformers-do-the-target-text-shifting-in-causal-lm/32408
("in the custom DataSet class I wrote ... I shifted the label manually by myself, and after
fine-tuning ... the loss value cannot go down at all").
"""

import torch
import torch.nn.functional as F
from case_r10_gpt2_freeze_all_but_tied_lm_head import batch, tiny_gpt2
from scenario_kit import FALSE_OK, Run

SOURCE = (
    "https://discuss.huggingface.co/t/"
    "where-does-the-transformers-do-the-target-text-shifting-in-causal-lm/32408"
)
DESCRIPTION = "GPT-2 labels shifted by hand, shifted again inside the model: predicts token t+2"
ASK = []
MUST = [[r"shift"]]
MUST_NOT = [FALSE_OK]


def step(watch, manual_shift: bool = True):
    model = tiny_gpt2(True)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    ids = batch()
    mask = torch.ones_like(ids)
    ids[0, 6:] = 0  # padding (pad = eos = 0) at the end of the first sequence
    mask[0, 6:] = 0
    if manual_shift:
        labels = torch.cat([ids[:, 1:], torch.full((ids.shape[0], 1), -100)], dim=1)
    else:
        labels = ids.clone()
    labels[mask == 0] = -100
    if manual_shift:
        labels[0, 5] = -100  # the label of the last real token was the pad after it
    with watch(model) as w:
        optimizer.zero_grad()
        out = model(input_ids=ids, attention_mask=mask, labels=labels)
        out.loss.backward()
        optimizer.step()
    return Run(w=w, ids=ids, labels=labels, logits=out.logits.detach(), loss=out.loss.item())


def _ce(logits, target):
    return F.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), target.reshape(-1), ignore_index=-100
    ).item()


def truth(run):
    # the model's loss scores the logits at t against the token at t + 2
    target = run.labels[:, 1:]
    assert abs(_ce(run.logits[:, :-1], target) - run.loss) < 1e-5
    real = target != -100
    assert bool(real.any())
    ahead2 = torch.cat([run.ids[:, 2:], torch.full((run.ids.shape[0], 1), -7)], dim=1)
    assert torch.equal(target[real], ahead2[real])
