"""Class: a language model's loss scored against the token two places ahead (labels shifted by
hand and again inside the model).  The summary names it exactly when every scored target
equals the token ids at offset 2 and not at offset 1, on at least ``MIN_POSITIONS`` positions,
and no other loss of the backward is scored at another offset; a next-token loss (offset 1),
an unshifted one (offset 0: a reconstruction, not judged) and multi-token prediction heads (an
offset-2 loss beside an offset-1 one, or beside an offset-3 one: Medusa's) are never named.

The truth comes from the test's own construction of the targets: the offset it shifted them by
(two shifts when it shifts by hand and the model shifts again, as Hugging Face's causal LMs
do), checked with plain tensor comparisons.  Generated: the batch, the length, the vocabulary
(a small one repeats tokens, so that several offsets can agree), where the shift happens, the
positions set to ``ignore_index``, ids passed by position or by keyword.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from hypothesis import example, given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg
from gradarg.trace.watching.tokenshift import MIN_POSITIONS


class TinyLM(nn.Module):
    """A causal LM in miniature: logits ``(B, T, V)`` from token ids; with ``labels`` it shifts
    them inside, as ``GPT2LMHeadModel`` does (``labels[:, 1:]`` against ``logits[:, :-1]``)."""

    def __init__(self, vocab: int):
        super().__init__()
        self.emb = nn.Embedding(vocab, 8)
        self.head = nn.Linear(8, vocab)

    def forward(self, input_ids, labels=None):
        logits = self.head(torch.tanh(self.emb(input_ids)).cumsum(1))
        if labels is None:
            return logits
        padded = F.pad(labels, (0, 1), value=-100)[:, 1:]
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), padded.reshape(-1),
                               ignore_index=-100)
        return loss


def _shift(ids: torch.Tensor, k: int) -> torch.Tensor:
    """``ids`` moved ``k`` places to the left, -100 where nothing is left."""
    out = torch.full_like(ids, -100)
    out[:, :ids.shape[1] - k] = ids[:, k:]
    return out


@settings(max_examples=150, deadline=None)
@example(b=2, t=8, vocab=50, how="own loss, unshifted", drop=0.0, keyword=False,
         pattern="alternating", seed=1)  # offset 2 agrees where it exists; t - 2, t - 1 scored
@given(b=st.integers(1, 4), t=st.integers(3, 12), vocab=st.sampled_from([2, 3, 50]),
       how=st.sampled_from(["model shifts, labels shifted by hand", "model shifts, labels=ids",
                            "own loss, logits[:, :-1] vs ids[:, 1:]", "own loss, unshifted",
                            "own loss, shifted by two", "two heads, next and two ahead",
                            "two heads, two and three ahead"]),
       drop=st.floats(0.0, 0.6), keyword=st.booleans(),
       pattern=st.sampled_from(["random", "constant", "alternating"]), seed=st.integers(0, 2**16))
def test_a_target_offset_other_than_the_next_token_is_named_exactly(b, t, vocab, how, drop,
                                                                     keyword, pattern, seed):
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model = TinyLM(vocab)
    ids = torch.randint(0, vocab, (b, t), generator=g)
    if pattern == "constant":  # every offset agrees: nothing can be said
        ids[:] = ids[:, :1]
    elif pattern == "alternating":  # offsets 0 and 2 agree where both exist
        ids[:, 2:] = ids[:, :2].repeat(1, t)[:, :t - 2]
    keep = torch.rand(b, t, generator=g) >= drop
    call = (lambda **kw: model(input_ids=ids, **kw)) if keyword else (
        lambda **kw: model(ids, **kw))
    also_next = False
    with gradarg.watch(model) as w:
        if how.startswith("two heads, next"):  # multi-token prediction: t + 1 and t + 2
            logits = call()
            target = _shift(ids, 2)
            target[~keep] = -100
            nxt = _shift(ids, 1)
            loss = (F.cross_entropy(logits.reshape(-1, vocab), target.reshape(-1))
                    + F.cross_entropy((logits * 2).reshape(-1, vocab), nxt.reshape(-1)))
            also_next = int((nxt != -100).sum()) >= MIN_POSITIONS
        elif how.startswith("two heads, two and three"):  # Medusa's heads: t + 2 and t + 3
            logits = call()
            target = _shift(ids, 2)
            target[~keep] = -100
            third = _shift(ids, 3)
            loss = (F.cross_entropy(logits.reshape(-1, vocab), target.reshape(-1))
                    + F.cross_entropy((logits * 2).reshape(-1, vocab), third.reshape(-1)))
            # the second head is seen at another offset when its targets are not all the
            # token two ahead (a short or repetitive sequence cannot tell them apart)
            on = third != -100
            also_next = (int(on.sum()) >= MIN_POSITIONS
                         and not bool((third[on] == _shift(ids, 2)[on]).all()))
        elif how.startswith("model shifts"):
            labels = _shift(ids, 1) if "by hand" in how else ids.clone()
            labels[~keep] = -100
            target = F.pad(labels, (0, 1), value=-100)[:, 1:]  # what the model scores
            loss = call(labels=labels)
        else:
            logits = call()
            k = {"own loss, logits[:, :-1] vs ids[:, 1:]": 1, "own loss, unshifted": 0,
                 "own loss, shifted by two": 2}[how]
            target = _shift(ids, k)[:, :t - 1] if k == 1 else _shift(ids, k)
            target[~keep[:, :target.shape[1]]] = -100
            scored_logits = logits[:, :target.shape[1]]
            loss = F.cross_entropy(scored_logits.reshape(-1, vocab), target.reshape(-1),
                                   ignore_index=-100)
        if bool((target != -100).any()):
            loss.backward()
    scored = target != -100

    def agrees(k: int) -> bool:  # every scored target is the token k places ahead
        n = target.shape[1]
        ahead = _shift(ids, k)[:, :n]
        return bool((target[scored] == ahead[scored]).all())

    named = (int(scored.sum()) >= MIN_POSITIONS and not agrees(1) and agrees(2)
             and not also_next)
    text = w.summary(checks=False)
    said = "each position's loss is scored against" in text
    assert said == named, (how, b, t, vocab, text)
    if said:
        assert "two places ahead" in text and f"on all {int(scored.sum())} scored" in text


def test_the_model_and_its_tensors_are_left_as_they_were():
    model = TinyLM(20)
    ids = torch.randint(0, 20, (2, 9))
    before = ids.clone()
    with gradarg.watch(model) as w:
        model(ids, labels=_shift(ids, 1)).backward()
    assert torch.equal(ids, before)
    assert not model._forward_pre_hooks and not model._forward_hooks
    assert "two places ahead" in w.summary(checks=False)
