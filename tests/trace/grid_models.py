"""The model families of the grid in ``test_grid.py``, each built small, with a bug planted.

Every family holds one ``Site`` (a pre-norm residual block ``x + out(act(lin(norm(x))))`` on
the last dimension) where the bugs that live inside a forward are planted; the family's own layers
surround it, so the gradient that reaches the site, and the one that leaves it, runs through
the family's own kind of graph (batch norm, a GRU, attention, GPT-2's blocks, a tied head, a
LoRA adapter, checkpointed recomputation).  A family may plant a kind itself (the LoRA family
plants the zero factor in its adapter: ``A`` zero as well as ``B``); what it plants and where
is stated in :class:`Family`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint

D = 16  # width of every family but GPT-2 (n_embd = 32)


class Site(nn.Module):
    """``x + out(act(lin(norm(x))))``, with the bug ``kind`` planted (``bug=True``) or its healthy
    variant (``bug=False``); ``kind=None`` is the plain block.  The parameters of a kind's
    two variants have the same names and shapes: only the bug differs."""

    def __init__(self, d: int, kind: str | None, bug: bool):
        super().__init__()
        self.kind, self.bug = kind, bug
        # the norm keeps the units of act alive whatever the scale of the input (GPT-2's
        # embeddings have std 0.02; a CNN's pooled features are all positive)
        self.norm = nn.LayerNorm(d)
        self.lin = nn.Linear(d, d)
        self.act = nn.Sigmoid() if kind == "inplace" else nn.ReLU()
        self.out = nn.Linear(d, d)
        if kind == "dead" and bug:
            with torch.no_grad():
                self.lin.bias.fill_(-100.0)  # every unit of act is 0 for every input
        if kind == "unused":
            self.extra = nn.Linear(d, d)
        if kind == "recreated":
            self.scale = nn.Parameter(torch.ones(d))
        if kind == "zero_factor":
            # ReZero-style gate: initialised to zero (the bug) or to one
            self.gate = nn.Parameter(torch.zeros(d) if bug else torch.ones(d))
        if kind == "no_grad":
            self.register_buffer("running", torch.zeros(()))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        kind, bug = self.kind, self.bug
        n = self.norm(x)
        if kind == "no_grad" and bug:
            with torch.no_grad():
                z = self.lin(n)
        elif kind == "no_grad":
            with torch.no_grad():  # a statistic kept outside the graph, as it should be
                self.running.mul_(0.9).add_(0.1 * x.mean())
            z = self.lin(n)
        else:
            z = self.lin(n)
        if kind == "detach" and bug:
            z = z.detach()
        if kind == "nan_forward":
            # the square root of a value that can be negative: NaN in the forward
            z = torch.sqrt(z) if bug else torch.sqrt(z.abs() + 1.0)
        if kind == "nan_where":
            # where() picks sqrt only where z > 0, but sqrt's backward at the other entries
            # is 0 / NaN: the single where (bug) and the double where (fixed)
            if bug:
                z = torch.where(z > 0, torch.sqrt(z), torch.zeros_like(z))
            else:
                safe = torch.where(z > 0, z, torch.ones_like(z))
                z = torch.where(z > 0, torch.sqrt(safe), torch.zeros_like(z))
        if kind == "inplace" and not bug:
            z = z.clone()
            z[..., 0] = 0.0  # in place, but before anything saved it
        h = self.act(z)
        if kind == "inplace" and bug:
            h[..., 0] = 0.0  # sigmoid saved its output for backward: this edits it
        if kind == "recreated":
            if bug:  # a new parameter on every call: the registered one is never used
                self.scale = nn.Parameter(torch.ones(h.shape[-1]))
            h = h * self.scale
        y = self.out(h)
        if kind == "zero_factor":
            y = self.gate * y
        y = x + y
        if kind == "unused":
            e = self.extra(x)
            if not bug:
                y = y + e
        return y


@dataclass(frozen=True)
class Family:
    """One model family of the grid.

    Attributes
    ----------
    name : str
        The family's name in the cell ids.
    build : callable
        ``build(kind, bug) -> nn.Module``: the model with its ``site`` (a :class:`Site`) and
        ``kind`` planted, ``bug`` or healthy.  Seeded: the same call builds the same model.
        ``model(inputs)`` returns logits whose last dimension is the classes.
    batch : callable
        ``batch() -> (inputs, targets)``, seeded; ``targets`` has the shape of the logits
        without their last dimension (next tokens for the token families).
    own : str
        A parameter of the family's own layers (not of the site): the one frozen by mistake,
        and the one looked at in the step-level kinds.
    zero : tuple or None
        ``(target, operand regex)`` when the family plants ``zero_factor`` itself (LoRA: ``A``
        initialised to zero as well as ``B``); ``None``: the site's gate is the zero factor.
    zero_by_design : str or None
        A regex for a parameter initialised to zero on purpose, which makes another one's
        gradient exactly zero at the first step (LoRA's ``B``): the summary is to say so, as a
        note ("expected until it moves"), not as a problem.
    checkpointed : bool
        Its blocks run under ``torch.utils.checkpoint``.
    frozen_by_design : tuple of str
        Parameters the family freezes on purpose (a LoRA adapter's base layer).
    """

    name: str
    build: Callable[[str | None, bool], nn.Module]
    batch: Callable[[], tuple[torch.Tensor, torch.Tensor]]
    own: str
    zero: tuple[str, str] | None = None
    checkpointed: bool = False
    frozen_by_design: tuple[str, ...] = ()
    zero_by_design: str | None = None


def per_example(model: nn.Module, inputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Cross-entropy of each example (or token)."""
    logits = model(inputs)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1),
                           reduction="none")


