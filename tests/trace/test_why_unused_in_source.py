"""why_no_grad on a path cut before the output's graph: what the model's code shows, and where
the cut is placed.

Invariant 1, over generated model classes (written to a file, imported, so that their source can
be read as a user's can): the answer says "it is not called in forward" only for a submodule that
no method but ``__init__`` names and that none reaches another way (a loop over ``children()``,
``getattr`` with its name, ``self`` handed to a helper); for those it does, the answer keeps the
hedged list.  The truth of each is established by torch: which submodules' weights get a
gradient from ``backward()``.

Invariant 2: a loss function's target and class weights (saved by its node as ``_saved_target``,
``_saved_weight``, ``_saved_pos_weight``) are never named as where a value without history
joins the graph (a GAN's discriminator step named the BCE node's labels as the cut).
"""

from __future__ import annotations

import importlib.util
import itertools
import sys

import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gradarg import why_no_grad

ROUTES = {  # how forward uses a submodule called NAME: code, whether it names it
    "called": ("        h = h + self.NAME(h)\n", True),
    "called-detached": ("        h = h + self.NAME(h).detach()\n", True),
    "by-getattr": ("        h = h + getattr(self, 'NAME')(h)\n", False),
    "helper": ("        h = h + _helper(self, 'NAME', h)\n", False),
    "unused": ("", False),
}
_counter = itertools.count()


def _build(tmp_path, routes):
    names = [f"m{i}" for i in range(len(routes))]
    src = ["import torch", "", "def _helper(model, name, h):",
           "    return getattr(model, name)(h)", "", "class Net(torch.nn.Module):",
           "    def __init__(self):", "        super().__init__()",
           "        self.first = torch.nn.Linear(3, 3)"]
    src += [f"        self.{n} = torch.nn.Linear(3, 3)" for n in names]
    src += ["", "    def forward(self, x):", "        h = self.first(x)"]
    body = "".join(ROUTES[r][0].replace("NAME", n) for n, r in zip(names, routes, strict=True))
    src = "\n".join(src) + "\n" + body + "        return h\n"
    path = tmp_path / f"generated_net_{next(_counter)}.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module.Net(), names


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=40)
@given(routes=st.lists(st.sampled_from(sorted(ROUTES)), min_size=1, max_size=4))
def test_never_calls_only_for_a_submodule_no_method_reaches(tmp_path, routes):
    net, names = _build(tmp_path, routes)
    x = torch.randn(2, 3)
    loss = net(x).pow(2).sum()
    reached = dict(zip(names, torch.autograd.grad(loss, [getattr(net, n).weight for n in names],
                                                  retain_graph=True, allow_unused=True),
                       strict=True))
    uses_self = any(not ROUTES[r][1] and r != "unused" for r in routes)
    for name, route in zip(names, routes, strict=True):
        d = why_no_grad(loss, getattr(net, name).weight, module=net)
        says_never = "it is not called in forward" in d.message
        if reached[name] is not None:
            assert not says_never, d.message
            continue
        assert d.case == "unused-parameter", d.message  # truth: no gradient, by torch
        # claimed only when nothing names it and no method may reach it indirectly
        assert says_never == (route == "unused" and not uses_self), (route, routes, d.message)
        if says_never:
            assert "Net other than __init__" in d.message and ".py:" in d.message


def test_no_claim_without_source():
    """A class defined where its source cannot be read (exec of a string) gets no claim."""
    scope: dict = {}
    exec("import torch\nclass Net(torch.nn.Module):\n    def __init__(self):\n"  # noqa: S102
         "        super().__init__()\n        self.a = torch.nn.Linear(2, 2)\n"
         "        self.b = torch.nn.Linear(2, 2)\n    def forward(self, x):\n"
         "        return self.a(x)\n", scope)
    net = scope["Net"]()
    loss = net(torch.randn(1, 2)).sum()
    d = why_no_grad(loss, net.b.weight, module=net)
    assert d.case == "unused-parameter"
    assert "not called in forward" not in d.message


LOSSES = {  # losses whose node saves the target (and class weights) as named attributes
    "bce": lambda p, t: torch.nn.functional.binary_cross_entropy(p.sigmoid(), t),
    "bce-logits": torch.nn.functional.binary_cross_entropy_with_logits,
    "bce-pos-weight": lambda p, t: torch.nn.functional.binary_cross_entropy_with_logits(
        p, t, pos_weight=torch.full((p.shape[1],), 2.0)),
    "mse": torch.nn.functional.mse_loss,
    "smooth-l1": torch.nn.functional.smooth_l1_loss,
    "huber": torch.nn.functional.huber_loss,
}


@given(loss=st.sampled_from(sorted(LOSSES)), batch=st.integers(2, 6),
       width=st.integers(1, 4))
def test_a_loss_target_is_not_where_the_cut_is_placed(loss, batch, width):
    """A discriminator step on a detached generator output: the cut value enters at the
    discriminator's first layer; the loss's target (labels, class weights) is constant by
    design and is never named as where a value without history joins."""
    torch.manual_seed(batch * 7 + width)
    gen, disc = torch.nn.Linear(3, width), torch.nn.Linear(width, width)
    fake = gen(torch.randn(batch, 3))
    out = LOSSES[loss](disc(fake.detach()), torch.ones(batch, width))
    assert torch.autograd.grad(out, gen.weight, allow_unused=True,
                               retain_graph=True)[0] is None  # truth, by torch
    d = why_no_grad(out, gen.weight, names={"gen.weight": gen.weight,
                                            "disc.weight": disc.weight})
    assert d.case == "not-reachable", d.message
    node = out.grad_fn.name()
    assert node not in d.message, d.message  # the loss node is not where the cut joins
    assert f"AddmmBackward0 ({batch}, {width})" in d.message, d.message
