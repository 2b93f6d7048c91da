"""gradarg.watch records the user's own step; every figure is checked against torch directly.

Expected norms come from ``.grad`` after a plain step, from ``torch.autograd.grad`` of the loss
with respect to a module's output, or from the forward activations themselves (dead units).
"""

from __future__ import annotations

import gc
import itertools
import math
import types

import pytest
import torch

import gradarg
from gradarg.trace.draw.modules import module_layout

nn = torch.nn


def live_hook_closures() -> int:
    gc.collect()
    # plain functions only: getattr on arbitrary objects can run code (torch 2.1's fx proxies
    # left over from a compiled test call into dynamo)
    return sum(1 for o in gc.get_objects()
               if type(o) is types.FunctionType
               and o.__qualname__.startswith(("GradWatch.", "Recorder.", "GradEvents.", "GraphNotes."))
               and "<locals>" in o.__qualname__)


def mlp(act=nn.ReLU, layers=3, width=8):
    mods = []
    for i in range(layers):
        mods.append(nn.Linear(width, width))
        if i < layers - 1:
            mods.append(act())
    return nn.Sequential(*mods)


def test_norms_match_grad_and_autograd_grad():
    torch.manual_seed(0)
    net = mlp()
    x = torch.randn(5, 8)
    with gradarg.watch(net) as w:
        hidden = net[:4](x)
        hidden.retain_grad()
        loss = net[4](hidden).pow(2).sum()
        loss.backward()
    for name, p in net.named_parameters():
        assert w.parameters[name].grad == pytest.approx(p.grad.norm().item(), rel=1e-6)
    # the gradient arriving at net[3] (a ReLU) is d loss / d hidden
    rec = next(c for c in w.modules if c.name == "3")
    assert rec.grad_out == pytest.approx(hidden.grad.norm().item(), rel=1e-6)
    # and net[4]'s input gradient is the same tensor's
    last = next(c for c in w.modules if c.name == "4")
    assert last.grad_in == pytest.approx(hidden.grad.norm().item(), rel=1e-6)
    assert [r["module"] for r in w.rows()] == ["0", "1", "2", "3", "4"]


def test_no_hook_left_behind_and_later_passes_not_recorded():
    torch.manual_seed(0)
    net = mlp()
    with gradarg.watch(net) as w:
        loss = net(torch.randn(4, 8)).sum()
        loss.backward(retain_graph=True)
        assert live_hook_closures() > 0
    before = w.parameters["0.weight"].grad
    assert live_hook_closures() == 0  # the graph (still alive through loss) holds none
    for m in net.modules():
        assert not m._forward_hooks and not m._forward_pre_hooks
    for p in net.parameters():
        assert not p._backward_hooks
    loss.backward()  # a second pass after the block: the record does not change
    assert w.parameters["0.weight"].grad == before
    w.remove()  # twice is harmless


def test_remove_without_with_block():
    net = mlp()
    w = gradarg.watch(net)
    net(torch.randn(2, 8)).sum().backward()
    w.remove()
    assert live_hook_closures() == 0
    assert all(r.state == "ok" for r in w.parameters.values())


def test_unused_parameter_named_with_its_module():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Linear(3, 3)
            self.aux_head = nn.Linear(3, 1)  # defined, never called

        def forward(self, x):
            return self.body(x)

    net = Net()
    with gradarg.watch(net) as w:
        net(torch.randn(2, 3)).sum().backward()
    assert net.aux_head.weight.grad is None  # what the user sees
    text = w.why_no_grad("aux_head.weight")
    assert "aux_head" in text and "never called" in text
    assert "NaN" not in text and "zero" not in text
    assert w.why_no_grad(net.aux_head.bias).startswith("no gradient reached aux_head.bias")
    assert "no gradient for 2 parameter(s)" in w.summary()
    assert "no grad" not in " ".join(r["flags"] for r in w.rows())  # aux_head has no row


def test_parameter_of_a_module_that_ran_but_was_cut():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Linear(3, 3), nn.Linear(3, 1)

        def forward(self, x):
            return self.b(self.a(x).detach())

    net = Net()
    with gradarg.watch(net) as w:
        net(torch.randn(2, 3)).sum().backward()
    text = w.why_no_grad("a.weight")
    # a's output had history and got no gradient: the record shows it
    assert "module 'a' (Linear) ran" in text and "no gradient reached that output" in text
    # and b took it without history: the detach between them is observed (issue 43)
    assert "module 'b' (Linear) took that output without its history" in text
    assert "detached between them" in text
    assert "never called" not in text and "cannot tell" not in text


