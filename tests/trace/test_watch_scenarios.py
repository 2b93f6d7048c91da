"""Real training setups, healthy and with one real bug planted at a time: what ``watch`` and
``why_no_grad`` must name, what they must never say, and "ok" only on the healthy steps.

Each scenario runs one ordinary step as a user writes it and returns the texts the tools gave
(``summary`` after the ``with`` block; ``why`` from ``w.why_no_grad``; ``before`` / ``after``
from ``gradarg.why_no_grad`` before and after the user's own ``backward()``) with the phrases
that must and must not appear in each.  Where a figure is claimed, the test recomputes it
independently (``torch.autograd.grad`` on the same step).  DDP and FSDP2 are in
``test_distributed.py``.
"""

from __future__ import annotations

import copy
import math
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint

import gradarg


@dataclass
class Seen:
    texts: dict[str, str]
    must: dict[str, tuple[str, ...]] = field(default_factory=dict)
    never: dict[str, tuple[str, ...]] = field(default_factory=dict)
    healthy: bool = False


SCENARIOS: dict[str, Callable[[], Seen]] = {}
NEVER_OK = ("ok:",)  # a step with a bug never starts with "ok:"


def scenario(f: Callable[[], Seen]) -> Callable[[], Seen]:
    SCENARIOS[f.__name__] = f
    return f


def mlp(act=nn.Tanh, width=16):
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, width), act(), nn.Linear(width, width), act(),
                         nn.Linear(width, 1))


def watched(model, step):
    with gradarg.watch(model) as w:
        step()
    return w


X = torch.randn(32, 8, generator=torch.Generator().manual_seed(1))


# ---------------------------------------------------------------------------- healthy steps


@scenario
def healthy_mlp():
    net = mlp()
    w = watched(net, lambda: net(X).pow(2).mean().backward())
    # every check runs but those about an optimizer, which this step has none of
    return Seen({"summary": w.summary()},
                never={"summary": ("not checked: block", "edited after backward (")},
                healthy=True)


@scenario
def frozen_backbone_trained_head():
    net = mlp()
    for p in net[:4].parameters():
        p.requires_grad_(False)
    w = watched(net, lambda: net(X).pow(2).mean().backward())
    return Seen({"summary": w.summary(), "why": w.why_no_grad("0.weight")},
                must={"summary": ("4 of 6 parameters are frozen", "0.weight"),
                      "why": ("frozen",)},
                never={"summary": ("every parameter got", "no gradient for")}, healthy=True)


class TiedLM(nn.Module):
    """An embedding whose weight is also the output layer's (weight tying); ``detach=True``
    plants a hidden ``.detach()`` after the embedding."""

    def __init__(self, detach: bool = False):
        super().__init__()
        self.detach = detach
        self.emb, self.body = nn.Embedding(20, 8), nn.Linear(8, 8)
        self.head = nn.Linear(8, 20, bias=False)
        self.head.weight = self.emb.weight

    def forward(self, ids):
        h = self.emb(ids)
        return self.head(torch.tanh(self.body(h.detach() if self.detach else h)))


def tied_lm_step(detach: bool):
    torch.manual_seed(0)
    m, ids = TiedLM(detach), torch.randint(0, 20, (4, 6))
    return watched(m, lambda: F.cross_entropy(m(ids).flatten(0, 1), ids.flatten()).backward())


@scenario
def tied_weights_language_model():
    w = tied_lm_step(detach=False)
    return Seen({"summary": w.summary()}, never={"summary": ("tied or shared",)}, healthy=True)


@scenario
def micro_batches_on_purpose():
    net = mlp()

    def step():
        for mb in X.chunk(4):
            (net(mb).pow(2).mean() / 4).backward()

    w = watched(net, step)
    return Seen({"summary": w.summary()},
                must={"summary": ("gradient accumulation over micro-batches", "3 earlier")},
                never={"summary": ("zero_grad() not called", "is missing")}, healthy=True)


