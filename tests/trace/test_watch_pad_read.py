"""Class: a recurrent module (LSTM, GRU, RNN) run on a right-padded batch without packing, whose
output the loss reads at padding positions (``out[:, -1]``, a mean over every position): the
watch names the module and the padding; packing the batch, reading each sequence at its own
last step, or a mean over its real steps say nothing.

The truth comes from torch: the loss of the padded batch against the same loss computed from
each sequence run alone, unpadded: they differ exactly when the padding reached the loss.
Generated: the module, ``batch_first``, the lengths (some shorter than the longest), how the
output is read, the seed.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

import gradarg

NAMED = "at padding positions"
KINDS = {"LSTM": nn.LSTM, "GRU": nn.GRU, "RNN": nn.RNN}


class Reader(nn.Module):
    def __init__(self, kind, first, how):
        super().__init__()
        self.emb = nn.Embedding(12, 5, padding_idx=0)
        self.rnn = KINDS[kind](5, 6, batch_first=first)
        self.head = nn.Linear(6, 2)
        self.first, self.how = first, how

    def outputs(self, tokens, lengths):
        """(batch, time, hidden) outputs, run as ``how`` says."""
        x = self.emb(tokens if self.first else tokens.t())
        if self.how == "packed":
            packed = pack_padded_sequence(x, lengths, batch_first=self.first,
                                          enforce_sorted=False)
            out, _ = pad_packed_sequence(self.rnn(packed)[0], batch_first=self.first,
                                         total_length=tokens.shape[1])
        else:
            out, _ = self.rnn(x)
        return out if self.first else out.transpose(0, 1)

    def forward(self, tokens, lengths):
        out = self.outputs(tokens, lengths)
        if self.how == "last":
            h = out[:, -1]
        elif self.how == "mean_all":
            h = out.mean(1)
        elif self.how == "mean_real":
            mask = (torch.arange(out.shape[1]) < lengths.unsqueeze(1)).unsqueeze(-1)
            h = (out * mask).sum(1) / lengths.unsqueeze(1)
        else:  # "gather" and "packed": each sequence's own last step
            h = out[torch.arange(out.shape[0]), lengths - 1]
        return self.head(h)


@settings(max_examples=30, deadline=None)
@given(kind=st.sampled_from(sorted(KINDS)), first=st.booleans(),
       how=st.sampled_from(["last", "mean_all", "mean_real", "gather", "packed"]),
       lengths=st.lists(st.integers(1, 6), min_size=2, max_size=4).filter(
           lambda v: min(v) < max(v)),
       seed=st.integers(0, 2**16))
def test_a_loss_reading_padding_positions_is_named(kind, first, how, lengths, seed):
    torch.manual_seed(seed)
    model = Reader(kind, first, how)
    n = torch.tensor(lengths)
    t = max(lengths)
    tokens = torch.randint(1, 12, (len(lengths), t))
    for i, k in enumerate(lengths):
        tokens[i, k:] = 0
    y = torch.randint(0, 2, (len(lengths),))
    with gradarg.watch(model) as w:
        nn.functional.cross_entropy(model(tokens, n), y).backward()
    text = w.summary()
    # the truth: each sequence run alone, unpadded, with the same weights
    with torch.no_grad():
        batch = model(tokens, n)
        alone = torch.cat([model(tokens[i:i + 1, :k], n[i:i + 1])
                           for i, k in enumerate(lengths)])
    padding_reached = not torch.allclose(batch, alone, atol=1e-6, rtol=1e-5)
    assert (NAMED in text) == padding_reached, (how, text)
    if how in ("last", "mean_all"):
        assert padding_reached  # the generated cases cover both sides
    if padding_reached:
        assert "pack_padded_sequence" in text
        assert ("out[:, -1]" in text) == (how == "last")