def test_frozen_parameter():
    net = mlp(layers=2)
    net[0].weight.requires_grad_(False)
    with gradarg.watch(net) as w:
        net(torch.randn(2, 8)).sum().backward()
    assert "requires_grad=False" in w.why_no_grad("0.weight")
    assert "no gradient" not in w.summary()  # frozen on purpose is not a problem


def test_forgotten_zero_grad_is_seen_and_zero_grad_is_not_blamed():
    torch.manual_seed(0)
    net = mlp(layers=2)
    x = torch.randn(4, 8)
    copy = __import__("copy").deepcopy(net)
    copy(x).sum().backward()
    first = copy[0].weight.grad.norm().item()  # the first pass's gradient, independently
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    with gradarg.watch(net) as w:
        for _ in range(2):  # no zero_grad
            net(x).sum().backward()
            opt.step()
    assert w.parameters["0.weight"].held_before == pytest.approx(first, rel=1e-5)
    assert "already held" in w.why_no_grad("0.weight")
    assert "zero_grad() is missing" in w.summary()  # an optimizer step ran in between
    assert "micro-batches" not in w.summary()
    with gradarg.watch(net) as w:
        for _ in range(2):
            opt.zero_grad()
            net(x).sum().backward()
    assert w.parameters["0.weight"].held_before is None
    assert "already held" not in w.why_no_grad("0.weight")


def test_zero_grad_set_to_none_false_is_not_an_accumulation():
    net = mlp(layers=2)
    with gradarg.watch(net) as w:
        net(torch.randn(2, 8)).sum().backward()
        net.zero_grad(set_to_none=False)
        net(torch.randn(2, 8)).sum().backward()
    assert w.parameters["0.weight"].held_before == 0.0
    assert "already held" not in w.why_no_grad("0.weight")


class SqrtLayer(nn.Module):
    def forward(self, x):
        return torch.sqrt(x)


def test_first_nonfinite_module():
    net = nn.Sequential(nn.Linear(2, 2), nn.Tanh(), SqrtLayer(), nn.Linear(2, 1))
    with torch.no_grad():
        net[0].weight.zero_()
        net[0].bias.zero_()
    with gradarg.watch(net) as w:
        net(torch.tensor([[1.0, 0.0]])).sum().backward()  # sqrt(0) sends inf
    assert not torch.isfinite(net[0].weight.grad).all()  # the symptom
    first = w.first_nonfinite()
    assert first is not None and first.name == "2" and first.kind == "SqrtLayer"
    assert w.summary().startswith("non-finite gradient first sent by '2' (SqrtLayer)")
    assert "NaN or Inf" in w.why_no_grad("0.weight")
    assert any("NaN/Inf" in r["flags"] for r in w.rows())


def test_dead_units_counted_from_the_activations():
    torch.manual_seed(0)
    net = mlp(layers=2)
    with torch.no_grad():
        net[0].bias[:6] = -100.0  # six units never fire
    x = torch.randn(16, 8)
    with gradarg.watch(net) as w:
        net(x).sum().backward()
    dead = int((net[1](net[0](x)) == 0).all(dim=0).sum())
    assert dead >= 6
    rec = next(c for c in w.modules if c.name == "1")
    assert rec.dead_units == (dead, 8)
    assert "dead units: '1' (ReLU)" in w.summary()


def test_all_zero_gradient_from_dead_relu():
    net = mlp(layers=2)
    with torch.no_grad():
        net[0].bias.fill_(-100.0)
    with gradarg.watch(net) as w:
        net(torch.randn(4, 8)).sum().backward()
    assert net[0].weight.grad.abs().max() == 0
    text = w.why_no_grad("0.weight")
    assert "exactly zero" in text and "8 of 8 units" in text
    assert w.first_zero().name == "1"
    assert "first became all zero at '1' (ReLU)" in w.summary()