@scenario
def lstm_last_step():
    torch.manual_seed(0)
    lstm = nn.LSTM(8, 16, num_layers=2, batch_first=True)
    w = watched(lstm, lambda: lstm(torch.randn(3, 5, 8))[0][:, -1].pow(2).mean().backward())
    return Seen({"summary": w.summary()}, healthy=True)


@scenario
def attention_with_padding():
    torch.manual_seed(0)
    mha = nn.MultiheadAttention(16, 2, batch_first=True)
    q = torch.randn(2, 5, 16)
    pad = torch.tensor([[False] * 5, [False] * 3 + [True] * 2])
    w = watched(mha, lambda: mha(q, q, q, key_padding_mask=pad)[0].pow(2).mean().backward())
    return Seen({"summary": w.summary()}, healthy=True)


@scenario
def cnn_with_batch_norm_and_dropout():
    torch.manual_seed(0)
    cnn = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                        nn.Flatten(), nn.Dropout(0.1), nn.Linear(72, 5))
    x, y = torch.randn(4, 3, 8, 8), torch.tensor([0, 1, 2, 3])
    w = watched(cnn, lambda: F.cross_entropy(cnn(x), y).backward())
    return Seen({"summary": w.summary()}, healthy=True)


@scenario
def checkpoint_not_reentrant():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList(nn.Sequential(nn.Linear(8, 8), nn.Tanh())
                                        for _ in range(3))
            self.head = nn.Linear(8, 1)

        def forward(self, x):
            for b in self.blocks:
                x = checkpoint(b, x, use_reentrant=False)
            return self.head(x)

    torch.manual_seed(0)
    net = Net()
    w = watched(net, lambda: net(X).sum().backward())
    return Seen({"summary": w.summary()}, never={"summary": ("returned an output",)},
                healthy=True)


@scenario
def checkpoint_reentrant():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.block = nn.Sequential(nn.Linear(8, 8), nn.Tanh())
            self.head = nn.Linear(8, 1)

        def forward(self, x):
            return self.head(checkpoint(self.block, x, use_reentrant=True))

    torch.manual_seed(0)
    net, x = Net(), X.clone().requires_grad_()
    w = watched(net, lambda: net(x).sum().backward())
    return Seen({"summary": w.summary()},
                never={"summary": ("without autograd history", "returned an output")},
                healthy=True)


@scenario
def compiled_module():
    net = mlp()
    compiled = torch.compile(net, backend="aot_eager")  # no C++ compiler needed
    with warnings.catch_warnings():  # dynamo's tracing reads .grad of non-leaf tensors
        warnings.simplefilter("ignore", UserWarning)
        w = watched(net, lambda: compiled(X).pow(2).mean().backward())
    return Seen({"summary": w.summary()}, healthy=True)


# ------------------------------------------------------------------------- planted bugs


@scenario
def frozen_by_mistake():
    net = mlp()
    net[0].weight.requires_grad_(False)
    net[2].bias.requires_grad_(False)
    w = watched(net, lambda: net(X).pow(2).mean().backward())
    s = w.summary()
    return Seen({"summary": s}, must={"summary": ("2 of 6 parameters are frozen", "0.weight",
                                                  "2.bias")},
                never={"summary": ("every parameter got",)}, healthy=s.startswith("gradients ok"))


@scenario
def clipped_far_below_the_gradient():
    net = mlp()

    def step():
        net(X).pow(2).mean().backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 1e-5)

    w = watched(net, step)
    return Seen({"summary": w.summary(), "why": w.why_no_grad("0.weight")},
                must={"summary": ("gradients changed after backward", "clip_grad_norm_"),
                      "why": ("changed after backward", "when the with block ended")},
                never={"summary": NEVER_OK})


UNSCALED = "GradScaler's unscale_ divided .grad of every parameter by its scale"


