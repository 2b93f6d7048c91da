"""Class: "ok" never for a training step run with the model in eval mode: a block whose every
call of the model ran with ``model.training`` False, with dropout or batch normalization in
it, and an optimizer step after the backward, is said, and only then.

The truth comes from torch alone: a forward pre-hook of the test reads ``training`` of the
model and of its dropout / batch-normalization modules at each call.  Generated: the layers
(with or without dropout and batch normalization), the mode at each call (a validation call
in eval mode before the training call, or the training call in either mode), whether the
optimizer steps, and a model that puts only its batch normalization in eval mode (frozen
statistics while fine-tuning: the model itself in training mode).
"""

from __future__ import annotations

import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg

SAID = "the model was in eval mode"
DEPENDENT = (nn.Dropout, nn.BatchNorm1d)


@settings(max_examples=40, deadline=None)
@given(dropout=st.booleans(), batchnorm=st.booleans(), validate_first=st.booleans(),
       train_mode=st.sampled_from(["train", "eval", "eval batchnorm only"]),
       step=st.booleans(), seed=st.integers(0, 2**16))
def test_eval_mode_is_said_exactly_when_every_call_trained_in_it(
        dropout, batchnorm, validate_first, train_mode, step, seed):
    torch.manual_seed(seed)
    layers = [nn.Linear(4, 6)]
    layers += [nn.BatchNorm1d(6)] if batchnorm else []
    layers += [nn.ReLU()] + ([nn.Dropout(0.3)] if dropout else []) + [nn.Linear(6, 1)]
    model = nn.Sequential(*layers)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    x, y = torch.randn(8, 4), torch.randn(8, 1)
    seen: list[tuple[bool, bool]] = []  # per call: model.training, a dependent module in eval

    def pre(module, args):
        seen.append((module.training, any(not m.training for m in module.modules()
                                          if isinstance(m, DEPENDENT))))

    handle = model.register_forward_pre_hook(pre)
    try:
        with gradarg.watch(model) as w:
            if validate_first:
                model.eval()
                with torch.no_grad():
                    model(x)
            model.train(train_mode == "train")
            if train_mode == "eval batchnorm only":
                model.train()
                for m in model.modules():
                    if isinstance(m, nn.BatchNorm1d):
                        m.eval()
            opt.zero_grad()
            ((model(x) - y) ** 2).mean().backward()
            if step:
                opt.step()
    finally:
        handle.remove()
    truth = step and all(not training and dependent for training, dependent in seen)
    text = w.summary(checks=False)
    assert (SAID in text) == truth, (seen, text)
    if truth:
        assert not text.startswith("gradients ok")


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.sampled_from([1, 4]))
@example(seed=1073, batch=1)  # every unit of the ReLU off on the one example
def test_eval_mode_on_batches_of_one_is_a_note(seed, batch):
    """Batch normalization raises in training mode on one example per channel (torch's own
    check, run here), so eval mode on batches of one is a note after "ok", and a problem on
    larger batches."""
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6), nn.ReLU(), nn.Linear(6, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    x, y = torch.randn(batch, 4), torch.randn(batch, 1)
    try:
        model.train()
        model(x)
        trains = True
    except ValueError as error:
        trains = "Expected more than 1 value per channel" not in str(error)
    assert trains == (batch > 1)
    model.eval()
    with gradarg.watch(model) as w:
        opt.zero_grad()
        ((model(x) - y) ** 2).mean().backward()
        opt.step()
    text = w.summary(checks=False)
    assert "eval mode" in text
    # the truth, from torch: on one example every ReLU unit can be off (1 in 64), and then the
    # layers below get all-zero gradients, which is said instead of "ok"
    zero = any(not bool(p.grad.any()) for p in model.parameters())
    assert text.startswith("gradients ok") == (batch == 1 and not zero), text
