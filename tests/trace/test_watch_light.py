"""``watch(model, full_steps=k)``: the first k steps of a block and every step after one that
was off are recorded in full, the others light (module calls not recorded; every check of what
the optimizer reads still runs).  Each light step's summary must name the checks it skipped,
never claim them; the default is ``full_steps=3``, and ``None`` records every step in full."""

from __future__ import annotations

import pytest
import torch

import gradarg


class Log(torch.nn.Module):
    def forward(self, x):
        return torch.log(x)


def _net():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))


def _step(net, opt, x, *, step=True):
    opt.zero_grad(set_to_none=True)
    net(x).pow(2).mean().backward()
    if step:
        opt.step()


MODULE_CHECKS = ("cut from the graph", "outputs used", "vanishing/exploding", "dead units")


def _lists(summary: str) -> tuple[str, str]:
    """The ``checked`` and ``not checked`` lists at the end of a summary."""
    tail = summary[summary.rindex("[checked: "):]
    ran, _, skipped = tail.partition("; not checked: ")
    return ran, skipped


def test_with_full_steps_none_every_step_is_recorded_in_full():
    net = _net()
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    x = torch.randn(16, 4)
    with gradarg.watch(net, full_steps=None) as w:
        for _ in range(6):
            _step(net, opt, x)
    assert [c.name for c in w.layers()] == ["0", "1", "2"]
    ran, _ = _lists(w.summary())
    assert "light step" not in w.summary()
    for check in MODULE_CHECKS:
        assert check in ran


def test_by_default_the_first_three_steps_are_recorded_in_full_then_light():
    net = _net()
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    x = torch.randn(16, 4)
    full = []
    with gradarg.watch(net) as w:
        for _ in range(6):
            _step(net, opt, x)
            full.append(w.detail.full)
        assert [c.name for c in w.modules] == ["(model)"]  # step 6: light
        text = w.summary()
    assert full == [True, True, True, False, False, False]
    assert w.detail.full_steps == 3
    ran, skipped = _lists(text)
    for check in MODULE_CHECKS:
        assert check not in ran
        assert f"{check} (step 6 was a light step: module calls are recorded in full on " \
               f"steps 1-3" in skipped


@pytest.mark.parametrize(("bad", "error"), [("3", TypeError), (2.0, TypeError),
                                            (True, TypeError), (0, ValueError)])
def test_full_steps_is_checked(bad, error):
    with pytest.raises(error, match=r"full_steps must be None or an int >= 1, got"):
        gradarg.watch(_net(), full_steps=bad)


def test_light_steps_skip_the_module_record_and_their_summary_says_so():
    net = _net()
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    x = torch.randn(16, 4)
    with gradarg.watch(net, full_steps=2) as w:
        _step(net, opt, x)
        _step(net, opt, x)
        assert [c.name for c in w.layers()] == ["0", "1", "2"]  # step 2: in full
        for _ in range(3):
            _step(net, opt, x)
        assert [c.name for c in w.modules] == ["(model)"]  # step 5: light
        text = w.summary()
        assert w.table().endswith("\n(the modules inside the model not recorded: step 5 "
                                  "was a light step: module calls are recorded in full on "
                                  "steps 1-2 and after a step where something was off)")
        assert "nothing recorded yet" not in repr(w)
    assert text.startswith("gradients ok: every parameter got a finite, nonzero gradient (checked: "
                           "the .grad of the 4 parameter(s) the optimizer holds, read at 5 ")
    ran, skipped = _lists(text)
    for check in MODULE_CHECKS:
        assert check not in ran
        assert f"{check} (step 5 was a light step: module calls are recorded in full on " \
               f"steps 1-2" in skipped
    assert "what the optimizer read" in ran
    # said for what a light step looked at, not for the gradients inside the model
    assert "non-finite (the parameters' gradients and the model's output only)" in ran
    assert "all-zero (the parameters' gradients and the model's output only)" in ran


def test_a_grad_reset_before_the_optimizer_step_is_still_seen_on_a_light_step():
    net = _net()
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    x = torch.randn(16, 4)
    with gradarg.watch(net, full_steps=1) as w:
        for _ in range(3):
            _step(net, opt, x)
        opt.zero_grad(set_to_none=True)
        net(x).pow(2).mean().backward()
        net[2].weight.grad = None  # what the optimizer reads is not what backward left
        opt.step()
        assert not w.detail.full
    text = w.summary()
    assert not text.startswith("gradients ok")
    assert "2.weight" in text.split(" [checked: ")[0]