@scenario
def grad_scaler_unscaled():
    if not hasattr(torch.amp, "GradScaler"):
        pytest.skip("torch.amp.GradScaler('cpu') needs torch >= 2.3")
    net = mlp()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu")

    def step():
        scaler.scale(net(X).pow(2).mean()).backward()
        scaler.unscale_(opt)

    w = watched(net, step)
    # an observed unscale_ (issue 43): named with its scale, not as a change after backward
    return Seen({"summary": w.summary(), "why": w.why_no_grad("0.weight")},
                must={"summary": (UNSCALED, str(int(scaler.get_scale()))),
                      "why": ("GradScaler's unscale_ divided .grad by its scale",
                              str(int(scaler.get_scale())))},
                never={"summary": ("changed after backward", "clip_grad_norm_ rescales"),
                       "why": ("changed after backward",)}, healthy=True)


@scenario
def forgotten_zero_grad_in_a_loop():
    net = mlp()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)

    def step():
        for mb in X.chunk(2):
            net(mb).pow(2).mean().backward()
            opt.step()

    w = watched(net, step)
    return Seen({"summary": w.summary()}, must={"summary": ("zero_grad() is missing",)},
                never={"summary": (*NEVER_OK, "micro-batches",)})


@scenario
def dead_units_on_sequence_input():
    torch.manual_seed(0)
    lin = nn.Linear(24, 64)
    with torch.no_grad():
        lin.bias[:40] = -100.0
    net = nn.Sequential(lin, nn.ReLU(), nn.Linear(64, 1))
    w = watched(net, lambda: net(torch.randn(8, 20, 24)).pow(2).mean().backward())
    return Seen({"summary": w.summary()},
                must={"summary": ("40 of 64 units", "features, the last dimension", "(ReLU)")},
                never={"summary": (*NEVER_OK, "of 20 units",)})


@scenario
def dead_conv_channels():
    torch.manual_seed(0)
    conv = nn.Conv2d(3, 8, 3)
    with torch.no_grad():
        conv.bias[:6] = -100.0
    net = nn.Sequential(conv, nn.ReLU(), nn.Flatten(), nn.Linear(8 * 6 * 6, 1))
    w = watched(net, lambda: net(torch.randn(4, 3, 8, 8)).pow(2).mean().backward())
    return Seen({"summary": w.summary()},
                must={"summary": ("6 of 8 units", "channels, dimension 1", "(ReLU)")},
                never={"summary": NEVER_OK})


@scenario
def in_place_edit_breaks_backward():
    torch.manual_seed(0)
    lin = nn.Linear(4, 4)
    x = torch.randn(3, 4)
    h = torch.tanh(lin(x))
    h.clamp_(max=0.5)
    loss = h.sum()
    before = gradarg.why_no_grad(loss, lin.weight).message
    with pytest.raises(RuntimeError, match="inplace"):
        loss.backward()
    after = gradarg.why_no_grad(loss, lin.weight).message
    return Seen({"before": before, "after": after},
                must={"before": ("modified in place",), "after": ("modified in place",)},
                never={"after": ("zero_grad", "inputs=")})


@scenario
def custom_function_returns_none():
    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * b

        @staticmethod
        def backward(ctx, g):
            _, b = ctx.saved_tensors
            return g * b, None  # forgot b's gradient

    a, b = torch.randn(3, requires_grad=True), torch.randn(3, requires_grad=True)
    y = Scale.apply(a, b).sum()
    before = gradarg.why_no_grad(y, b, names={"b": b}).message
    y.backward()
    after = gradarg.why_no_grad(y, b, names={"b": b}).message
    return Seen({"before": before, "after": after},
                must={"before": ("custom Function ScaleBackward",),
                      "after": ("backward() has run", "custom Function ScaleBackward")},
                never={"after": ("has not reached",)})