def test_tiny_gradients_are_not_called_zero():
    net = nn.Sequential(nn.Linear(2, 2))
    with gradarg.watch(net) as w:
        (net(torch.ones(1, 2)) * 1e-30).sum().backward()
    assert 0 < w.parameters["0.weight"].grad < 1e-28  # float32 squares underflow; not ours
    assert w.parameters["0.weight"].state == "ok"


def test_vanishing_and_healthy():
    torch.manual_seed(0)
    deep = mlp(act=nn.Sigmoid, layers=12, width=16)
    with gradarg.watch(deep) as w:
        nn.functional.cross_entropy(deep(torch.randn(32, 16)),
                                    torch.randint(0, 16, (32,))).backward()
    flow = [c for c in w.layers() if c.params]
    assert flow[0].grad_out / flow[-1].grad_out < 1e-3  # independent of the wording below
    assert w.summary().startswith("vanishing gradient")
    assert "most of it" not in w.summary()  # a gradual shrinking: no single module to blame
    torch.manual_seed(0)
    good = mlp(act=nn.ReLU, layers=3, width=16)
    with gradarg.watch(good) as w:
        nn.functional.cross_entropy(good(torch.randn(32, 16)),
                                    torch.randint(0, 16, (32,))).backward()
    assert w.summary().startswith("gradients ok")


def test_exploding():
    torch.manual_seed(0)
    net = mlp(act=nn.Identity, layers=8, width=16)
    with torch.no_grad():
        for m in net:
            if isinstance(m, nn.Linear):
                m.weight.mul_(10)
    with gradarg.watch(net) as w:
        net(torch.randn(4, 16)).pow(2).mean().backward()
    assert w.summary().startswith("exploding gradient")
    assert "most of it" not in w.summary()


def test_a_drop_inside_one_module_is_named():
    # mean(y**2) of a fresh layer norm's output is 1 whatever its input (up to eps): the gradient
    # dies inside the norm, not along the depth
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(),
                        nn.Linear(16, 16), nn.LayerNorm(16))
    x = torch.randn(8, 16)
    with gradarg.watch(net) as w:
        net(x).pow(2).mean().backward()
    # independently: the gradient at the norm's input against the one at its output
    h = net[:5](x).detach().requires_grad_()
    y = net[5](h)
    g_out, = torch.autograd.grad(y.pow(2).mean(), y, retain_graph=True)
    g_in, = torch.autograd.grad(y.pow(2).mean(), h)
    assert g_in.norm() < 1e-3 * g_out.norm()
    summary = w.summary()
    assert summary.startswith("vanishing gradient")
    assert "most of it across '5' (LayerNorm" in summary


class _Scale(nn.Module):
    def __init__(self, s):
        super().__init__()
        self.s = s

    def forward(self, x):
        return x * self.s


def test_a_module_outside_the_measured_layers_is_not_named():
    # the ratio runs from the last Linear's output to the first Linear's output; a scaling
    # after the last Linear shrinks the gradient by 8 orders but is not part of that ratio
    torch.manual_seed(0)
    net = mlp(act=nn.Sigmoid, layers=12, width=16)
    net.append(_Scale(1e-8))
    with gradarg.watch(net) as w:
        net(torch.randn(32, 16)).sum().backward()
    scale = next(c for c in w.layers() if c.kind == "_Scale")
    assert scale.grad_in / scale.grad_out < 1e-7  # the drop is there, in the record
    summary = w.summary()
    assert summary.startswith("vanishing gradient")
    assert "most of it" not in summary


