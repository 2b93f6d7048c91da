"""The optimizer-step sample reads what the step left, whatever the step did with the storage.

``watch`` samples each parameter before and after every optimizer step, and works out which
parameters it samples, and how their samples stack, again only when the parameters or their
storages change (``stepmoves._Plan``).  A step that replaces a parameter's storage
(``p.data = p.data - lr * g``, an optimizer written out of place) must be read from the
parameter as the step left it, or every such step would look like it changed nothing.

Property over generated models, dtypes, optimizers in place and out of place (all parameters,
or every other one), learning rates and numbers of steps in one block.  The truth comes from
torch alone, over every entry whose ``.grad`` is finite and not negligible: a learning rate of
0 leaves every parameter unchanged (each is named by the watch as unmoved), 0.1 changes every
such entry (none is named), and parameters that only the optimizer touched are never said to
have been swapped between steps.
"""

from __future__ import annotations

import itertools

import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg


class OutOfPlaceSGD(torch.optim.Optimizer):
    """Plain SGD that assigns a new tensor to ``p.data`` (a new storage each step) for every
    parameter, or for every other one."""

    def __init__(self, params, lr: float, every: int = 1):
        super().__init__(params, {"lr": lr})
        self.every = every

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for i, p in enumerate(group["params"]):
                if p.grad is None:
                    continue
                if i % self.every == 0:
                    p.data = p.data - group["lr"] * p.grad
                else:
                    p.add_(p.grad, alpha=-group["lr"])


setups = st.fixed_dictionaries({
    "widths": st.lists(st.integers(8, 64), min_size=2, max_size=4),
    "dtype": st.sampled_from([torch.float32, torch.float64]),
    "optimizer": st.sampled_from(["sgd", "out-of-place", "half-out-of-place"]),
    "lr": st.sampled_from([0.0, 0.1]),
    "steps": st.integers(1, 4),
    "seed": st.integers(0, 2**16),
})


def _optimizer(kind: str, params, lr: float):
    if kind == "sgd":
        return torch.optim.SGD(params, lr=lr)
    return OutOfPlaceSGD(params, lr, every=1 if kind == "out-of-place" else 2)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(setups)
def test_the_sample_after_a_step_reads_the_parameter_the_step_left(setup):
    torch.manual_seed(setup["seed"])
    widths = setup["widths"]
    layers: list[nn.Module] = []
    for a, b in itertools.pairwise(widths):
        layers += [nn.Linear(a, b), nn.Tanh()]
    model = nn.Sequential(*layers[:-1]).to(setup["dtype"])
    opt = _optimizer(setup["optimizer"], model.parameters(), setup["lr"])
    x = torch.randn(16, widths[0], dtype=setup["dtype"])
    names = dict(model.named_parameters())
    with gradarg.watch(model) as w:
        for _ in range(setup["steps"]):
            opt.zero_grad()
            model(x).pow(2).mean().backward()
            before = {k: p.detach().clone() for k, p in model.named_parameters()}
            grads = {k: p.grad.detach().clone() for k, p in model.named_parameters()}
            opt.step()
            # the truth: which parameters the step changed, over the entries it reads
            unchanged, changed = set(), set()
            for k, p in model.named_parameters():
                g = grads[k].abs()
                read = torch.isfinite(g) & (g > 1e-6 * float(g.max()))
                if not bool(read.any()):
                    continue
                same = (p.detach() == before[k])[read]
                if bool(same.all()):
                    unchanged.add(k)
                elif not bool(same.any()):
                    changed.add(k)
            named = set(w.grads.unmoved)
            assert unchanged <= named, (setup, unchanged - named)
            assert not (changed & named), (setup, changed & named)
            assert not w.grads.moves.swapped, (setup, w.grads.moves.swapped)
    assert set(names) == set(dict(model.named_parameters()))
    if setup["lr"] == 0.0:
        assert unchanged  # the lr-0 step was seen to leave parameters as they were
    else:
        assert changed