@scenario
def part_of_the_forward_under_no_grad():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.inp, self.att, self.head = nn.Linear(16, 16), nn.Linear(16, 16), nn.Linear(16, 4)

        def forward(self, x):
            h = torch.tanh(self.inp(x))
            with torch.no_grad():
                a = self.att(h)
            return self.head(h + a)

    torch.manual_seed(0)
    m, x, y = Net(), torch.randn(32, 16), torch.randint(0, 4, (32,))
    loss = F.cross_entropy(m(x), y)
    before = gradarg.why_no_grad(loss, m.att.weight, module=m).message
    w = watched(m, lambda: F.cross_entropy(m(x), y).backward())
    return Seen({"before": before, "summary": w.summary(), "why": w.why_no_grad("att.weight")},
                must={"before": ("AddBackward0", "module 'head'"),
                      "summary": ("module 'att'", "torch.no_grad()"),
                      "why": ("torch.no_grad()",)},
                never={"before": ("NllLossBackward0", "AddmmBackward0 (32, 16)"),
                       "why": ("cannot tell",), "summary": NEVER_OK})


@scenario
def inference_mode_inside_forward():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Linear(4, 4), nn.Linear(4, 1)

        def forward(self, x):
            with torch.inference_mode():
                h = self.a(x)
            return self.b(h.clone())

    torch.manual_seed(0)
    m = Net()
    w = watched(m, lambda: m(torch.randn(3, 4)).sum().backward())
    return Seen({"summary": w.summary(), "why": w.why_no_grad("a.weight")},
                must={"summary": ("inference_mode",), "why": ("inference_mode",)},
                never={"summary": (*NEVER_OK, "torch.no_grad() around")})


@scenario
def dropout_recomputed_after_clipping():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Dropout(0.3), nn.Linear(32, 2))
    y = torch.randint(0, 2, (32,))
    F.cross_entropy(net(X), y).backward()
    torch.nn.utils.clip_grad_norm_(net.parameters(), 0.01)
    graph = gradarg.why_no_grad(F.cross_entropy(net(X), y), net[0].weight)
    state = torch.random.get_rng_state()
    closure = gradarg.why_no_grad(lambda: F.cross_entropy(net(X), y), net[0].weight)
    assert torch.equal(state, torch.random.get_rng_state())  # the caller's RNG untouched
    assert graph.case == closure.case == "random-forward"
    return Seen({"graph": graph.message, "closure": closure.message},
                must={"graph": ("forward is random", "dropout"),
                      "closure": ("forward is random", "two calls")},
                never={"graph": ("clipping (clip_grad_norm_", "accumulated over")})


@scenario
def dropout_model_in_eval_accumulated_three_times():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Dropout(0.3), nn.Linear(32, 2)).eval()
    y = torch.randint(0, 2, (32,))
    for _ in range(3):
        F.cross_entropy(net(X), y).backward()
    d = gradarg.why_no_grad(F.cross_entropy(net(X), y), net[0].weight)
    return Seen({"graph": d.message}, must={"graph": ("3 times",)},
                never={"graph": ("random",)})


@scenario
def random_augmentation_without_dropout():
    torch.manual_seed(0)
    net = mlp()

    def loss():
        return net(X + 0.1 * torch.randn_like(X)).pow(2).mean()

    loss().backward()
    d = gradarg.why_no_grad(loss, net[0].weight)
    return Seen({"closure": d.message}, must={"closure": ("forward is random",)},
                never={"closure": ("consistent with gradient clipping", "consistent with 3")})


@scenario
def nan_made_by_the_loss():
    net = mlp()
    with torch.no_grad():  # independently: the loss itself is NaN (sqrt of a negative)
        assert torch.isnan(torch.sqrt(net(X) - 10).mean())
    w = watched(net, lambda: torch.sqrt(net(X) - 10).mean().backward())
    return Seen({"summary": w.summary()},
                must={"summary": ("non-finite", "the loss, or what follows the model",
                                  "SqrtBackward0", "loss passed to backward() was itself NaN",
                                  "0.weight")},
                never={"summary": (*NEVER_OK, "first sent by",)})


@scenario
def nan_made_inside_the_model():
    class Root(nn.Module):
        def forward(self, x):
            return torch.sqrt(x * (x > 0))  # finite, but its derivative at 0 is inf * 0

    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(8, 8), Root(), nn.Linear(8, 1))
    w = watched(net, lambda: net(X).pow(2).mean().backward())
    return Seen({"summary": w.summary()},
                must={"summary": ("non-finite", "first sent by '1' (Root)", "SqrtBackward0",
                                  "0.weight")},
                never={"summary": (*NEVER_OK, "the loss, or what follows",)})