def test_sparse_embedding():
    class Bag(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(20, 4, sparse=True)
            self.out = nn.Linear(4, 1)

        def forward(self, i):
            return self.out(self.emb(i).mean(1))

    torch.manual_seed(0)
    m = Bag()
    with gradarg.watch(m) as w:
        m(torch.tensor([[1, 2, 2], [3, 1, 5]])).sum().backward()
    assert m.emb.weight.grad.is_sparse
    rec = w.parameters["emb.weight"]
    assert rec.sparse
    assert rec.grad == pytest.approx(m.emb.weight.grad.to_dense().norm().item(), rel=1e-6)
    assert w.summary().startswith("gradients ok")
    gradarg.draw_modules(w)


@pytest.mark.parametrize("kind", ["lstm", "transformer", "cnn"])
def test_real_models_match_grad(kind):
    torch.manual_seed(0)
    if kind == "lstm":
        net, x = nn.LSTM(3, 4, num_layers=2, batch_first=True), torch.randn(2, 5, 3)
        loss_fn = lambda: net(x)[0].pow(2).sum()
    elif kind == "transformer":
        layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
        net = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        x = torch.randn(2, 3, 8)
        loss_fn = lambda: net(x).pow(3).mean()
    else:
        net = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                            nn.Linear(2 * 3 * 3, 3))
        x = torch.randn(2, 1, 8, 8)
        loss_fn = lambda: net(x).pow(2).sum()
    with gradarg.watch(net) as w:
        loss_fn().backward()
    for name, p in net.named_parameters():
        assert w.parameters[name].grad == pytest.approx(p.grad.norm().item(), rel=1e-5), name
    assert w.summary().startswith("gradients ok")
    assert live_hook_closures() == 0
    if kind == "transformer":
        # MultiheadAttention uses out_proj's weights without calling out_proj: not "unused"
        assert not w.parameters["layers.0.self_attn.out_proj.weight"].module_ran
        assert w.parameters["layers.0.self_attn.out_proj.weight"].state == "ok"


def test_reentrant_checkpoint_recomputation_is_recorded():
    from torch.utils.checkpoint import checkpoint

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Sequential(nn.Linear(4, 4), nn.Tanh()), nn.Linear(4, 1)

        def forward(self, x):
            return self.b(checkpoint(self.a, x, use_reentrant=True))

    torch.manual_seed(0)
    net = Net()
    with gradarg.watch(net) as w:
        net(torch.randn(3, 4, requires_grad=True)).sum().backward()
    for name, p in net.named_parameters():
        assert w.parameters[name].grad == pytest.approx(p.grad.norm().item(), rel=1e-6)
    calls = [c.name for c in w.modules]
    assert calls.count("a.0") == 2  # the forward, and the recomputation during backward
    assert w.summary().startswith("gradients ok")


def test_new_forward_after_backward_starts_a_new_record():
    net = mlp(layers=2)
    with gradarg.watch(net) as w:
        net(torch.randn(2, 8)).sum().backward()
        n1 = len(w.modules)
        net(torch.randn(2, 8)).sum().backward()
    assert len(w.modules) == n1 == 4


def test_plot_marks_zero_and_uses_log_scale():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    net = mlp(layers=2)
    with torch.no_grad():
        net[0].bias.fill_(-100.0)
    with gradarg.watch(net) as w:
        net(torch.randn(4, 8)).sum().backward()
    fig = w.plot()
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == ["0", "1", "2"]
    assert "zero" in [h.get_label() for h in ax.get_legend().legend_handles]
    plt.close(fig)


def test_bad_input():
    with pytest.raises(TypeError, match=r"torch\.nn\.Module"):
        gradarg.watch(lambda x: x)
    net = mlp(layers=1)
    with gradarg.watch(net) as w:
        net(torch.randn(1, 8)).sum().backward()
    with pytest.raises(KeyError, match="no parameter named"):
        w.why_no_grad("nope")
    with pytest.raises(TypeError, match=r"gradarg\.watch"):
        gradarg.draw_modules(object())


# -- module drawings ----------------------------------------------------------------------


def encoder_record(layers=6):
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True)
    net = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
    with gradarg.watch(net) as w:
        net(torch.randn(2, 4, 16)).pow(3).mean().backward()
    return w


def segments_cross_box(p, q, box, eps=0.5):
    """Does segment p-q (axis-parallel) pass through the interior of the box?"""
    x0, y0, x1, y1 = box.x + eps, box.y + eps, box.x + box.width - eps, box.y + box.height - eps
    (px, py), (qx, qy) = p, q
    if px == qx:  # vertical
        return x0 < px < x1 and max(py, qy) > y0 and min(py, qy) < y1
    if py == qy:
        return y0 < py < y1 and max(px, qx) > x0 and min(px, qx) < x1
    raise AssertionError("edges are axis-parallel")