def _gen(seed: int = 1) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _vectors(shape: tuple[int, ...], classes: int = 3):
    def batch():
        g = _gen()
        return torch.randn(*shape, generator=g), torch.randint(0, classes, shape[:1], generator=g)

    return batch


def _tokens(batch: int, length: int, vocab: int):
    def make():
        ids = torch.randint(0, vocab, (batch, length + 1), generator=_gen())
        return ids[:, :-1], ids[:, 1:]  # each position predicts the next token

    return make


# -- the families --------------------------------------------------------------------------


class MLP(nn.Module):
    def __init__(self, kind, bug):
        super().__init__()
        torch.manual_seed(0)
        self.inp = nn.Linear(8, D)
        self.site = Site(D, kind, bug)
        self.hidden = nn.Linear(D, D)
        self.head = nn.Linear(D, 3)

    def forward(self, x):
        return self.head(torch.tanh(self.hidden(self.site(torch.tanh(self.inp(x))))))


class CNN(nn.Module):
    def __init__(self, kind, bug):
        super().__init__()
        torch.manual_seed(0)
        self.conv1, self.bn1 = nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8)
        self.conv2, self.bn2 = nn.Conv2d(8, D, 3, padding=1), nn.BatchNorm2d(D)
        self.relu1, self.relu2 = nn.ReLU(), nn.ReLU()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.site = Site(D, kind, bug)
        self.head = nn.Linear(D, 3)

    def forward(self, x):
        h = self.relu1(self.bn1(self.conv1(x)))
        h = self.relu2(self.bn2(self.conv2(h)))
        return self.head(self.site(self.pool(h).flatten(1)))


class GRU(nn.Module):
    def __init__(self, kind, bug):
        super().__init__()
        torch.manual_seed(0)
        self.inp = nn.Linear(8, D)
        self.site = Site(D, kind, bug)
        self.rnn = nn.GRU(D, D, batch_first=True)
        self.head = nn.Linear(D, 3)

    def forward(self, x):
        out, _ = self.rnn(self.site(self.inp(x)))
        return self.head(out[:, -1])