def test_a_nan_made_on_a_light_step_is_located_from_its_light_notes_then_on_the_next_full_step():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(4, 8), Log(), torch.nn.Linear(8, 1))
    with torch.no_grad():
        net[0].bias.fill_(10.0)  # log's input positive on ordinary data
    opt = torch.optim.SGD(net.parameters(), lr=1e-4)
    good = torch.randn(16, 4).clamp(-1, 1)
    bad = good.clone()
    bad[3] = -100.0  # one example drives layer 0's output negative: log makes NaN
    with torch.no_grad():  # the ground truth, by plain torch: finite into 'log', NaN out
        h = net[0](bad)
        assert torch.isfinite(bad).all() and torch.isfinite(h).all()
        assert torch.isnan(torch.log(h)).any()
    with gradarg.watch(net, full_steps=3) as w:
        for _ in range(6):
            _step(net, opt, good)
        assert not w.detail.full
        _step(net, opt, bad, step=False)  # step 7, light: the NaN is seen at the parameters
        assert not w.detail.full
        seen = w.summary()
        _step(net, opt, bad, step=False)  # step 8: recorded in full after step 7 was off
        assert w.detail.full and w.detail.step == 8
        located = w.summary()
        _step(net, opt, good)
        _step(net, opt, good)  # step 10: healthy after the full step 9: light again
        assert not w.detail.full
    head = seen.split(" [checked: ")[0]
    # a light step locates it from its light notes of the module calls (the ground truth
    # above: finite into 'log', NaN out), and says how, and what it did not record
    assert head.startswith("non-finite gradient: the forward pass already made NaN/Inf in "
                           "module '1' (Log), whose input is finite (checked) and whose output "
                           "is not")
    assert ": 4 parameter(s) got NaN/Inf" in head  # both Linears
    assert ("(located inside the model from the values and the graph of its module calls, as "
            "on a full step: step 7 was a light step") in head
    assert "the gradients inside the model were not recorded" in head
    assert "not located" not in head and "'(model)'" not in head
    # what was observed without the module record: the last layer's parameters get their
    # gradient first in backward (a NaN loss makes every gradient NaN), and the loss was NaN
    assert "observed: the first NaN/Inf gradient to reach a parameter reached 2." in head
    assert "(module '2'), and the loss passed to backward() was itself NaN/Inf" in head
    assert "the forward pass already made NaN/Inf in module '1' (Log), whose input is finite " \
           "(checked)" in located
    assert "light step" not in located


class Cut(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b, self.cut = torch.nn.Linear(4, 8), torch.nn.Linear(8, 1), False

    def forward(self, x):
        h = self.a(x)
        return self.b(torch.relu(h.detach() if self.cut else h))


def test_a_missing_gradient_on_a_light_step_is_not_explained_by_modules_it_did_not_record():
    torch.manual_seed(0)
    net = Cut()
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    x = torch.randn(16, 4)
    with gradarg.watch(net, full_steps=2) as w:
        for i in range(1, 6):
            net.cut = i == 5  # step 5 (light): 'a' is cut off by a .detach()
            _step(net, opt, x)
        assert not w.detail.full
        light = w.summary().split(" [checked: ")[0]
        why = w.why_no_grad("a.weight")
        _step(net, opt, x)  # step 6: in full after step 5 was off, and healthy again
        assert w.detail.full
    assert light.startswith("no gradient for 2 parameter(s): a.weight, a.bias (not located "
                            "inside the model: step 5 was a light step")
    # 'a' ran on step 5: the module record of a light step is empty, not evidence of absence
    assert "never called" not in why and "was not called" not in why
    assert why.startswith("a.weight got no gradient on step 5, a light step of the watch")


class Gains(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = torch.nn.Linear(4, 8), torch.nn.Linear(8, 1)
        self.gains = [torch.ones(8, requires_grad=True)]  # a plain list: never registered

    def forward(self, x):
        return self.b(torch.relu(self.a(x)) * self.gains[0])


def test_a_tensor_outside_the_parameters_is_still_named_when_the_last_step_is_light():
    torch.manual_seed(0)
    net = Gains()
    assert len(list(net.parameters())) == 4  # plain torch: the gains are not among them
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    x = torch.randn(16, 4)
    with gradarg.watch(net, full_steps=2) as w:
        for _ in range(5):
            _step(net, opt, x)
        assert not w.detail.full
    text = w.summary()
    assert not text.startswith("gradients ok")
    assert "'gains[0]' of module '(model)' (a Python list: use nn.ParameterList)" in text
    ran, _ = _lists(text)
    assert "unregistered tensors" in ran


class Sqrt(torch.nn.Module):
    def forward(self, x):
        return torch.sqrt(x)


def test_steps_stay_full_while_a_gradient_inside_the_model_is_not_finite():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), Sqrt(),
                              torch.nn.Linear(8, 1))
    with torch.no_grad():
        net[0].bias.fill_(5.0)
        net[0].weight[3].zero_()
        net[0].bias[3] = 0.0  # unit 3 is exactly 0 into the sqrt: its derivative is infinite
    x = torch.randn(16, 4)
    # the ground truth, by plain torch: Inf at the sqrt's input, finite parameter gradients
    h = torch.relu(net[0](x)).detach().requires_grad_()
    (g,) = torch.autograd.grad(net[3](torch.sqrt(h)).pow(2).mean(), h)
    assert torch.isinf(g[:, 3]).all()
    net.zero_grad()
    net(x).pow(2).mean().backward()
    assert all(torch.isfinite(p.grad).all() for p in net.parameters())
    opt = torch.optim.SGD(net.parameters(), lr=0.0)  # the same step each time
    with gradarg.watch(net, full_steps=2) as w:
        for _ in range(5):
            _step(net, opt, x)
            assert w.detail.full  # off at every step, inside the model: never light
        text = w.summary()
    assert text.startswith("non-finite gradient first sent by '2' (Sqrt)")
    assert "light step" not in text