@scenario
def embedding_detached_while_its_tied_weight_learns():
    w = tied_lm_step(detach=True)
    return Seen({"summary": w.summary()},
                must={"summary": ("module 'emb'", "tied or shared weight")},
                never={"summary": NEVER_OK})


@scenario
def gru_encoder_state_never_passed_on():
    class Seq2Seq(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc, self.dec = nn.GRU(4, 8, batch_first=True), nn.GRU(4, 8, batch_first=True)
            self.out = nn.Linear(8, 3)

        def forward(self, src, tgt):
            self.enc(src)  # its state should go on: self.dec(tgt, state)
            o, _ = self.dec(tgt)
            return self.out(o)

    torch.manual_seed(0)
    m = Seq2Seq()
    w = watched(m, lambda: m(torch.randn(2, 5, 4), torch.randn(2, 3, 4)).pow(2).mean()
                .backward())
    return Seen({"summary": w.summary(), "why": w.why_no_grad("enc.weight_ih_l0")},
                must={"summary": ("enc.weight_ih_l0", "module 'enc' (GRU)"),
                      "why": ("not passed on",)},
                never={"why": ("never called", "cannot tell"), "summary": NEVER_OK})


@scenario
def head_built_but_never_called():
    class TwoHeads(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
            self.digit, self.parity = nn.Linear(16, 10), nn.Linear(16, 2)

        def forward(self, x):
            h = self.body(x)
            return self.digit(h), self.digit(h)[:, :2]  # copy-paste slip

    torch.manual_seed(0)
    m, y = TwoHeads(), torch.randint(0, 10, (32,))

    def step():
        d, p = m(X)
        (F.cross_entropy(d, y) + F.cross_entropy(p, y % 2)).backward()

    w = watched(m, step)
    return Seen({"summary": w.summary(), "why": w.why_no_grad("parity.weight")},
                must={"summary": ("parity.weight",), "why": ("never called",)},
                never={"summary": NEVER_OK})


@scenario
def vanishing_through_deep_sigmoids():
    torch.manual_seed(0)
    net = nn.Sequential(*[m for _ in range(12) for m in (nn.Linear(16, 16), nn.Sigmoid())],
                        nn.Linear(16, 1))
    w = watched(net, lambda: net(torch.randn(32, 16)).pow(2).mean().backward())
    return Seen({"summary": w.summary()}, must={"summary": ("vanishing gradient", "12 Sigmoid")},
                never={"summary": NEVER_OK})


def _transformers():
    return pytest.importorskip("transformers")


@scenario
def gpt2_from_a_config():
    tf = _transformers()
    torch.manual_seed(0)
    g = tf.GPT2LMHeadModel(tf.GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=100,
                                         n_positions=32, bos_token_id=0, eos_token_id=0))
    ids = torch.randint(0, 100, (2, 12))
    w = watched(g, lambda: g(ids, labels=ids).loss.backward())
    return Seen({"summary": w.summary()}, healthy=True)


@scenario
def gpt2_almost_all_frozen_and_clipped():
    tf = _transformers()
    torch.manual_seed(0)
    g = tf.GPT2LMHeadModel(tf.GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=100,
                                         n_positions=32, bos_token_id=0, eos_token_id=0))
    for n, p in g.named_parameters():
        p.requires_grad_("ln_f" in n)
    ids = torch.randint(0, 100, (2, 12))

    def step():
        g(ids, labels=ids).loss.backward()
        torch.nn.utils.clip_grad_norm_(g.parameters(), 1e-4)

    w = watched(g, step)
    n_params = len(list(g.parameters()))
    return Seen({"summary": w.summary(), "why": w.why_no_grad("transformer.ln_f.weight")},
                must={"summary": (f"{n_params - 2} of {n_params} parameters are frozen",
                                  "gradients changed after backward"),
                      "why": ("when the with block ended",)},
                never={"summary": NEVER_OK})