class Encoder(nn.Module):
    def __init__(self, kind, bug):
        super().__init__()
        torch.manual_seed(0)
        self.inp = nn.Linear(8, D)
        self.site = Site(D, kind, bug)
        layer = nn.TransformerEncoderLayer(D, nhead=2, dim_feedforward=32, dropout=0.0,
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        self.head = nn.Linear(D, 3)

    def forward(self, x):
        return self.head(self.encoder(self.site(self.inp(x))).mean(dim=1))


class GPT2(nn.Module):
    """GPT-2 from a config (no weights): its token embedding, the site, its blocks (through
    ``inputs_embeds``) and its head, tied to the token embedding."""

    def __init__(self, kind, bug):
        super().__init__()
        import transformers

        torch.manual_seed(0)
        config = transformers.GPT2Config(
            n_layer=2, n_embd=32, n_head=2, vocab_size=100, n_positions=16,
            bos_token_id=0, eos_token_id=0, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
        self.gpt = transformers.GPT2LMHeadModel(config)
        self.site = Site(32, kind, bug)

    def forward(self, ids):
        e = self.site(self.gpt.transformer.wte(ids))
        return self.gpt.lm_head(self.gpt.transformer(inputs_embeds=e).last_hidden_state)


class Tied(nn.Module):
    """A token embedding whose matrix is also the output layer's weight."""

    def __init__(self, kind, bug):
        super().__init__()
        torch.manual_seed(0)
        self.emb = nn.Embedding(100, D)
        self.site = Site(D, kind, bug)
        self.head = nn.Linear(D, 100, bias=False)
        self.head.weight = self.emb.weight

    def forward(self, ids):
        return self.head(torch.tanh(self.site(self.emb(ids))))


class LoRALinear(nn.Module):
    """A frozen ``base`` Linear plus ``B(A(x))``, initialised as LoRA is: ``A`` random, ``B``
    zero (so ``A``'s gradient is exactly zero until ``B`` moves); ``zero_a`` also sets ``A``
    to zero, and then neither ever gets a gradient."""

    def __init__(self, d_in, d_out, rank, zero_a=False):
        super().__init__()
        self.base = nn.Linear(d_in, d_out).requires_grad_(False)
        self.A = nn.Linear(d_in, rank, bias=False)
        self.B = nn.Linear(rank, d_out, bias=False)
        with torch.no_grad():
            self.B.weight.zero_()
            if zero_a:
                self.A.weight.zero_()

    def forward(self, x):
        return self.base(x) + self.B(self.A(x))


class LoRA(nn.Module):
    def __init__(self, kind, bug):
        super().__init__()
        torch.manual_seed(0)
        self.lora = LoRALinear(8, D, 4, zero_a=(kind == "zero_factor" and bug))
        site_kind = None if kind == "zero_factor" else kind  # planted in the adapter
        self.site = Site(D, site_kind, bug)
        self.head = nn.Linear(D, 3)

    def forward(self, x):
        return self.head(self.site(torch.tanh(self.lora(x))))


class Block(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.lin = nn.Linear(d_in, d_out)

    def forward(self, x):
        return torch.tanh(self.lin(x))


class Checkpointed(nn.Module):
    """A stack whose blocks (the first taking the raw input, the site, the last) each run
    under ``torch.utils.checkpoint``; the bug of kind ``reentrant`` is ``use_reentrant=True``
    for every call, whose first input (the data) does not require grad."""

    def __init__(self, kind, bug):
        super().__init__()
        torch.manual_seed(0)
        self.first = Block(8, D)
        self.site = Site(D, None if kind == "reentrant" else kind, bug)
        self.last = Block(D, D)
        self.head = nn.Linear(D, 3)
        self.reentrant = kind == "reentrant" and bug

    def forward(self, x):
        h = x
        for block in (self.first, self.site, self.last):
            h = checkpoint(block, h, use_reentrant=self.reentrant)
        return self.head(h)


FAMILIES: dict[str, Family] = {f.name: f for f in (
    Family("mlp", MLP, _vectors((8, 8)), own="hidden.weight"),
    Family("cnn_bn", CNN, _vectors((4, 3, 8, 8)), own="conv2.weight"),
    Family("gru", GRU, _vectors((4, 5, 8)), own="rnn.weight_hh_l0"),
    Family("transformer", Encoder, _vectors((4, 5, 8)), own="encoder.layers.0.linear1.weight"),
    Family("gpt2", GPT2, _tokens(2, 8, 100), own="gpt.transformer.h.0.attn.c_attn.weight"),
    Family("tied_embedding", Tied, _tokens(4, 6, 100), own="emb.weight"),
    Family("lora", LoRA, _vectors((8, 8)), own="lora.B.weight",
           zero=("lora.B.weight", r"lora\.A\b"),
           frozen_by_design=("lora.base.weight", "lora.base.bias"), zero_by_design=r"lora\.B\b"),
    Family("checkpointed", Checkpointed, _vectors((8, 8)), own="first.lin.weight",
           checkpointed=True),
)}
