"""The optimizer-step reader's two paths agree: :class:`StepMoves` compares what the last step
left from its stacked samples when the same parameters, in the same storage, are read again
(the usual training step), and parameter by parameter otherwise.  Over generated runs (one
optimizer or two sharing a layer, updates undone in place, storage replaced, parameters without
a ``.grad`` on some steps, steps with learning rate 0), a reader that always takes the
per-parameter path is fed the same steps, and every finding (unchanged, replaced, undone, the
counts per step) is the same after every step.
"""

from __future__ import annotations

import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st
from torch import nn

from gradarg.trace.watching.stepmoves import StepMoves


class EachParameter(StepMoves):
    """The reference: never the stacked path."""

    def before(self, optimizer, held, names):
        self._stacks.clear()
        super().before(optimizer, held, names)


ACTIONS = st.sampled_from(["step", "undo", "replace", "no grad", "lr 0", "half lr"])


def state(m: StepMoves):
    return (dict(m.unmoved), dict(m.swapped), dict(m.reverted), dict(m.last), dict(m.steps))


@settings(max_examples=40, deadline=None)
@given(actions=st.lists(st.tuples(ACTIONS, st.integers(0, 5), st.booleans()), min_size=1,
                        max_size=10),
       shared=st.booleans(), dtype=st.sampled_from([torch.float32, torch.bfloat16]),
       seed=st.integers(0, 99))
@example(actions=[("step", 0, False), ("undo", 2, True), ("step", 0, False)], shared=True,
         dtype=torch.float32, seed=0)  # the other optimizer stepped the shared layer between
def test_stacked_and_per_parameter_paths_agree(actions, shared, dtype, seed):
    torch.manual_seed(seed)
    net = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 6), nn.Tanh(),
                        nn.Linear(6, 2)).to(dtype)
    params = list(net.parameters())
    names = {p: (n,) for n, p in net.named_parameters()}
    if shared:  # two optimizers, the middle layer in both
        opts = [torch.optim.SGD(params[:4], lr=0.1), torch.optim.SGD(params[2:], lr=0.1)]
    else:
        opts = [torch.optim.SGD(params, lr=0.1)]
    fast, each = StepMoves(), EachParameter()
    x, y = torch.randn(8, 4, dtype=dtype), torch.randn(8, 2, dtype=dtype)
    for action, which, second in actions:
        opt = opts[second % len(opts)]
        for o in opts:
            o.zero_grad()
        nn.functional.mse_loss(net(x), y).backward()
        p = params[which]
        if action == "no grad":
            p.grad = None
        held = [q for g in opt.param_groups for q in g["params"]]
        for group in opt.param_groups:
            group["lr"] = {"lr 0": 0.0, "half lr": 0.05}.get(action, 0.1)
        before = [q.detach().clone() for q in params]
        fast.before(opt, held, names)
        each.before(opt, held, names)
        opt.step()
        fast.after(opt)
        each.after(opt)
        with torch.no_grad():
            if action == "undo":  # the update undone in place (a rounding back onto a grid)
                p.copy_(before[which])
            elif action == "replace":  # new storage, other values (weights loaded)
                p.data = torch.randn_like(p)
        assert state(fast) == state(each), action