@scenario
def bert_from_a_config():
    tf = _transformers()
    torch.manual_seed(0)
    b = tf.BertForSequenceClassification(tf.BertConfig(
        num_hidden_layers=2, hidden_size=32, num_attention_heads=2, intermediate_size=64,
        vocab_size=100, max_position_embeddings=32))
    ids = torch.randint(0, 100, (2, 12))
    w = watched(b, lambda: b(ids, attention_mask=torch.ones_like(ids),
                             labels=torch.tensor([0, 1])).loss.backward())
    return Seen({"summary": w.summary()}, healthy=True)


class _LSTMHead(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.lstm, self.head = nn.LSTM(4, 8, batch_first=True), nn.Linear(8, 2)

    def forward(self, x):
        return self.head(self.lstm(x)[0][:, -1])


_SEQ = torch.randn(3, 5, 4, generator=torch.Generator().manual_seed(2))
_LABELS = torch.tensor([0, 1, 0])


@scenario
def optimizer_step_between_forward_and_backward():
    net = _LSTMHead()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for p in net.parameters():  # gradients of an earlier step
        p.grad = torch.ones_like(p)

    def step():
        loss = F.cross_entropy(net(_SEQ), _LABELS)
        opt.step()  # one line too early: head.weight, saved by the forward, changes
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            loss.backward()

    w = watched(net, step)
    return Seen({"summary": w.summary(checks=False), "why": w.why_no_grad("lstm.weight_ih_l0")},
                must={"summary": ("backward() stopped", "head.weight", "optimizer",
                                  "before optimizer.step()"),
                      "why": ("stopped with an error", "head.weight")},
                never={"summary": (*NEVER_OK, "uses it", "detached", "vanishing"),
                       "why": ("uses it", "detached")})


@scenario
def nan_in_the_input_data():
    net = _LSTMHead()
    x = _SEQ.clone()
    x[1, 2, 0] = float("nan")
    w = watched(net, lambda: F.cross_entropy(net(x), _LABELS).backward())
    return Seen({"summary": w.summary()},
                must={"summary": ("NaN/Inf in an input of module", "the data")},
                never={"summary": (*NEVER_OK, "made NaN/Inf in module", "follows the model")})


@scenario
def zero_initialised_head():
    net = _LSTMHead()
    nn.init.zeros_(net.head.weight)
    w = watched(net, lambda: F.cross_entropy(net(_SEQ), _LABELS).backward())
    # independently: the LSTM's gradient is exactly zero, the head's is not
    net2 = _LSTMHead()
    nn.init.zeros_(net2.head.weight)
    g_lstm, g_head = torch.autograd.grad(F.cross_entropy(net2(_SEQ), _LABELS),
                                         [net2.lstm.weight_ih_l0, net2.head.weight])
    assert not g_lstm.any() and g_head.any()
    return Seen({"summary": w.summary(checks=False), "why": w.why_no_grad("lstm.weight_ih_l0")},
                must={"summary": ("all-zero gradient", "head.weight", "all zeros"),
                      "why": ("head.weight", "all zeros", "once an optimizer step moves it")},
                never={"summary": (*NEVER_OK, "vanishing", "dead"),
                       "why": ("vanishing", "dead")})


# ------------------------------------------------------------------------------- the test


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario(name):
    seen = SCENARIOS[name]()
    for key, phrases in seen.must.items():
        for phrase in phrases:
            assert phrase in seen.texts[key], (key, phrase, seen.texts[key])
    for key, phrases in seen.never.items():
        for phrase in phrases:
            assert phrase not in seen.texts[key], (key, phrase, seen.texts[key])
    if "summary" in seen.texts:
        assert seen.texts["summary"].startswith("gradients ok:") == seen.healthy, seen.texts["summary"]
    if not seen.healthy:
        for key, text in seen.texts.items():
            assert concrete(text), f"vague ({key}): {text}"


# -------------------------------------------------------------------- what "vague" means

# An answer about a step with a bug names its cause concretely when it names at least one of:
# a parameter (a dotted name: 'enc.weight_ih_l0', or a tensor the user named: 'b.grad'), an
# operation (an autograd node, 'SqrtBackward0', or a module with its class, "'1' (ReLU)",
# other than the whole model), or an event (a call that was observed or that the user makes:
# zero_grad, an optimizer step, clip_grad_norm_, unscale_, torch.no_grad(), ...).  The list of
# checks that ran (" [checked: ...]") does not count.
NODE = re.compile(r"\b[A-Z]\w*Backward\d*\b")
PARAM = re.compile(r"\b(?!tensor\.)\w+(?:\.\w+)*\.(?:weight|bias|grad)\w*\b")
MODULE = re.compile(r"'(?!\(model\)')[^']+' \((?!_?[A-Z]\w*\) that has)[A-Za-z_]\w*[),:]")
EVENTS = ("zero_grad", "optimizer step", "optimizer.step", "clip_grad_norm_", "unscale_",
          "torch.no_grad()", "inference_mode", "backward() calls", "dropout mask",
          "two calls of the function", "requires_grad=False", "modified in place",
          "never called", "returns None", "detached")


def concrete(text: str) -> list[str]:
    """What ``text`` names concretely (empty: a vague answer); see the comment above."""
    text = text.split(" [checked:")[0]
    found = [m.group() for rx in (NODE, PARAM, MODULE) if (m := rx.search(text))]
    return found + [e for e in EVENTS if e in text]


@pytest.mark.parametrize("text", [
    "non-finite gradient: 6 parameter(s) got NaN/Inf",
    ("non-finite gradient: already NaN/Inf where it arrives at the output of '(model)' "
     "(Sequential), so the loss, or what follows the model, made it"),
    "vanishing gradient: 10.2 orders of magnitude smaller at '0' than at '24'",
    "dead units: '1' has 6 of 8 units at 0 [checked: zero_grad, optimizer step]",
    "tensor.grad holds NaN or Inf in 1 of 3 entries",
])
def test_a_vague_answer_is_told(text):
    assert concrete(text) == []


@pytest.mark.parametrize("text", [
    "dead units: '1' (ReLU) has 6 of 8 units",
    "non-finite gradient first sent by '1' (Root), whose own operations are SqrtBackward0",
    "6 parameter(s) got NaN/Inf: 0.weight, 0.bias",
    "zero_grad() is missing between steps",
])
def test_a_concrete_answer_is_told(text):
    assert concrete(text) != []


def test_the_corpus_has_25_scenarios_or_more():
    assert len(SCENARIOS) >= 25


def test_each_call_of_a_module_shows_what_it_sent():
    """The two calls of one head on one input: each call's gradient to the input, checked
    against torch.autograd.grad through that call alone (their total is what a hook on the
    input sees)."""
    torch.manual_seed(0)
    body, head = nn.Sequential(nn.Linear(8, 16), nn.ReLU()), nn.Linear(16, 4)
    y = torch.randint(0, 4, (32,))

    def losses(h):
        return F.cross_entropy(head(h), y), F.cross_entropy(head(h)[:, :2], y % 2)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body, self.head = body, head

    net = Net()
    with gradarg.watch(net) as w:
        h = net.body(X)
        a, b = losses(h)
        (a + b).backward()
    h = copy.deepcopy(body)(X).detach().requires_grad_()
    a, b = losses(h)
    sent = [torch.autograd.grad(loss, h)[0].norm().item() for loss in (a, b)]
    calls = [c for c in w.modules if c.name == "head"]
    assert len(calls) == 2
    for c, expected in zip(calls, sent, strict=True):
        assert math.isclose(c.grad_in, expected, rel_tol=1e-5)
    total = math.sqrt(sum(s * s for s in sent))
    assert not math.isclose(calls[0].grad_in, total, rel_tol=1e-3)
    rows = [r for r in w.rows() if r["module"] == "head"]
    assert [r["call"] for r in rows] == [1, 2]
    assert "head (call 2)" in w.table()
