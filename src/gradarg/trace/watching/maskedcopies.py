"""Targets the model can read in its own input at the same position, so the loss falls by
copying them: a masked-token loss taken at every position (the targets of the positions the
input left visible are the input itself), and a decoder fed its labels unshifted.

BERT's masked language modelling (Devlin et al., 2019, https://arxiv.org/abs/1810.04805,
section 3.1) predicts only the masked positions: Hugging Face's
``DataCollatorForLanguageModeling`` sets the labels of every other position to -100, the
``ignore_index`` of ``cross_entropy``.  Scored everywhere, the visible positions' targets sit in
the input at the same position; the loss falls by copying them.

Seen here, at each outermost ``backward()`` (by :class:`.tokenshift.TokenShift`, which keeps the
model's token ids): an ``nll_loss`` target that equals the ids at the same position on at least
half of its scored positions (:data:`.tokenshift.MIN_POSITIONS` at least), while most of the
other scored positions (:data:`MASKED` of them at least) hold one id in the input that is never
a target at any scored position (the mask token).  Only a model called with one integer tensor
is read: a sequence-to-sequence model (BART) reconstructs its corrupted input on purpose.

A sequence-to-sequence model is fed, with teacher forcing, the labels shifted right (``<bos>``
then ``labels[:-1]``), so that position ``t`` predicts the token after the ones it reads.  Fed
the labels themselves, position ``t`` reads its own target.  Seen here: an ``nll_loss`` target
equal, at the same position, to an integer tensor the model was called with other than its
first (the decoder's input), on :data:`UNSHIFTED` of its scored positions at least.

Imports :mod:`.finding` only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import torch

from .finding import Finding, Options

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = [
    "MASKED",
    "UNSHIFTED",
    "Copies",
    "Unshifted",
    "copies",
    "decoder_unshifted",
    "masked_copies",
    "unshifted",
]

MASKED = 0.7  # the least share of the other scored positions that hold the mask id
UNSHIFTED = 0.9  # the least share of scored positions whose target is the decoder's input


class Unshifted(NamedTuple):
    """The target equals integer input number ``which`` (counted from 1) at the same
    position on ``same`` of its ``scored`` positions."""

    which: int
    same: int
    scored: int


def unshifted(target: torch.Tensor, inputs: list[torch.Tensor], ignore: int,
              least: int) -> Unshifted | None:
    """The first of ``inputs`` after the first (``(batch, T)`` integer tensors the model was
    called with) that ``target`` (flat) equals at the same position (see the module)."""
    for i, x in enumerate(inputs[1:], start=2):
        if target.dim() != 1 or target.numel() != x.numel():
            continue
        tgt = target.reshape(x.shape).to(x.dtype)
        scored = tgt != ignore
        n = int(scored.sum())
        same = int((scored & (tgt == x)).sum())
        if n >= least and same >= UNSHIFTED * n:
            return Unshifted(i, same, n)
    return None


class Copies(NamedTuple):
    """``visible`` of the ``scored`` positions have their target in the input at the same
    position; ``masked`` of the others hold the id ``mask`` in the input."""

    scored: int
    visible: int
    masked: int
    mask: int


def copies(target: torch.Tensor, ids: torch.Tensor, ignore: int, least: int) -> Copies | None:
    """Read ``target`` (flat, ``batch * T`` entries) against the model's ``ids`` ``(batch,
    T)`` at the same positions (see the module); ``None`` when it is not such a loss."""
    if target.dim() != 1 or target.numel() != ids.numel():
        return None
    tgt = target.reshape(ids.shape).to(ids.dtype)
    scored = tgt != ignore
    same = scored & (tgt == ids)
    n, k = int(scored.sum()), int(same.sum())
    other = scored & ~same
    if n < least or k * 2 < n or not bool(other.any()):
        return None
    seen = ids[other]
    mask = int(seen.mode().values)
    held = int((seen == mask).sum())
    # the mask token is no target anywhere: an id that is also a scored target (a visible
    # token, or a random replacement of BERT's 10 %) is not the mask, however often it is seen
    if held < MASKED * int(other.sum()) or bool((tgt[scored] == mask).any()):
        return None
    return Copies(n, k, held, mask)


def masked_copies(w: GradWatch, o: Options) -> Finding:
    """A masked-token loss scored at the visible positions too (a problem)."""
    del o
    c: Copies | None = w.tokens.copies
    if c is None:
        return Finding("masked-token targets", True)
    return Finding("masked-token targets", True, (
        f"the masked-token loss is taken at every position, not only the masked ones: "
        f"{c.visible} of its {c.scored} scored positions have their target visible in the "
        f"input, the same token at the same position, and {c.masked} of the others hold id "
        f"{c.mask} (the mask token) there (observed: the targets the loss saved against the "
        f"token ids the model was called with), so most of the loss trains the model to copy "
        f"its input; set the labels of the unmasked positions to -100, the ignore_index of "
        f"cross_entropy (DataCollatorForLanguageModeling does)"))


def decoder_unshifted(w: GradWatch, o: Options) -> Finding:
    """A decoder fed its labels unshifted (a problem)."""
    del o
    u: Unshifted | None = w.tokens.unshifted
    if u is None:
        return Finding("decoder input", True)
    return Finding("decoder input", True, (
        f"the decoder is fed the labels unshifted: the targets equal integer input {u.which} "
        f"of the model's call at the same position on {u.same} of their {u.scored} scored "
        f"positions (observed: the targets the loss saved against the token ids the model was "
        f"called with), so position t reads the token it must predict and the loss falls by "
        f"copying it; teacher forcing feeds the labels shifted right (<bos> followed by "
        f"labels[:-1]), so that position t reads the tokens before its target"))
