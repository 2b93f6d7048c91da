"""The record of a slip: what the saved values of a loss's first autograd nodes showed, at the
``backward()`` call, about how the loss was computed (read by :mod:`.observed`, said by
:mod:`.lossforms`).

Imports nothing of gradarg.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["Slip"]


class Slip(NamedTuple):
    """What the saved values of a loss's first nodes showed at the ``backward()`` call about
    how it was computed: ``kind`` ``"broadcast"`` (a loss whose input and target shapes
    differ: ``shape`` the input's, ``other`` what both were broadcast to), ``"not-log-probs"``
    (``nll_loss`` given values whose logsumexp over the classes is not 0: ``low``, ``high``
    its range over the rows read, ``value`` the loss), ``"softmax-dim-0"`` (a softmax over
    dimension 0 of ``shape``), ``"kl-probs"``, ``"log-likelihood"`` or ``"huber-slope"``
    (:func:`~.observed._huber_slope`), ``"clamp-log"`` (the log of a clamp that clipped ``other[0]`` of
    the ``other[1]`` entries the log reads, ``low`` / ``high`` its bounds, NaN where none:
    :mod:`.clamplog`), ``"where-constant"`` (``other[0]`` of the ``other[1]`` entries of a sum
    of two ``where`` selections took a constant in both: :mod:`.wherepairs`),
    ``"weights-after-reduction"`` (a loss reduced to one number, ``op``, by its mean,
    ``other`` (1,), or sum, (2,), times a tensor of ``shape`` without history whose mean is
    ``value``: :mod:`.reducedweights`), ``"ascended"`` (a loss term, ``op``, with factor
    ``value`` < 0 alone reaches the parameters whose ``id`` are ``other``:
    :mod:`.signedterms`) or ``"column-dominates"`` (output column ``shape[0]`` of ``shape[1]``
    makes the share ``value`` of a regression loss, ``op``, its targets ``low`` times the
    smallest column's scale: :mod:`.columnscale`) or ``"class-weight-batch"`` (a class
    ``weight`` of ``shape[0]`` entries, the batch's length, weighting ``other[0]`` samples by
    another entry than their row's, ``other[1]`` classes absent: :mod:`.classweights`) or
    ``"ratio-one"`` (``op`` ``exp(a - b)`` or ``a / b`` exactly 1, both sides carrying
    gradient: :mod:`.ratioone`) or ``"heavy-smoothing"`` (``label_smoothing`` ``value`` over
    ``shape[0]`` classes, targets ``low`` / ``high``: :mod:`.smoothing`) or
    ``"factor-of-reduced"`` (``exp(-L)``, ``value``, of loss ``op`` reduced over ``shape[0]``
    elements by its mean, ``other`` (1,), or sum, (2,): :mod:`.reducedfactor`) or
    ``"sigmoid-squared"`` (``other[0]`` of ``shape[0]`` sigmoid outputs flat and wrong under
    a squared error, ``value`` their largest ``p (1 - p)``: :mod:`.sigmoidsquare`) or
    ``"self-difference"`` (``op`` takes one tensor twice: :mod:`.selfdiff`, ``other`` the
    ``id`` of that leaf) or ``"masked-softmax"`` (a softmax over ``other[2]`` of ``shape`` whose
    scores were multiplied by a 0/1 mask, ``other[0]`` of ``other[1]`` entries 0, ``value`` the
    mean weight per row on them: :mod:`.maskedsoftmax`) or ``"same-candidates"`` (a softmax
    ``op`` over dimension ``other[0]`` of scores ``shape`` from a product, ``other[1]`` 0 ``mm``
    1 ``bmm``, with identical candidates, ``value`` ``log C``: :mod:`.samecandidates`) or ``"masked-scores"`` (scores
    multiplied by a 0/1 factor of ``shape``, ``other[0]`` of ``other[1]`` entries 0, before
    ``op``, a log-sigmoid, softplus or BCE with logits: :mod:`.maskedscores`) or ``"self-targets"``
    (probability targets equal to the probabilities of the log-softmax over dimension
    ``other[0]`` of scores ``shape`` they are multiplied with, ``value`` the largest
    difference: :mod:`.selftargets`) or ``"picked-subset"`` (a min or max ``op`` over
    dimension ``other[0]`` of ``shape`` whose indices picked ``other[1]`` of its entries:
    :mod:`.picked`) or ``"score-weight"`` (log-probabilities times a weight of ``shape[0]``
    entries, one per sample, whose first entry moves with ``other[0]`` other samples'
    log-probabilities: :mod:`.scoreweight`) or ``"equal-sides"`` (a regression loss ``op`` of two equal tensors of ``shape`` that both
    carry gradient: :func:`~.observed._equal_sides`); ``op``: otherwise the node's name."""

    kind: str
    op: str
    shape: tuple[int, ...]
    other: tuple[int, ...] = ()
    low: float = 0.0
    high: float = 0.0
    value: float | None = None