def check_geometry(lay):
    boxes = lay["boxes"]
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            apart = (a.y + a.height <= b.y or b.y + b.height <= a.y or
                     a.x + a.width <= b.x or b.x + b.width <= a.x)
            assert apart, f"{a.name} overlaps {b.name}"
        assert a.x + a.width <= lay["width"] and a.y + a.height <= lay["height"]
    for _, _, pts in lay["edges"]:
        for p, q in itertools.pairwise(pts):
            for b in boxes:
                assert not segments_cross_box(p, q, b), f"edge {pts} crosses {b.name}"


def test_module_drawing_collapsed_and_expanded():
    w = encoder_record()
    lay = module_layout(w)
    assert [b.name for b in lay["boxes"]] == [f"layers.{i}" for i in range(6)]
    assert [(w.modules[s].name, w.modules[d].name) for s, d, _ in lay["edges"]] == [
        (f"layers.{i}", f"layers.{i + 1}") for i in range(5)]
    check_geometry(lay)
    lay = module_layout(w, ["layers.0.self_attn", "layers.3"])
    names = [b.name for b in lay["boxes"]]
    assert names[0] == "layers.0" and lay["boxes"][0].header
    assert "layers.0.self_attn" in names and "layers.3.linear1" in names
    assert "layers.1.linear1" not in names
    check_geometry(lay)
    # a residual connection: self_attn's output reaches norm1 past dropout1, in a side lane
    edges = {(w.modules[s].name, w.modules[d].name): pts for s, d, pts in lay["edges"]}
    assert len(edges[("layers.3.self_attn", "layers.3.norm1")]) == 4
    with pytest.raises(KeyError, match="no module call named"):
        module_layout(w, ["layers.9"])


def test_module_drawing_text_sizes_and_width():
    import re

    w = encoder_record()
    svg = gradarg.draw_modules(w, expand=["layers.0"]).svg
    sizes = [float(s) for s in re.findall(r"font-size:\s*([\d.]+)px", svg)]
    assert sizes and min(sizes) >= 11
    assert "font-size=" not in svg  # no size set elsewhere
    width = float(re.search(r'<svg[^>]* width="([\d.]+)"', svg).group(1))
    assert width <= 1000  # fits a notebook column at its natural size
    assert "max-width:none" in svg
    for n in range(6):
        assert f'data-module="layers.{n}"' in svg


def test_module_drawing_depth_opens_everything():
    w = encoder_record(layers=2)
    lay = module_layout(w, depth=1)
    assert sum(b.header for b in lay["boxes"]) == 2
    assert len(lay["boxes"]) == 2 + 2 * len(w.modules[1].children)
    check_geometry(lay)


def test_module_drawing_of_a_model_without_submodules():
    net = nn.Linear(3, 2)
    with gradarg.watch(net) as w:
        net(torch.randn(1, 3)).sum().backward()
    lay = module_layout(w)
    assert [b.name for b in lay["boxes"]] == ["(model)"]
    assert math.isclose(w.modules[0].param_norm,
                        math.hypot(net.weight.grad.norm().item(), net.bias.grad.norm().item()),
                        rel_tol=1e-6)


def test_norm_is_exact_about_zero_and_overflow():
    from gradarg.trace.graph.values import norm as _norm

    assert _norm(torch.tensor([1e30, 1e30])) == pytest.approx(math.sqrt(2) * 1e30, rel=1e-6)
    assert _norm(torch.tensor([1e-30, 0.0])) == pytest.approx(1e-30, rel=1e-6)
    assert _norm(torch.zeros(3, dtype=torch.complex64)) == 0.0
    assert _norm(torch.tensor([3 + 4j])) == pytest.approx(5.0)
    assert _norm(torch.tensor([math.inf, 1.0])) == math.inf
    assert math.isnan(_norm(torch.tensor([math.nan, 1.0])))
    sparse = torch.sparse_coo_tensor([[0, 0, 2]], [3.0, 1.0, 0.0], (4,),
                                     check_invariants=True)  # uncoalesced: 3 + 1 at 0
    assert _norm(sparse) == pytest.approx(4.0)


def test_embedding_bag_sparse():
    torch.manual_seed(0)
    bag = nn.EmbeddingBag(10, 3, sparse=True)
    with gradarg.watch(bag) as w:
        bag(torch.tensor([[1, 2], [3, 3]])).sum().backward()
    rec = w.parameters["weight"]
    assert rec.sparse
    assert rec.grad == pytest.approx(bag.weight.grad.to_dense().norm().item(), rel=1e-6)
