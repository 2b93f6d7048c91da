"""``layer.requires_grad = False`` freezes nothing: ``nn.Module`` has no such switch, the
assignment stores a plain attribute and every parameter keeps ``requires_grad=True`` (a blind
grader: a layer "frozen" that way got a healthy gradient and the answer never said why the
freeze did not take).  With ``module=``, ``why_no_grad`` says so whenever a module holding the
asked parameter carries such an attribute that disagrees with the parameter, and names that
module; it says nothing of the kind otherwise.

Property over generated models (2-4 linear layers), per layer: nothing, the stray attribute
(False, or True on a layer really frozen with ``requires_grad_(False)``), or the real call;
sometimes the stray attribute on the whole model; asked before or after ``backward()``.  The
truth is torch's own: the parameter's ``requires_grad`` and the attributes in ``vars()``.
"""

from __future__ import annotations

import warnings

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from gradarg import why_no_grad

KINDS = ["none", "stray-false", "stray-true-on-frozen", "real-freeze"]


@settings(max_examples=40, deadline=None)
@given(kinds=st.lists(st.sampled_from(KINDS), min_size=2, max_size=4),
       on_model=st.booleans(), after=st.booleans(), ask=st.integers(0, 7),
       seed=st.integers(0, 2**16))
def test_a_stray_requires_grad_attribute_is_named_exactly_when_it_disagrees(
        kinds, on_model, after, ask, seed):
    torch.manual_seed(seed)
    layers = [nn.Linear(3, 3) for _ in kinds]
    net = nn.Sequential(*layers)
    for layer, kind in zip(layers, kinds, strict=True):
        if kind == "stray-false":
            layer.requires_grad = False
        elif kind == "stray-true-on-frozen":
            layer.requires_grad_(False)
            layer.requires_grad = True
        elif kind == "real-freeze":
            layer.requires_grad_(False)
    if on_model:
        net.requires_grad = False
    x = torch.randn(5, 3, requires_grad=True)
    out = net(x).pow(2).sum()
    if after:
        out.backward()
    names = dict(net.named_parameters())
    name = sorted(names)[ask % len(names)]
    p = names[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        d = why_no_grad(out, p, names=names, module=net)
        plain = why_no_grad(out, p, names=names)
    # the truth: the outermost module holding p whose stray attribute disagrees with p
    layer_name = name.split(".")[0]
    holders = [("model", net), (layer_name, net.get_submodule(layer_name))]
    stray = [(label, vars(m)["requires_grad"]) for label, m in holders
             if isinstance(vars(m).get("requires_grad"), bool)
             and vars(m)["requires_grad"] != p.requires_grad]
    said = "only stores an attribute" in d.message
    assert said == bool(stray), (kinds, on_model, name, d.message)
    if stray:
        label, flag = stray[0]
        assert f"{label}.requires_grad = {flag} was set on the module" in d.message
        assert f"requires_grad={p.requires_grad}" in d.message
    assert "only stores an attribute" not in plain.message  # no module, nothing to read
