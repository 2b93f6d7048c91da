"""Blind cases, third set: gradarg on real models at ordinary sizes, written before any was run.

Written from the public docstrings (``help()`` on ``gradarg.__all__``, ``gradarg.sparse.__all__``,
``gradarg.plot`` and the methods of the objects they return), the pages under ``docs/`` and
torch's own tools (``torch.func.jacrev`` / ``jacfwd`` / ``hessian`` / ``vmap``,
``torch.autograd.functional.jacobian``, ``torch.autograd.gradcheck``), without reading
``src/gradarg``, the earlier case files' bodies or any results.  No gradarg function was called
while writing them; every torch-side oracle was run with torch alone.

Unlike the first two sets (small edge inputs), these try gradarg as a practitioner would:
``transformers`` models built offline from small configs (GPT-2, BERT), ``nn.TransformerEncoderLayer``,
``nn.LSTM`` / ``nn.GRU``, a CNN with ``BatchNorm2d`` / ``MaxPool2d`` / ``Dropout``,
``nn.Embedding`` (``padding_idx``, ``sparse=True``), ``nn.MultiheadAttention``, LayerNorm /
GroupNorm; layers of 10^4-10^5 entries and Jacobians of a few hundred to a few thousand rows and
columns; calls after the user's own ``backward()``; derivatives used under ``torch.func``;
custom ``autograd.Function``s of real layers, right and with planted bugs (labelled by
``torch.autograd.gradcheck`` in float64); real training steps watched; sparse Jacobians and
Hessians of real-shaped functions.  Models are built lazily, inside the calls.

The format is ``casekit``'s:

* ``E(...)``: the oracle is a refusal, a ``TypeError`` / ``ValueError`` whose message names one
  of ``keys`` (the argument's name, or the word the docstring uses).
* ``P(...)``: the call returns ``r`` and ``pred`` must hold (``W``: the warnings the call
  issued).  ``either=True``: a clear refusal is acceptable too (the documentation leaves the
  input open).  Exceptions the docstrings name that are neither ``TypeError`` nor
  ``ValueError`` (``KeyError``, ``RuntimeError``, ``CertificateError``) are caught by
  ``catch`` and checked by a ``P`` predicate.

Before any run, every call was run once with ``ga`` replaced by a torch-only stand-in of
what the documentation promises (kept outside the repository: ``jacrev`` / ``jacfwd`` /
``hessian`` / central differences for the derivatives, hooks for the watch), which checked
that the torch parts of each call run and that each predicate holds on a documented result.
The real gradarg was never called.

Tolerances follow the dtype: ``near(a, b, rtol)`` is the entry rule of ``check_backward``'s
Notes, ``|a - b| <= rtol * (|b| + max |b|)``: float64 1e-10 (1e-12 where the computation is
the same product), float32 1e-5, finite differences 1e-6; norms of the watch 1e-5 relative.

Groups (cases): models 22, sizes 16, after-backward 16, composition 20, checker 28, watch 30,
sparse 21, misuse 12 (165; 16 ``E``, 149 ``P``, 2 with ``either=True``).  Targets: ``jacobian``
57, ``check_backward`` 28, ``watch`` and the methods of its record 25 (with ``draw_modules``),
``trace_backward`` 9, ``SparseJacobian`` 9, ``compare_vjp`` 7, ``why_no_grad`` 7,
``backward_vjp`` 6, ``jacobian_sparsity`` 6, ``SparseHessian`` 5, the rest 1 or 2 each.
Held-out names: ``held_out_blind3.txt`` (``random.Random(5519)``).

Run by hand::

    PYTHONPATH=src OMP_NUM_THREADS=1 python tests/fuzz/run.py --cases cases_blind3 \\
        --out tests/fuzz/results_blind3.json
"""

from __future__ import annotations

import copy
import itertools
import math
import os
import types

os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import torch
import torch.nn.functional as F
from casekit import (  # noqa: F401  (the predicates use them)
    D,
    Registry,
    S,
    close,
    covers,
    dense,
    jr,
    same_pattern,
    taj,
    valid_coloring,
    vjp_ref,
)
from torch import nn
from torch.func import functional_call, grad, hessian, jacfwd, jacrev, jvp, vmap  # noqa: F401

import gradarg as ga

REG = Registry(globals())
CASES = REG.cases
E, P = REG.E, REG.P
NS = types.SimpleNamespace


# ----------------------------------------------------------------------------- small tools
def gen(seed):
    return torch.Generator().manual_seed(seed)


def randn(*shape, seed=0, dtype=D, scale=1.0):
    return torch.randn(*shape, generator=gen(seed), dtype=dtype) * scale


def rand(*shape, seed=0, dtype=D):
    return torch.rand(*shape, generator=gen(seed), dtype=dtype)


def catch(thunk):
    """The value of ``thunk()``, or the exception it raised."""
    try:
        return thunk()
    except Exception as e:  # noqa: BLE001
        return e


def near(a, b, rtol=1e-10):
    """Same structure and shape; ``|a - b| <= rtol * (|b| + max |b|)`` entrywise (NaN fails)."""
    if isinstance(b, dict):
        return (isinstance(a, dict) and set(a) == set(b)
                and all(near(a[k], b[k], rtol) for k in b))
    if isinstance(b, (tuple, list)):
        return (isinstance(a, (tuple, list)) and len(a) == len(b)
                and all(near(x, y, rtol) for x, y in zip(a, b, strict=True)))
    if not isinstance(a, torch.Tensor):
        return False
    a, b = dense(a).detach(), dense(torch.as_tensor(b)).detach()
    if tuple(a.shape) != tuple(b.shape):
        return False
    if a.is_complex() or b.is_complex():
        a, b = a.to(torch.complex128), b.to(torch.complex128)
    else:
        a, b = a.to(D), b.to(D)
    if b.numel() == 0:
        return True
    scale = b.abs().max()
    return bool(((a - b).abs() <= rtol * (b.abs() + scale)).all())


def rel(a, b, tol=1e-5):
    """Two norms (floats) equal within ``tol`` relative; ``None`` only matches ``None``."""
    if a is None or b is None:
        return a is None and b is None
    return math.isfinite(a) and abs(a - b) <= tol * abs(b)


def same(a, b):
    """Exactly equal, recursively (tensors by value and dtype, ``None`` only with ``None``)."""
    if isinstance(a, (list, tuple)):
        return (isinstance(b, (list, tuple)) and len(a) == len(b)
                and all(same(x, y) for x, y in zip(a, b, strict=True)))
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.dtype == b.dtype and torch.equal(a, b)
    return a == b


def seeded(seed, thunk):
    torch.manual_seed(seed)
    return thunk()


def jf(f, x):
    return jacfwd(f)(x)


def offdiag_zero(J, n_out_dims, batch=0):
    """Sample ``batch`` of the output does not depend on any other sample of the input (the
    batch is dimension 0 of the output and of the input)."""
    J = dense(J).select(0, batch)
    return all(not bool((J.select(n_out_dims - 1, o) != 0).any())
               for o in range(J.shape[n_out_dims - 1]) if o != batch)


def cross_nonzero(J, n_out_dims):
    """Sample 0 of the output depends on sample 1 of the input (batch statistics)."""
    return bool((dense(J).select(0, 0).select(n_out_dims - 1, 1) != 0).any())


def causal(J, T):
    """Position i of the output depends on positions j <= i of the input only (and on each)."""
    for i in range(T):
        for j in range(T):
            nz = bool((J[0, i, :, 0, j, :] != 0).any())
            if nz != (j <= i):
                return False
    return True


def ce_grad(logits, y):
    """d mean-cross-entropy / d logits = (softmax - onehot) / N, by hand."""
    logits = logits.detach()
    return (torch.softmax(logits, -1) - F.one_hot(y, logits.shape[-1]).to(logits.dtype)) / len(y)


def wrong_sizes(r):
    """The sizes (n_entries) of the wrong (output, input) blocks of a BackwardCheck, sorted."""
    return sorted(p.n_entries for p in r.wrong_pairs)


# ----------------------------------------------------------------------------- models
def _hf():
    import transformers

    transformers.logging.set_verbosity_error()
    return transformers


def gpt2(seed=0, dtype=S, attn="eager", train=False, drop=0.0):
    """A 2-layer GPT-2 (n_embd 64, 4 heads, vocabulary 100) from a config, offline."""
    tf = _hf()
    cfg = tf.GPT2Config(n_layer=2, n_embd=64, n_head=4, vocab_size=100, n_positions=32,
                        bos_token_id=0, eos_token_id=0, resid_pdrop=drop, embd_pdrop=drop,
                        attn_pdrop=drop)
    if attn is not None:  # None: the default (sdpa, which has no forward-mode derivative on CPU)
        cfg._attn_implementation = attn
    torch.manual_seed(seed)
    return tf.GPT2LMHeadModel(cfg).to(dtype).train(train)


def gpt2_hidden(dtype=S, attn="eager"):
    m = gpt2(dtype=dtype, attn=attn)
    return lambda t: m.transformer(inputs_embeds=t).last_hidden_state


def gpt2_next_logits(dtype=S, attn="eager"):
    m = gpt2(dtype=dtype, attn=attn)
    return lambda t: m(inputs_embeds=t).logits[0, -1]


def gpt2_logits(dtype=S, attn="eager"):
    m = gpt2(dtype=dtype, attn=attn)
    return lambda t: m(inputs_embeds=t).logits


def emb(t, dtype=S, seed=1, d=64):
    return randn(1, t, d, seed=seed, dtype=dtype)


def ids(b, t, seed=3, vocab=100):
    return torch.randint(0, vocab, (b, t), generator=gen(seed))


def bert(seed=0, dtype=D, attn=None, train=False):
    """A 2-layer BERT (hidden 32, 4 heads, intermediate 64, vocabulary 100), offline."""
    tf = _hf()
    cfg = tf.BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=4, intermediate_size=64, max_position_embeddings=32,
                        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    if attn is not None:
        cfg._attn_implementation = attn
    torch.manual_seed(seed)
    return tf.BertModel(cfg).to(dtype).train(train)


BERT_MASK = torch.tensor([[1, 1, 1, 1, 0, 0]])


def bert_pooler(dtype=D, attn=None):
    b = bert(dtype=dtype, attn=attn)
    return lambda t: b(inputs_embeds=t).pooler_output


def bert_masked(dtype=D):
    b = bert(dtype=dtype)
    return lambda t: b(inputs_embeds=t, attention_mask=BERT_MASK).last_hidden_state[:, :4]


def bert_layer(dtype=D):
    return bert(dtype=dtype).encoder.layer[0]


def enc_layer(dtype=D, d=32, ff=64, seed=0):
    torch.manual_seed(seed)
    return nn.TransformerEncoderLayer(d, 4, ff, dropout=0.0, batch_first=True).to(dtype).eval()


ENC_PAD = torch.tensor([[False, False, False, True, True], [False] * 5])


def enc_padded():
    layer = enc_layer()
    return lambda t: layer(t, src_key_padding_mask=ENC_PAD)


def lstm2(dtype=D):
    torch.manual_seed(0)
    return nn.LSTM(8, 16, num_layers=2, batch_first=True).to(dtype)


def lstm_last(dtype=D):
    lstm = lstm2(dtype)
    return lambda t: lstm(t)[0][:, -1]


def gru_last_one_sample():
    """One unbatched sample (T, 6) -> the GRU's last output (10,)."""
    torch.manual_seed(0)
    gru = nn.GRU(6, 10).double()
    return lambda s: gru(s)[0][-1]


def loop_jac(f, X):
    return torch.stack([jacrev(f)(X[i]) for i in range(X.shape[0])])


def cnn(seed=0, dtype=D, train=False, p=0.0):
    """Conv-BN-ReLU-MaxPool-Conv-ReLU-MaxPool-Flatten-Dropout-Linear on (N, 3, 8, 8); the batch
    norm's running statistics warmed on other data first."""
    torch.manual_seed(seed)
    net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                        nn.MaxPool2d(2), nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(),
                        nn.MaxPool2d(2), nn.Flatten(), nn.Dropout(p), nn.Linear(64, 10))
    net = net.to(dtype)
    with torch.no_grad():
        net.train()
        net(randn(16, 3, 8, 8, seed=99, dtype=dtype))
    return net.train(train)


def nan_images():
    x = randn(2, 3, 8, 8, seed=7)
    x[1, 0, 3, 3] = float("nan")
    return x


def drop_net():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(20, 30), nn.ReLU(), nn.Dropout(0.5),
                         nn.Linear(30, 5)).double().train()


def rows_by_backward(f, x):
    """The Jacobian of f at x from one forward pass and one backward per output (plain torch)."""
    xl = x.detach().clone().requires_grad_()
    y = f(xl)
    rows = [torch.autograd.grad(y.reshape(-1)[i], xl, retain_graph=True)[0]
            for i in range(y.numel())]
    return torch.stack(rows).reshape(*y.shape, *x.shape)


IDS = torch.tensor([[0, 3, 5, 0, 7], [2, 0, 9, 9, 1]])  # 0 is the padding index
W_EMB = randn(12, 4, seed=11)
V_EMB = randn(2, 5, 4, seed=12)


def embed_pad(W):
    return F.embedding(IDS, W, padding_idx=0)


def embed_sparse(W):
    return F.embedding(IDS, W, sparse=True)


def embed_dense(W):
    return F.embedding(IDS, W)


def mha(dtype=D):
    torch.manual_seed(0)
    return nn.MultiheadAttention(16, 4, batch_first=True).to(dtype)


def mha_both():
    m = mha()
    return lambda t: m(t, t, t)


def layernorm_fn(x, w, b):
    return F.layer_norm(x, (16,), w, b)


LN_IN = (randn(3, 16, seed=23), 1 + randn(16, seed=24, scale=0.1), randn(16, seed=25))


def mlp(sizes=(16, 32, 32, 4), dtype=S, seed=0, act=nn.ReLU):
    torch.manual_seed(seed)
    layers = []
    for i, (a, b) in enumerate(itertools.pairwise(sizes)):
        layers.append(nn.Linear(a, b))
        if i < len(sizes) - 2:
            layers.append(act())
    return nn.Sequential(*layers).to(dtype)


def tanh_mlp(sizes, seed=0, dtype=D):
    return mlp(sizes, dtype=dtype, seed=seed, act=nn.Tanh)


# ============================================================================= models
G = "models"

P("mo_gpt2_hidden_jacobian", "jacobian",
  "ga.jacobian(gpt2_hidden(), emb(6))",
  "near(r, jr(gpt2_hidden(), emb(6)), 1e-5)",
  "torch.func.jacrev of the same GPT-2 (eager attention) hidden states w.r.t. inputs_embeds, "
  "(1, 6, 64, 1, 6, 64), float32 within 1e-5 of the largest entry", group=G)
P("mo_gpt2_hidden_causal", "jacobian",
  "ga.jacobian(gpt2_hidden(), emb(6))",
  "causal(r, 6)",
  "causal attention: position i depends on embeddings j <= i only; the blocks j > i are exact "
  "zeros (masked scores give exact 0 weights; checked on jacrev), the others nonzero", group=G)
P("mo_gpt2_next_token_logits", "jacobian",
  "ga.jacobian(gpt2_next_logits(), emb(8))",
  "r.shape == (100, 1, 8, 64) and near(r, jr(gpt2_next_logits(), emb(8)), 1e-5)",
  "the 100 next-token logits against the 512 embedding entries, = jacrev (float32 1e-5)",
  group=G)
P("mo_gpt2_sdpa_logits_auto", "jacobian",
  "ga.jacobian(gpt2_logits(attn=None), emb(4))",
  "near(r, jr(gpt2_logits(attn=None), emb(4)), 1e-5)",
  "default (sdpa) GPT-2: 400 logits > 256 inputs, so 'auto' leans to forward columns, but "
  "torch has neither a forward-mode derivative nor a double backward for CPU flash attention "
  "(checked); the Jacobian is jacrev's, or a clear refusal", group=G, either=True)
P("mo_gpt2_forward_method", "jacobian",
  "ga.jacobian(gpt2_hidden(), emb(5), method='forward')",
  "near(r, jf(gpt2_hidden(), emb(5)), 1e-5)",
  "forward mode on the eager-attention GPT-2 = torch.func.jacfwd (float32 1e-5)", group=G)
P("mo_bert_pooler", "jacobian",
  "ga.jacobian(bert_pooler(), emb(6, dtype=D, d=32))",
  "r.shape == (1, 32, 1, 6, 32) and near(r, jr(bert_pooler(), emb(6, dtype=D, d=32)), 1e-10)",
  "BERT (default sdpa attention, float64) pooler output against inputs_embeds = jacrev",
  group=G)
P("mo_bert_attention_mask", "jacobian",
  "ga.jacobian(bert_masked(), emb(6, dtype=D, d=32))",
  "near(r, jr(bert_masked(), emb(6, dtype=D, d=32)), 1e-10) and bool((r[..., 4:, :] == 0).all())",
  "attention_mask hides positions 4, 5: the unmasked outputs do not depend on them "
  "(exact zeros in jacrev), = jacrev elsewhere", group=G)
P("mo_encoder_layer_batch", "jacobian",
  "ga.jacobian(enc_layer(), randn(2, 5, 32, seed=2))",
  "near(r, jr(enc_layer(), randn(2, 5, 32, seed=2)), 1e-10) and offdiag_zero(r, 3)",
  "nn.TransformerEncoderLayer (eval, float64), 320 -> 320 = jacrev; samples independent",
  group=G)
P("mo_encoder_layer_padding", "jacobian",
  "ga.jacobian(enc_padded(), randn(2, 5, 32, seed=2))",
  "near(r, jr(enc_padded(), randn(2, 5, 32, seed=2)), 1e-10) "
  "and bool((r[0, :3, :, 0, 3:, :] == 0).all())",
  "src_key_padding_mask hides positions 3, 4 of sample 0: its unpadded outputs do not depend "
  "on them (exact zeros), = jacrev", group=G)
P("mo_lstm_last_step", "jacobian",
  "ga.jacobian(lstm_last(), randn(3, 10, 8, seed=4))",
  "r.shape == (3, 16, 3, 10, 8) and near(r, jr(lstm_last(), randn(3, 10, 8, seed=4)), 1e-10) "
  "and offdiag_zero(r, 2)",
  "2-layer nn.LSTM, last hidden state against the whole sequence = jacrev (float64)", group=G)
P("mo_gru_batch_dim", "jacobian",
  "ga.jacobian(gru_last_one_sample(), randn(5, 7, 6, seed=5), batch_dim=0)",
  "r.shape == (5, 10, 7, 6) and near(r, loop_jac(gru_last_one_sample(), randn(5, 7, 6, seed=5)), 1e-10)",
  "per-sample Jacobians of an unbatched nn.GRU: vmap(jacrev) cannot batch it (checked), so "
  "the oracle is a loop of jacrev per sample; the docs say gradarg loops there too", group=G)
P("mo_lstm_compare_vjp", "compare_vjp",
  "ga.compare_vjp(lstm_last(), randn(3, 10, 8, seed=4), randn(3, 16, seed=6))",
  "r.agree and r.status == 'agree' and near(r.backward, "
  "vjp_ref(lstm_last(), randn(3, 10, 8, seed=4), randn(3, 16, seed=6)), 1e-10)",
  "the LSTM's backward is torch's: it agrees with central differences; backward = v^T J",
  group=G)
P("mo_cnn_eval", "jacobian",
  "ga.jacobian(cnn(), randn(2, 3, 8, 8, seed=7))",
  "near(r, jr(cnn(), randn(2, 3, 8, 8, seed=7)), 1e-10) and offdiag_zero(r, 2)",
  "Conv/BatchNorm(eval)/ReLU/MaxPool/Linear net, float64 = jacrev; samples independent",
  group=G)
P("mo_cnn_nan_pixel_warns", "jacobian",
  "ga.jacobian(cnn(), nan_images())",
  "any(w.startswith('RuntimeWarning') for w in W) and near(r, jr(cnn(), nan_images()), 1e-10)",
  "one NaN pixel in image 1: a RuntimeWarning (docs: x contains NaN); the Jacobian itself is "
  "finite (ReLU and max-pool masks, linear conv and eval batch norm) and = jacrev", group=G)
P("mo_cnn_train_bn_couples", "jacobian",
  "ga.jacobian(cnn(train=True), randn(4, 3, 8, 8, seed=7))",
  "near(r, taj(cnn(train=True), randn(4, 3, 8, 8, seed=7)), 1e-10) and cross_nonzero(r, 2)",
  "batch norm in training normalises with batch statistics: = torch.autograd.functional."
  "jacobian of an identical model (jacrev refuses the running-statistics update), and sample "
  "0's logits depend on sample 1 (the running statistics do not enter)", group=G)
P("mo_dropout_train_reverse", "jacobian",
  "seeded(3, lambda: ga.jacobian(drop_net(), randn(4, 20, seed=8), method='reverse'))",
  "near(r, seeded(3, lambda: rows_by_backward(drop_net(), randn(4, 20, seed=8))), 1e-12)",
  "dropout in training: reverse mode evaluates fn once (docs), so the Jacobian is the one at "
  "the mask that call draws: one forward under the same seed, rows by backward", group=G)
P("mo_embedding_padding_reverse", "jacobian",
  "ga.jacobian(embed_pad, W_EMB, method='reverse')",
  "close(r, jr(embed_pad, W_EMB), 0, 0) and float(r[0, 0].abs().sum()) == 0.0",
  "padding_idx=0: the embedding's backward gives the padding row no gradient, so the rows of "
  "padding tokens are zero (jacrev, exactly)", group=G)
P("mo_embedding_padding_forward", "jacobian",
  "ga.jacobian(embed_pad, W_EMB, method='forward')",
  "close(r, jf(embed_pad, W_EMB), 0, 0) and float(r[0, 0].abs().sum()) == 4.0",
  "method='forward' uses forward-mode formulas ('never' differentiates the backward, docs): "
  "torch's forward rule of embedding ignores padding_idx (jacfwd differs from jacrev: checked)",
  group=G)
P("mo_embedding_sparse_jacobian", "jacobian",
  "ga.jacobian(embed_sparse, W_EMB)",
  "near(dense(r), jr(embed_dense, W_EMB), 0)",
  "nn.Embedding(sparse=True) gives sparse gradients (jacrev and torch.autograd.functional."
  "jacobian fail on them: checked); the Jacobian is that of the dense embedding, or a clear "
  "refusal", group=G, either=True)
P("mo_embedding_sparse_backward_vjp", "backward_vjp",
  "ga.backward_vjp(embed_sparse, W_EMB, V_EMB)",
  "tuple(r.shape) == (12, 4) and near(dense(r), vjp_ref(embed_dense, W_EMB, V_EMB), 1e-12)",
  "x.grad after the backward: the (sparse) gradient of the embedding, = the dense VJP",
  group=G)
P("mo_mha_tuple_outputs", "jacobian",
  "ga.jacobian(mha_both(), randn(1, 6, 16, seed=9))",
  "isinstance(r, tuple) and len(r) == 2 and near(r, taj(mha_both(), randn(1, 6, 16, seed=9)), 1e-10)",
  "two outputs (attention output, averaged weights): a tuple of two blocks, as "
  "torch.autograd.functional.jacobian", group=G)
P("mo_layernorm_tuple_inputs", "jacobian",
  "ga.jacobian(layernorm_fn, LN_IN)",
  "isinstance(r, tuple) and len(r) == 3 and near(r, taj(layernorm_fn, LN_IN), 1e-10)",
  "F.layer_norm w.r.t. (x, weight, bias): three blocks, as torch.autograd.functional.jacobian",
  group=G)


# ============================================================================= sizes
G = "sizes"


def lin256():
    torch.manual_seed(0)
    lin = nn.Linear(256, 256).double()
    return lambda t: torch.tanh(lin(t))


X_W = randn(2, 256, seed=31)


def act_of_weight(W):  # 128 x 256 = 32768 inputs, 256 outputs
    return torch.tanh(X_W @ W.T)


def conv16_32():
    torch.manual_seed(0)
    conv = nn.Conv2d(16, 32, 3, padding=1)
    return lambda t: torch.tanh(conv(t))


X_CONV = randn(1, 16, 6, 6, seed=32)


def conv_of_weight(w):  # 32 x 16 x 3 x 3 = 4608 inputs, 512 outputs
    return torch.tanh(F.conv2d(X_CONV, w))


def mlp3000():
    net = mlp((3000, 64, 200), dtype=S, act=nn.Tanh)
    return net


def outer_wide(x):  # 48 inputs -> 2304 outputs
    return torch.outer(torch.sin(x), x).flatten()


A500 = randn(500, 500, seed=33, scale=500 ** -0.5)


def field500(x):
    return torch.tanh(A500 @ x) * x


def conv1d_300():
    torch.manual_seed(0)
    conv = nn.Conv1d(3, 3, 7, padding=3).double()
    return lambda t: torch.sigmoid(conv(t))


def layernorm512():
    torch.manual_seed(0)
    ln = nn.LayerNorm(512).double()
    with torch.no_grad():
        ln.weight.copy_(1 + randn(512, seed=34, scale=0.1))
        ln.bias.copy_(randn(512, seed=35, scale=0.1))
    return ln


def softmax_rows(t):
    return torch.softmax(t, -1)


def softmax_by_hand(x):
    """J[b, i, b', j] = [b = b'] (s_i [i = j] - s_i s_j)."""
    s = torch.softmax(x, -1)
    B, n = x.shape
    blocks = torch.diag_embed(s) - s[:, :, None] * s[:, None, :]
    J = torch.zeros(B, n, B, n, dtype=x.dtype)
    for b in range(B):
        J[b, :, b, :] = blocks[b]
    return J


def loss300():
    net = tanh_mlp((300, 40, 1))
    return lambda t: net(t).pow(2).sum()


def lstm_cell_step():
    torch.manual_seed(0)
    cell = nn.LSTMCell(16, 32).double()
    return lambda x, h, c: cell(x, (h, c))


CELL_IN = (randn(4, 16, seed=38), randn(4, 32, seed=39), randn(4, 32, seed=40))
Z64 = torch.complex(randn(64, seed=41), randn(64, seed=42))


P("sz_linear256_input", "jacobian",
  "ga.jacobian(lin256(), randn(4, 256, seed=30))",
  "r.shape == (4, 256, 4, 256) and near(r, jr(lin256(), randn(4, 256, seed=30)), 1e-12)",
  "tanh(Linear(256, 256)) on 4 rows: a 1024 x 1024 Jacobian = jacrev (float64)", group=G)
P("sz_linear_weight_32k", "jacobian",
  "ga.jacobian(act_of_weight, randn(128, 256, seed=43, scale=0.06))",
  "r.shape == (2, 128, 128, 256) and near(r, jr(act_of_weight, randn(128, 256, seed=43, scale=0.06)), 1e-12) "
  "and bool((r[:, 0, 1:] == 0).all())",
  "w.r.t. a 128 x 256 weight (32768 inputs): = jacrev; output unit 0 depends on weight row 0 "
  "only (exact zeros)", group=G)
P("sz_conv16_32_float32", "jacobian",
  "ga.jacobian(conv16_32(), randn(1, 16, 8, 8, seed=44, dtype=S))",
  "r.dtype == S and near(r, jr(conv16_32(), randn(1, 16, 8, 8, seed=44, dtype=S)), 1e-5)",
  "Conv2d(16, 32, 3) on 8 x 8: 1024 inputs -> 2048 outputs ('auto' may pick forward), "
  "float32 = jacrev within 1e-5", group=G)
P("sz_conv_weight", "jacobian",
  "ga.jacobian(conv_of_weight, randn(32, 16, 3, 3, seed=45, scale=0.1))",
  "near(r, jr(conv_of_weight, randn(32, 16, 3, 3, seed=45, scale=0.1)), 1e-12) "
  "and bool((r[0, 0, :, :, 1:] == 0).all())",
  "w.r.t. the 4608 weights of Conv2d(16, 32, 3): = jacrev; output channel 0 depends on "
  "filter 0 only", group=G)
P("sz_mlp3000_float32", "jacobian",
  "ga.jacobian(mlp3000(), randn(3000, seed=46, dtype=S))",
  "r.shape == (200, 3000) and near(r, jr(mlp3000(), randn(3000, seed=46, dtype=S)), 1e-5)",
  "3000 -> 64 -> 200 tanh MLP, float32: = jacrev within 1e-5", group=G)
P("sz_wide_output", "jacobian",
  "ga.jacobian(outer_wide, randn(48, seed=47))",
  "r.shape == (2304, 48) and near(r, jf(outer_wide, randn(48, seed=47)), 1e-12)",
  "48 inputs -> 2304 outputs (outer product): = jacfwd", group=G)
P("sz_forward_and_reverse_500", "jacobian",
  "(ga.jacobian(field500, randn(500, seed=48), method='forward'), "
  "ga.jacobian(field500, randn(500, seed=48), method='reverse'))",
  "near(r[0], jf(field500, randn(500, seed=48)), 1e-12) and near(r[1], jr(field500, randn(500, seed=48)), 1e-12)",
  "a 500 x 500 Jacobian by columns (= jacfwd) and by rows (= jacrev)", group=G)
P("sz_finite_difference_mlp", "jacobian",
  "ga.jacobian(tanh_mlp((200, 64, 50)), randn(200, seed=49), method='finite-difference')",
  "r.shape == (50, 200) and near(r, jr(tanh_mlp((200, 64, 50)), randn(200, seed=49)), 1e-6)",
  "central differences on a smooth 200 -> 50 MLP in float64: within 1e-6 of jacrev "
  "(the differences' error is about eps^(2/3))", group=G)
P("sz_vectorize_false", "jacobian",
  "ga.jacobian(conv1d_300(), randn(1, 3, 100, seed=50), vectorize=False)",
  "near(r, jr(conv1d_300(), randn(1, 3, 100, seed=50)), 1e-12)",
  "vectorize=False loops over single products: the same 300 x 300 Jacobian as jacrev", group=G)
P("sz_layernorm512", "jacobian",
  "ga.jacobian(layernorm512(), randn(4, 512, seed=51))",
  "near(r, jr(layernorm512(), randn(4, 512, seed=51)), 1e-10) and offdiag_zero(r, 2)",
  "nn.LayerNorm(512) on 4 rows: a 2048 x 2048 Jacobian = jacrev, rows independent", group=G)
P("sz_softmax_by_hand", "jacobian",
  "ga.jacobian(softmax_rows, randn(8, 256, seed=52))",
  "near(r, softmax_by_hand(randn(8, 256, seed=52)), 1e-12)",
  "row softmax of (8, 256): diag(s) - s s^T per row, by hand", group=G)
P("sz_batch_dim_128", "jacobian",
  "ga.jacobian(tanh_mlp((64, 48, 32)), randn(128, 64, seed=54), batch_dim=0)",
  "r.shape == (128, 32, 64) and near(r, vmap(jacrev(tanh_mlp((64, 48, 32))))(randn(128, 64, seed=54)), 1e-12)",
  "per-sample Jacobians of 128 samples = vmap(jacrev)", group=G)
P("sz_batch_dim_1", "jacobian",
  "ga.jacobian(tanh_mlp((16, 24, 10)), randn(16, 8, seed=55), batch_dim=1)",
  "r.shape == (8, 10, 16) and near(r, vmap(jacrev(tanh_mlp((16, 24, 10))), in_dims=1)(randn(16, 8, seed=55)), 1e-12)",
  "samples along dimension 1: (B, y_sample, x_sample) = vmap(jacrev, in_dims=1)", group=G)
P("sz_hessian_by_create_graph", "jacobian",
  "ga.jacobian(lambda t: ga.jacobian(loss300(), t, create_graph=True), randn(300, seed=56))",
  "near(r, hessian(loss300())(randn(300, seed=56)), 1e-10)",
  "the Jacobian of a create_graph gradient (docs' own recipe) = torch.func.hessian, 300 x 300",
  group=G)
P("sz_lstm_cell_tuples", "jacobian",
  "ga.jacobian(lstm_cell_step(), CELL_IN)",
  "near(r, taj(lstm_cell_step(), CELL_IN), 1e-10)",
  "nn.LSTMCell: inputs (x, h, c), outputs (h', c'): the nested 2 x 3 tuple of blocks of "
  "torch.autograd.functional.jacobian", group=G)
P("sz_fft_complex", "jacobian",
  "ga.jacobian(torch.fft.fft, Z64)",
  "near(r, taj(torch.fft.fft, Z64, vectorize=True), 1e-10)",
  "complex fft of 64 points: conjugate Wirtinger entries, as torch.autograd.functional."
  "jacobian(vectorize=True) (docs)", group=G)


# ============================================================================= after-backward
G = "after-backward"


def n_hooks(model):
    """Hooks on the model's modules and parameters (torch's own dictionaries, read only)."""
    n = 0
    for m in model.modules():
        n += (len(m._forward_hooks) + len(m._forward_pre_hooks) + len(m._backward_hooks)
              + len(m._backward_pre_hooks))
    for p in model.parameters():
        n += len(p._backward_hooks or {}) + len(getattr(p, "_post_accumulate_grad_hooks", None) or {})
    return n


def state(model, *tensors):
    return NS(grads=[None if p.grad is None else p.grad.clone() for p in model.parameters()],
              params=[p.detach().clone() for p in model.parameters()],
              buffers=[b.clone() for b in model.buffers()],
              rng=torch.get_rng_state(), hooks=n_hooks(model),
              tensors=[(t.detach().clone(), None if t.grad is None else t.grad.clone(),
                        t.requires_grad) for t in tensors])


def unchanged(res, *what):
    return all(same(getattr(res.before, k), getattr(res.after, k)) for k in what)


def after_backward(build, op):
    """Build a model, run the user's own loss.backward(), then op(s); the state around op."""
    s = build()
    s.out = s.loss()
    s.out.backward()  # the user's own backward: .grad populated
    before = state(s.model, *s.tensors)
    r = op(s)
    after = state(s.model, *s.tensors)
    return NS(r=r, s=s, before=before, after=after)


def ab_cnn():
    net = cnn()  # eval mode, float64
    x = randn(2, 3, 8, 8, seed=60).requires_grad_()
    y = torch.tensor([1, 7])
    return NS(model=net, x=x, y=y, loss=lambda: F.cross_entropy(net(x), y), tensors=[x])


def ab_mlp(train=False, p=0.0, bn=False):
    torch.manual_seed(0)
    layers = [nn.Linear(12, 24)] + ([nn.BatchNorm1d(24)] if bn else [])
    layers += [nn.Tanh(), nn.Dropout(p), nn.Linear(24, 3)]
    net = nn.Sequential(*layers).double().train(train)
    x = randn(8, 12, seed=61).requires_grad_()
    y = torch.arange(8) % 3
    return NS(model=net, x=x, y=y, loss=lambda: F.cross_entropy(net(x), y), tensors=[x])


def ab_dropout():
    return ab_mlp(train=True, p=0.3)


def ab_bn():
    return ab_mlp(train=True, bn=True)


def two_more_forwards(s):
    """The buffers after two more forward passes of the model on s.x (on a copy)."""
    m = copy.deepcopy(s.model)
    with torch.no_grad():
        m(s.x)
        m(s.x)
    return [b.clone() for b in m.buffers()]


def rng_kept(thunk):
    before = torch.get_rng_state()
    r = thunk()
    return NS(r=r, kept=torch.equal(before, torch.get_rng_state()))


def no_grad_call(thunk):
    with torch.no_grad():
        r = thunk()
        still_off = not torch.is_grad_enabled()
    return NS(r=r, still_off=still_off)


def inference_x():
    with torch.inference_mode():
        return randn(2, 3, 8, 8, seed=62) * 1.0


V_AB = randn(8, 3, seed=63)


class Counting:
    def __init__(self):
        self.forward = 0
        self.grad = 0


def hooked_scn():
    """An MLP training step; the user's own forward hook and parameter hook on it."""
    net = mlp((16, 32, 4))
    c = Counting()
    net[0].register_forward_hook(lambda m, i, o: setattr(c, "forward", c.forward + 1))
    net[2].weight.register_hook(lambda g: setattr(c, "grad", c.grad + 1))
    x, y = randn(8, 16, seed=64, dtype=S), torch.arange(8) % 4
    opt = torch.optim.SGD(net.parameters(), lr=0.1)

    def step():
        opt.zero_grad()
        F.cross_entropy(net(x), y).backward()
        opt.step()

    return NS(model=net, step=step, c=c)


def hooks_survive_watch():
    s = hooked_scn()
    before = n_hooks(s.model)
    with ga.watch(s.model):
        s.step()
    after = n_hooks(s.model)
    seen = (s.c.forward, s.c.grad)
    s.step()  # after the block: the user's hooks still run, once each
    return NS(before=before, after=after, seen=seen, again=(s.c.forward, s.c.grad))


def watched_vs_plain(build, steps=2):
    a, b = build(), build()
    with ga.watch(a.model):
        for _ in range(steps):
            a.step()
    for _ in range(steps):
        b.step()
    return NS(pa=[p.detach().clone() for p in a.model.parameters()],
              pb=[p.detach().clone() for p in b.model.parameters()],
              ga_=[p.grad for p in a.model.parameters()], gb=[p.grad for p in b.model.parameters()])


def band_conv(t):  # (200,) -> (200,), a 5-wide band
    k = torch.tensor([0.5, -1.0, 2.0, -1.0, 0.5], dtype=t.dtype)
    return torch.tanh(F.conv1d(t[None, None], k[None, None], padding=2)[0, 0])


def band(n, w):
    i = torch.arange(n)
    return (i[:, None] - i[None, :]).abs() <= w


P("ab_jacobian_x_untouched", "jacobian",
  "after_backward(ab_cnn, lambda s: ga.jacobian(s.model, s.x))",
  "unchanged(r, 'tensors') and near(r.r, jr(r.s.model, r.s.x.detach()), 1e-10)",
  "x (requires_grad, .grad filled by the user's backward) is never modified: values, .grad, "
  "requires_grad as before; J = jacrev", group=G)
P("ab_jacobian_param_grads_kept", "jacobian",
  "after_backward(ab_cnn, lambda s: ga.jacobian(s.model, s.x.detach()))",
  "unchanged(r, 'grads', 'params', 'buffers')",
  "the model's .grad from the user's backward stays as it was (inferred: a drop-in for "
  "torch.autograd.functional.jacobian, whose rows come from torch.autograd.grad); eval-mode "
  "model, so no buffer moves", group=G)
P("ab_backward_vjp_x_untouched", "backward_vjp",
  "after_backward(ab_mlp, lambda s: ga.backward_vjp(s.model, s.x, V_AB))",
  "unchanged(r, 'tensors') and near(r.r, vjp_ref(r.s.model, r.s.x.detach(), V_AB), 1e-12)",
  "x left untouched (.grad, requires_grad, values: docs); the result is v^T J", group=G)
P("ab_compare_vjp_output_tensor", "compare_vjp",
  "after_backward(ab_mlp, lambda s: ga.compare_vjp(s.model(s.x), s.x, V_AB, "
  "reference=jr(s.model, s.x.detach())))",
  "unchanged(r, 'tensors') and r.r.agree",
  "an output tensor already computed: x's .grad (filled by the user's backward) is restored "
  "after the comparison (docs); the model's backward agrees with its Jacobian", group=G)
P("ab_why_no_grad_after_backward", "why_no_grad",
  "after_backward(ab_mlp, lambda s: ga.why_no_grad(s.out, s.model[0].weight))",
  "r.r.case == 'ok' and unchanged(r, 'grads', 'hooks')",
  "after the user's backward, a parameter that got its one-pass gradient: 'ok'; nothing is "
  "changed (docs: no .grad accumulated, hooks removed)", group=G)
P("ab_why_no_grad_callable_dropout", "why_no_grad",
  "after_backward(ab_dropout, lambda s: ga.why_no_grad(s.loss, s.model[0].weight))",
  "r.r.case == 'random-forward' and unchanged(r, 'rng', 'grads')",
  "a recomputing function over a model with dropout in training: the two calls differ, so "
  "'random-forward'; the random state is left as it was (fork_rng) and .grad untouched",
  group=G)
P("ab_why_no_grad_callable_bn_moves", "why_no_grad",
  "after_backward(ab_bn, lambda s: (two_more_forwards(s), ga.why_no_grad(s.loss, s.model[0].weight)))",
  "same(r.after.buffers, r.r[0])",
  "each of the two calls is an ordinary forward (docs): the batch norm's running statistics "
  "move exactly as after two forward passes", group=G)
P("ab_trace_use_grad_untouched", "trace_backward",
  "after_backward(ab_mlp, lambda s: ga.trace_backward(s.loss(), use_grad=True, "
  "names=dict(s.model.named_parameters())))",
  "unchanged(r, 'grads', 'hooks') and near(r.r.leaves['0.weight'], r.before.grads[0], 1e-12)",
  "use_grad=True: no .grad is touched, no hook left; the recorded gradient of 0.weight is "
  "one pass's, = the user's .grad", group=G)
P("ab_trace_accumulates_as_backward", "trace_backward",
  "after_backward(ab_mlp, lambda s: ga.trace_backward(s.loss(), names=dict(s.model.named_parameters())))",
  "all(near(a, 2 * b, 1e-12) for a, b in zip(r.after.grads, r.before.grads)) and unchanged(r, 'hooks')",
  "without use_grad the caller's tensors end as after a plain backward: the same loss twice "
  "gives twice the .grad; no hooks left (docs)", group=G)
P("ab_check_backward_rng", "check_backward",
  "rng_kept(lambda: ga.check_backward(LinGelu.apply, *lg_in()))",
  "r.kept and r.r.status == 'agree'",
  "the random probes use their own seed: the caller's generator is not touched (docs); the "
  "right fused linear+gelu agrees", group=G)
P("ab_watch_user_hooks_survive", "watch",
  "hooks_survive_watch()",
  "r.before == r.after == 2 and r.seen == (1, 1) and r.again == (2, 2)",
  "the user's forward hook and parameter hook: each ran once in the watched step, are still "
  "there after the block (no hook of the watch left behind, docs) and run once more after",
  group=G)
P("ab_watch_transparent_gpt2", "watch",
  "watched_vs_plain(scn_gpt2_sgd)",
  "near(r.pa, r.pb, 1e-6) and near(r.ga_, r.gb, 1e-6)",
  "two watched SGD steps of GPT-2 leave the same parameters and .grad as two plain steps "
  "(the watch records; it does not change the step; SGD, not Adam, so that rounding-level "
  "gradients cannot flip an update's sign)", group=G)
P("ab_sparsity_pattern_rng", "sparsity_pattern",
  "rng_kept(lambda: ga.sparsity_pattern(band_conv, randn(200, seed=65)))",
  "r.kept and same_pattern(r.r, band(200, 2))",
  "the global generator is never advanced (docs); the band of a 5-tap convolution", group=G)
P("ab_sparse_certify_rng", "SparseJacobian",
  "rng_kept(lambda: ga.SparseJacobian(band(200, 2))(band_conv, randn(200, seed=65), certify=2))",
  "r.kept and near(r.r, jr(band_conv, randn(200, seed=65)), 1e-12)",
  "certify's random vectors come from a fresh seed: the global generator is never advanced",
  group=G)
P("ab_jacobian_under_no_grad", "jacobian",
  "no_grad_call(lambda: ga.jacobian(cnn(), randn(2, 3, 8, 8, seed=7)))",
  "r.still_off and near(r.r, jr(cnn(), randn(2, 3, 8, 8, seed=7)), 1e-10)",
  "under torch.no_grad() the Jacobian is still computed (docs) and grad mode stays off", group=G)
P("ab_jacobian_inference_tensor", "jacobian",
  "ga.jacobian(cnn(), inference_x())",
  "near(r, jr(cnn(), inference_x().clone()), 1e-10)",
  "x created under inference_mode is copied (docs): the Jacobian of the eval-mode CNN", group=G)


# ============================================================================= checker
G = "checker"


def _gelu_grad(z):
    cdf = 0.5 * (1.0 + torch.erf(z / math.sqrt(2.0)))
    pdf = torch.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)
    return cdf + z * pdf

class LinGelu(torch.autograd.Function):
    """y = gelu(x @ w.T + b), the fused layer of a transformer MLP; w square (d, d)."""
    @staticmethod
    def forward(ctx, x, w, b):
        z = x @ w.T + b
        ctx.save_for_backward(x, w, z)
        return F.gelu(z)
    @staticmethod
    def backward(ctx, g):
        x, w, z = ctx.saved_tensors
        gz = g * _gelu_grad(z)
        return gz @ w, gz.T @ x, gz.sum(0)

class LinGeluT(LinGelu):      # bug: w transposed in the input gradient
    @staticmethod
    def backward(ctx, g):
        x, w, z = ctx.saved_tensors
        gz = g * _gelu_grad(z)
        return gz @ w.T, gz.T @ x, gz.sum(0)

class LinGeluCdf(LinGelu):    # bug: gelu'(z) taken as Phi(z), the z*phi(z) term missing
    @staticmethod
    def backward(ctx, g):
        x, w, z = ctx.saved_tensors
        gz = g * 0.5 * (1.0 + torch.erf(z / math.sqrt(2.0)))
        return gz @ w, gz.T @ x, gz.sum(0)

class LinGeluMean(LinGelu):   # bug: bias gradient averaged over the batch
    @staticmethod
    def backward(ctx, g):
        x, w, z = ctx.saved_tensors
        gz = g * _gelu_grad(z)
        return gz @ w, gz.T @ x, gz.mean(0)

class LinGeluJvp(torch.autograd.Function):
    """LinGelu with a jvp (forward mode), setup_context style."""
    @staticmethod
    def forward(x, w, b):
        return F.gelu(x @ w.T + b)
    @staticmethod
    def setup_context(ctx, inputs, output):
        x, w, b = inputs
        z = x @ w.T + b
        ctx.save_for_backward(x, w, z)
        ctx.fwd = (x, w, z)
    @staticmethod
    def backward(ctx, g):
        x, w, z = ctx.saved_tensors
        gz = g * _gelu_grad(z)
        return gz @ w, gz.T @ x, gz.sum(0)
    @staticmethod
    def jvp(ctx, dx, dw, db):
        x, w, z = ctx.fwd
        dz = torch.zeros_like(z)
        if dx is not None: dz = dz + dx @ w.T
        if dw is not None: dz = dz + x @ dw.T
        if db is not None: dz = dz + db
        return dz * _gelu_grad(z)

class LayerNormFn(torch.autograd.Function):
    """Layer norm over the last dimension: (x - mean) / sqrt(var + eps) * gamma + beta."""
    @staticmethod
    def forward(ctx, x, gamma, beta):
        mu = x.mean(-1, keepdim=True)
        var = x.var(-1, unbiased=False, keepdim=True)
        rstd = torch.rsqrt(var + 1e-5)
        xhat = (x - mu) * rstd
        ctx.save_for_backward(xhat, rstd, gamma)
        return xhat * gamma + beta
    @staticmethod
    def backward(ctx, g):
        xhat, rstd, gamma = ctx.saved_tensors
        dxhat = g * gamma
        dx = rstd * (dxhat - dxhat.mean(-1, keepdim=True)
                     - xhat * (dxhat * xhat).mean(-1, keepdim=True))
        return dx, (g * xhat).sum(0), g.sum(0)

class LayerNormNoMean(LayerNormFn):   # bug: the mean-subtraction term of dx missing
    @staticmethod
    def backward(ctx, g):
        xhat, rstd, gamma = ctx.saved_tensors
        dxhat = g * gamma
        dx = rstd * (dxhat - xhat * (dxhat * xhat).mean(-1, keepdim=True))
        return dx, (g * xhat).sum(0), g.sum(0)

class LayerNormGammaAxis(LayerNormFn):  # bug: gamma's gradient summed over the wrong axis
    @staticmethod
    def backward(ctx, g):
        xhat, rstd, gamma = ctx.saved_tensors
        dxhat = g * gamma
        dx = rstd * (dxhat - dxhat.mean(-1, keepdim=True)
                     - xhat * (dxhat * xhat).mean(-1, keepdim=True))
        return dx, (g * xhat).sum(1), g.sum(0)

class SoftmaxCE(torch.autograd.Function):
    """Mean cross-entropy of logits (N, C) against integer targets (N,)."""
    @staticmethod
    def forward(ctx, logits, target):
        logp = torch.log_softmax(logits, -1)
        ctx.save_for_backward(logp, target)
        return -logp.gather(1, target[:, None]).mean()
    @staticmethod
    def backward(ctx, g):
        logp, target = ctx.saved_tensors
        onehot = F.one_hot(target, logp.shape[1]).to(logp.dtype)
        return g * (logp.exp() - onehot) / logp.shape[0], None

class SoftmaxCESum(SoftmaxCE):   # bug: the mean's 1/N forgotten (sum reduction)
    @staticmethod
    def backward(ctx, g):
        logp, target = ctx.saved_tensors
        onehot = F.one_hot(target, logp.shape[1]).to(logp.dtype)
        return g * (logp.exp() - onehot), None

class SoftmaxCENoSoftmax(SoftmaxCE):   # bug: the softmax term dropped
    @staticmethod
    def backward(ctx, g):
        logp, target = ctx.saved_tensors
        onehot = F.one_hot(target, logp.shape[1]).to(logp.dtype)
        return -g * onehot / logp.shape[0], None

class SignSTE(torch.autograd.Function):
    """sign(x) forward; hardtanh's derivative backward (a straight-through estimator)."""
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sign(x)
    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * (x.abs() <= 1).to(g.dtype)

class RoundSTE(torch.autograd.Function):
    """4-level quantiser round(4x)/4 with an identity backward."""
    @staticmethod
    def forward(ctx, x):
        return torch.round(4 * x) / 4
    @staticmethod
    def backward(ctx, g):
        return g

class ReluInplace(torch.autograd.Function):
    """relu_ on its input (ctx.mark_dirty), mask from the output."""
    @staticmethod
    def forward(ctx, x):
        x.clamp_(min=0)
        ctx.mark_dirty(x)
        ctx.save_for_backward(x)
        return x
    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * (y > 0).to(g.dtype)

class ReluInplaceNoMask(ReluInplace):   # bug: the mask forgotten
    @staticmethod
    def backward(ctx, g):
        return g.clone()


class LinGeluJvpT(LinGeluJvp):  # bug in the backward only (the jvp is right)
    @staticmethod
    def backward(ctx, g):
        x, w, z = ctx.saved_tensors
        gz = g * _gelu_grad(z)
        return gz @ w.T, gz.T @ x, gz.sum(0)


class LayerNormF16(LayerNormFn):  # float32 layer norm whose backward rounds through float16
    @staticmethod
    def backward(ctx, g):
        xhat, rstd, gamma = ctx.saved_tensors
        dxhat = (g * gamma).half().float()
        dx = rstd * (dxhat - dxhat.mean(-1, keepdim=True)
                     - xhat * (dxhat * xhat).mean(-1, keepdim=True))
        return dx, (g * xhat).sum(0), g.sum(0)


def lg_in(n=5, d=6, dtype=D, seed=70):
    """(x, w, b) of the fused layer, all requiring grad; w square."""
    x = randn(n, d, seed=seed, dtype=dtype)
    w = randn(d, d, seed=seed + 1, dtype=dtype, scale=d ** -0.5)
    b = randn(d, seed=seed + 2, dtype=dtype, scale=0.1)
    return tuple(t.requires_grad_() for t in (x, w, b))


def lg_plain(w, b):
    return lambda t: F.gelu(t @ w.detach().T + b.detach())


def ln_in(n=8, d=8, dtype=D, seed=80):
    x = randn(n, d, seed=seed, dtype=dtype)
    gamma = 1 + randn(d, seed=seed + 1, dtype=dtype, scale=0.2)
    beta = randn(d, seed=seed + 2, dtype=dtype, scale=0.1)
    return tuple(t.requires_grad_() for t in (x, gamma, beta))


def ce_in(n=6, c=5, dtype=D, seed=90):
    logits = randn(n, c, seed=seed, dtype=dtype).requires_grad_()
    target = torch.randint(0, c, (n,), generator=gen(seed + 1))
    return logits, target


X_STE = torch.linspace(-1.9, 1.9, 20, dtype=D).requires_grad_()
X_ROUND = (torch.arange(12, dtype=D) / 6 - 1 + 1 / 12).requires_grad_()  # 4x off the .5 edges
X_RELU = randn(12, seed=95).requires_grad_()


def lg_apply(fn, n=5, d=6, dtype=D):
    _, w, b = lg_in(n, d, dtype)
    return lambda t: fn.apply(t, w.detach(), b.detach())


def ln_module():
    torch.manual_seed(0)
    ln = nn.LayerNorm(16).double()
    with torch.no_grad():
        ln.weight.copy_(1 + randn(16, seed=96, scale=0.2))
        ln.bias.copy_(randn(16, seed=97, scale=0.1))
    return ln


def groupnorm16_f32():
    torch.manual_seed(0)
    g = nn.GroupNorm(4, 16)
    with torch.no_grad():
        g.weight.copy_(1 + randn(16, seed=92, dtype=S, scale=0.2))
        g.bias.copy_(randn(16, seed=93, dtype=S, scale=0.1))
    return g


def linear256_f32():
    torch.manual_seed(0)
    return nn.Linear(256, 256)


# the fused linear + gelu of a transformer MLP (5 x 6 input, square 6 x 6 weight)
P("ck_lingelu_right", "check_backward",
  "ga.check_backward(LinGelu.apply, *lg_in())",
  "bool(r) and r.status == 'agree' and r.wrong_pairs == ()",
  "gradcheck (float64) accepts it: agree", group=G)
P("ck_lingelu_transposed_weight", "check_backward",
  "ga.check_backward(LinGeluT.apply, *lg_in())",
  "not r and r.status == 'wrong' and wrong_sizes(r) == [30 * 30]",
  "gradcheck rejects it; only the input gradient uses w.T for w: the (y, x) block "
  "(30 x 30 entries) is wrong, w's and b's are right", group=G)
P("ck_lingelu_missing_term", "check_backward",
  "ga.check_backward(LinGeluCdf.apply, *lg_in())",
  "not r and r.status == 'wrong' and wrong_sizes(r) == [30 * 6, 30 * 30, 30 * 36]",
  "gelu'(z) taken as Phi(z) (the z phi(z) term missing) scales all three gradients: every "
  "block wrong", group=G)
P("ck_lingelu_mean_bias", "check_backward",
  "ga.check_backward(LinGeluMean.apply, *lg_in())",
  "not r and wrong_sizes(r) == [30 * 6] and r.wrong_pairs[0].pattern == 'factor'",
  "the bias gradient averaged instead of summed over the batch of 5: only b's block, off by a "
  "constant factor 1/5", group=G)
P("ck_lingelu_right_f32_large", "check_backward",
  "ga.check_backward(LinGelu.apply, *lg_in(64, 256, S))",
  "bool(r) and r.status == 'agree'",
  "float32 at a real size (64 x 256 input, 256 x 256 weight): the right backward agrees",
  group=G)
P("ck_lingelu_transposed_f32_large", "check_backward",
  "ga.check_backward(LinGeluT.apply, *lg_in(64, 256, S))",
  "not r and r.status == 'wrong' and wrong_sizes(r) == [(64 * 256) ** 2]",
  "the transposed-weight bug at size in float32: wrong, only the (y, x) block", group=G)
P("ck_lingelu_jvp_right", "check_backward",
  "ga.check_backward(LinGeluJvp.apply, *lg_in())",
  "bool(r) and 'forward' in r.reference.lower()",
  "a Function with a jvp is checked against forward mode (docs: reference names it); agree",
  group=G)
P("ck_lingelu_jvp_buggy_backward", "check_backward",
  "ga.check_backward(LinGeluJvpT.apply, *lg_in())",
  "not r and wrong_sizes(r) == [30 * 30]",
  "a right jvp and a backward with the transposed weight: the (y, x) block is wrong", group=G)
P("ck_lingelu_compare_transposed", "compare_vjp",
  "ga.compare_vjp(lg_apply(LinGeluT), lg_in()[0].detach(), randn(5, 6, seed=73))",
  "not r.agree and r.status == 'DISAGREE'",
  "the transposed weight disagrees with central differences", group=G)
P("ck_lingelu_compare_jacobian_reference", "compare_vjp",
  "ga.compare_vjp(lg_apply(LinGeluT), lg_in()[0].detach(), randn(5, 6, seed=73), "
  "reference=jr(lg_plain(*lg_in()[1:]), lg_in()[0].detach()))",
  "not r.agree and near(r.reference, vjp_ref(lg_plain(*lg_in()[1:]), lg_in()[0].detach(), randn(5, 6, seed=73)), 1e-12)",
  "against the Jacobian of the plain torch expression: disagree; the reference is v^T J", group=G)
# layer norm
P("ck_layernorm_right", "check_backward",
  "ga.check_backward(LayerNormFn.apply, *ln_in())",
  "bool(r) and r.status == 'agree'",
  "the textbook layer-norm backward: gradcheck accepts it", group=G)
P("ck_layernorm_missing_mean", "check_backward",
  "ga.check_backward(LayerNormNoMean.apply, *ln_in())",
  "not r and wrong_sizes(r) == [64 * 64]",
  "the mean-subtraction term of dx missing: only the (y, x) block is wrong", group=G)
P("ck_layernorm_gamma_axis", "check_backward",
  "ga.check_backward(LayerNormGammaAxis.apply, *ln_in())",
  "not r and wrong_sizes(r) == [64 * 8]",
  "gamma's gradient summed over the feature axis instead of the batch (8 x 8 input, shapes "
  "fit): only the (y, gamma) block is wrong", group=G)
P("ck_layernorm_right_f32_large", "check_backward",
  "ga.check_backward(LayerNormFn.apply, *ln_in(64, 512, S))",
  "bool(r) and r.status == 'agree'",
  "float32, 64 rows of 512 features: the right backward agrees", group=G)
P("ck_layernorm_missing_mean_f32_large", "check_backward",
  "ga.check_backward(LayerNormNoMean.apply, *ln_in(64, 512, S))",
  "not r and r.status == 'wrong' and wrong_sizes(r) == [(64 * 512) ** 2]",
  "the missing mean term at size in float32: the (y, x) block is wrong", group=G)
P("ck_layernorm_half_backward", "check_backward",
  "ga.check_backward(LayerNormF16.apply, *ln_in(64, 512, S))",
  "not r",
  "a float32 forward whose backward rounds the upstream gradient through float16: the docs "
  "say such lost precision is caught (gradcheck in float64 is not the label here: the "
  "relative error of the result, about 5e-4, is far above float32's)", group=G)
P("ck_layernorm_module", "check_backward",
  "ga.check_backward(ln_module(), randn(4, 16, seed=98).requires_grad_())",
  "bool(r) and len(r.pairs) == 3",
  "nn.LayerNorm(16): input, weight and bias checked, all three blocks (6144 entries, under "
  "16384: full comparison) agree", group=G)
P("ck_groupnorm_module_f32", "check_backward",
  "ga.check_backward(groupnorm16_f32(), randn(2, 16, 4, 4, seed=94, dtype=S).requires_grad_())",
  "bool(r) and r.status == 'agree'",
  "nn.GroupNorm(4, 16) in float32 with a random affine, input and parameters: torch's "
  "backward agrees", group=G)
# softmax cross-entropy
P("ck_softmax_ce_right", "check_backward",
  "ga.check_backward(SoftmaxCE.apply, *ce_in())",
  "bool(r) and len(r.skipped) == 1",
  "right; the integer targets are passed through and reported in skipped", group=G)
P("ck_softmax_ce_sum_reduction", "check_backward",
  "ga.check_backward(SoftmaxCESum.apply, *ce_in())",
  "not r and r.wrong_pairs[0].pattern == 'factor'",
  "the mean's 1/N forgotten: the gradient is N = 6 times too large, a constant factor", group=G)
P("ck_softmax_ce_compare_sum", "compare_vjp",
  "ga.compare_vjp(lambda t: SoftmaxCESum.apply(t, ce_in()[1]), ce_in()[0].detach(), 1.0)",
  "r.status == 'DISAGREE' and near(r.reference, ce_grad(ce_in()[0], ce_in()[1]), 1e-7)",
  "disagrees; the finite-difference reference is (softmax - onehot) / N", group=G)
P("ck_softmax_ce_f32_large", "check_backward",
  "ga.check_backward(SoftmaxCE.apply, *ce_in(128, 1000, S))",
  "bool(r)",
  "a batch of 128 over 1000 classes in float32: right", group=G)
# straight-through estimators
P("ck_ste_sign_default", "check_backward",
  "ga.check_backward(SignSTE.apply, X_STE)",
  "not r and r.wrong_pairs[0].pattern == 'not-derivative'",
  "sign forward, hardtanh' backward: against the derivative it is a gradient where the "
  "forward is flat", group=G)
P("ck_ste_sign_expected", "check_backward",
  "ga.check_backward(SignSTE.apply, X_STE, expected=lambda g, x: g * (x.abs() <= 1))",
  "bool(r)",
  "checked against its intent, hardtanh's derivative: agree", group=G)
P("ck_ste_sign_expected_identity", "check_backward",
  "ga.check_backward(SignSTE.apply, X_STE, expected=lambda g, x: g)",
  "not r and r.wrong_pairs[0].n_wrong == 10 and "
  "all(abs(float(X_STE[e.input_index[0]])) > 1 for e in r.wrong_pairs[0].worst)",
  "against the identity: wrong at the 10 elements with |x| > 1 (linspace(-1.9, 1.9, 20)), "
  "and only there", group=G)
# in-place relu (ctx.mark_dirty)
P("ck_relu_inplace_right", "check_backward",
  "ga.check_backward(lambda t: ReluInplace.apply(t.clone()), X_RELU)",
  "bool(r)",
  "relu_ on a clone, mask from the saved output: gradcheck accepts it", group=G)
P("ck_relu_inplace_no_mask", "check_backward",
  "ga.check_backward(lambda t: ReluInplaceNoMask.apply(t.clone()), X_RELU)",
  "not r and all(float(X_RELU[e.input_index[0]]) < 0 for e in r.wrong_pairs[0].worst)",
  "the mask forgotten: wrong exactly where x < 0", group=G)
P("ck_linear256_module_f32", "check_backward",
  "ga.check_backward(linear256_f32(), randn(8, 256, seed=99, dtype=S).requires_grad_())",
  "bool(r) and r.status == 'agree'",
  "nn.Linear(256, 256) in float32 with its parameters: torch's backward agrees", group=G)


# ============================================================================= watch
G = "watch"


def _ce_step(net, x, y, opt, loss=None):
    loss = loss or (lambda: F.cross_entropy(net(x), y))

    def step():
        opt.zero_grad()
        loss().backward()
        opt.step()

    return step, loss


def scn_frozen():
    """A 16-32-32-4 ReLU MLP whose first layer is frozen; SGD on the trainable ones."""
    net = mlp((16, 32, 32, 4))
    for p in net[0].parameters():
        p.requires_grad_(False)
    x, y = randn(32, 16, seed=100, dtype=S), torch.arange(32) % 4
    opt = torch.optim.SGD([p for p in net.parameters() if p.requires_grad], lr=0.1)
    step, loss = _ce_step(net, x, y, opt)
    return NS(model=net, step=step, loss=loss)


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(16, 32), nn.ReLU())
        self.head = nn.Linear(32, 4)
        self.aux = nn.Linear(32, 2)

    def forward(self, x):
        h = self.body(x)
        return self.head(h), self.head(h)[:, :2]  # slip: aux never called


def scn_unused():
    torch.manual_seed(0)
    net = TwoHeads()
    x, y = randn(32, 16, seed=101, dtype=S), torch.arange(32) % 4

    def loss():
        a, b = net(x)
        return F.cross_entropy(a, y) + F.cross_entropy(b, y % 2)

    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    step, _ = _ce_step(net, x, y, opt, loss)
    return NS(model=net, step=step, loss=loss)


class Detached(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(16, 32), nn.Tanh())
        self.head = nn.Linear(32, 4)
        self.skip = nn.Linear(16, 4)

    def forward(self, x):
        return self.head(self.body(x).detach()) + self.skip(x)  # body cut from the loss


def scn_detached():
    torch.manual_seed(0)
    net = Detached()
    x, y = randn(32, 16, seed=102, dtype=S), torch.arange(32) % 4
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    step, loss = _ce_step(net, x, y, opt)
    return NS(model=net, step=step, loss=loss)


def scn_nan_input():
    net = mlp((16, 32, 4))
    x, y = randn(32, 16, seed=103, dtype=S), torch.arange(32) % 4
    x[3, 5] = float("nan")
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    step, loss = _ce_step(net, x, y, opt)
    return NS(model=net, step=step, loss=loss)


class Dist(nn.Module):
    def forward(self, h):
        return torch.sqrt((h ** 2).sum(-1))  # sqrt(0) for an all-zero row: 0 * inf = NaN


class SqrtNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 8, bias=False)
        self.dist = Dist()
        self.head = nn.Linear(1, 1)

    def forward(self, x):
        return self.head(self.dist(self.fc(x))[:, None])


def scn_sqrt():
    torch.manual_seed(0)
    net = SqrtNet()
    x = randn(16, 16, seed=104, dtype=S)
    x[0] = 0.0  # fc(0) = 0 exactly (no bias)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)

    def loss():
        return net(x).pow(2).mean()

    step, _ = _ce_step(net, x, None, opt, loss)
    return NS(model=net, step=step, loss=loss)


class BodyHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU())
        self.head = nn.Linear(32, 4)

    def forward(self, x):
        return self.head(self.body(x))


def scn_opt(which):
    torch.manual_seed(0)
    net = BodyHead()
    x, y = randn(32, 16, seed=105, dtype=S), torch.arange(32) % 4
    params = net.head.parameters() if which == "head" else net.parameters()
    opt = torch.optim.SGD(params, lr=0.1)
    step, loss = _ce_step(net, x, y, opt)
    return NS(model=net, step=step, loss=loss)


def scn_opt_head_only():
    return scn_opt("head")


def scn_opt_all():
    return scn_opt("all")


def scn_dead():
    net = mlp((16, 32, 4))
    with torch.no_grad():
        net[0].bias.fill_(-10.0)  # every unit of the ReLU below zero on inputs in [0, 1)
    x, y = rand(32, 16, seed=106, dtype=S), torch.arange(32) % 4
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    step, loss = _ce_step(net, x, y, opt)
    return NS(model=net, step=step, loss=loss)


def scn_gpt2(frozen_wte=False, sgd=False):
    m = gpt2(train=True)
    if frozen_wte:
        m.transformer.wte.weight.requires_grad_(False)  # tied with lm_head
    tok = ids(4, 8, seed=107)
    trainable = [p for p in m.parameters() if p.requires_grad]
    opt = torch.optim.SGD(trainable, lr=0.1) if sgd else torch.optim.AdamW(trainable, lr=1e-3)

    def loss():
        return m(tok, labels=tok).loss

    step, _ = _ce_step(m, None, None, opt, loss)
    return NS(model=m, step=step, loss=loss, tok=tok)


def scn_gpt2_frozen():
    return scn_gpt2(frozen_wte=True)


def scn_gpt2_sgd():
    return scn_gpt2(sgd=True)


def scn_bert():
    b = bert(dtype=S, train=True)
    tok = ids(2, 10, seed=108)
    target = randn(2, 10, 32, seed=109, dtype=S)
    opt = torch.optim.SGD(b.parameters(), lr=0.1)

    def loss():  # a loss of the token states only: the pooler runs, its output is unused
        return F.mse_loss(b(tok).last_hidden_state, target)

    step, _ = _ce_step(b, None, None, opt, loss)
    return NS(model=b, step=step, loss=loss)


class LSTMClassifier(nn.Module):
    def __init__(self, sparse=False):
        super().__init__()
        self.emb = nn.Embedding(50, 16, sparse=sparse)
        self.lstm = nn.LSTM(16, 32, batch_first=True)
        self.out = nn.Linear(32, 3)

    def forward(self, tok):
        return self.out(self.lstm(self.emb(tok))[0][:, -1])


def scn_lstm(sparse=False):
    torch.manual_seed(0)
    net = LSTMClassifier(sparse)
    tok, y = ids(8, 12, seed=110, vocab=50), torch.arange(8) % 3
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    step, loss = _ce_step(net, tok, y, opt)
    return NS(model=net, step=step, loss=loss)


def scn_lstm_sparse():
    return scn_lstm(sparse=True)


def scn_mlp_loop():
    net = mlp((16, 32, 32, 4))
    x, y = randn(32, 16, seed=111, dtype=S), torch.arange(32) % 4
    opt = torch.optim.SGD(net.parameters(), lr=0.05)
    step, loss = _ce_step(net, x, y, opt)
    return NS(model=net, step=step, loss=loss)


def scn_accumulate():
    """The user ran one backward (batch A) before the watch and forgot zero_grad; the watched
    step is a backward on batch B."""
    net = mlp((16, 32, 4))
    xa, xb = randn(16, 16, seed=112, dtype=S), randn(16, 16, seed=113, dtype=S)
    y = torch.arange(16) % 4
    F.cross_entropy(net(xa), y).backward()

    def step():
        F.cross_entropy(net(xb), y).backward()

    return NS(model=net, step=step, xa=xa, xb=xb, y=y)


def accumulate_ref():
    """(norm of batch A's gradient of 0.weight, norm of batch B's alone), plain torch."""
    s = scn_accumulate()
    ga_ = s.model[0].weight.grad.norm().item()
    gb = torch.autograd.grad(F.cross_entropy(s.model(s.xb), s.y), s.model[0].weight)[0]
    return ga_, gb.norm().item()


def watched(build, steps=1, **kw):
    """Run the scenario's step(s) inside ``with ga.watch(model)``; return the watch."""
    s = build()
    with ga.watch(s.model, **kw) as w:
        for _ in range(steps):
            s.step()
    return w


def grad_norm(p):
    if p.grad is None:
        return None
    g = p.grad.coalesce().values() if p.grad.is_sparse else p.grad
    return g.norm().item()


def wref(build, steps=1):
    """Each parameter's gradient norm after the same step(s) without a watch."""
    s = build()
    for _ in range(steps):
        s.step()
    return {n: grad_norm(p) for n, p in s.model.named_parameters()}


def norms_match(w, ref, tol=1e-5):
    return all(rel(w.parameters[n].grad, g, tol) for n, g in ref.items())


def diagnose(build, pick, with_module=False):
    """why_no_grad on the scenario's loss before any backward (the graph is there)."""
    s = build()
    if with_module:
        return ga.why_no_grad(s.loss(), pick(s.model), module=s.model)
    return ga.why_no_grad(s.loss(), pick(s.model))


def traced(build, names=None, **kw):
    s = build()
    loss = s.loss()
    t = ga.trace_backward(loss, names=names(s.model) if names else None, **kw)
    return NS(t=t, s=s)


def trace_cnn():
    net = cnn(dtype=S, train=True)
    x, y = randn(4, 3, 8, 8, seed=114, dtype=S), torch.tensor([0, 3, 9, 3])
    logits = net(x)
    t = ga.trace_backward(F.cross_entropy(logits, y),
                          names={**dict(net.named_parameters()), "logits": logits})
    return NS(t=t, net=net, logits=logits.detach(), y=y)


def cnn_ref_grads():
    net = cnn(dtype=S, train=True)
    x, y = randn(4, 3, 8, 8, seed=114, dtype=S), torch.tensor([0, 3, 9, 3])
    F.cross_entropy(net(x), y).backward()
    return {n: p.grad for n, p in net.named_parameters()}


def trace_inputs_only():
    net = cnn(dtype=S, train=True)
    x, y = randn(4, 3, 8, 8, seed=114, dtype=S), torch.tensor([0, 3, 9, 3])
    ga.trace_backward(F.cross_entropy(net(x), y), inputs=[net[-1].weight])
    return [n for n, p in net.named_parameters() if p.grad is not None]


def gpt2_ref_grads():
    s = scn_gpt2()
    s.loss().backward()
    return {n: p.grad for n, p in s.model.named_parameters()}


def relu_out_named():
    s = scn_dead()
    h = s.model[1](s.model[0](rand(32, 16, seed=106, dtype=S)))
    loss = F.cross_entropy(s.model[2](h), torch.arange(32) % 4)
    return ga.trace_backward(loss, names={"h": h})


# --- frozen first layer
P("wa_frozen_record", "watch",
  "watched(scn_frozen)",
  "r.parameters['0.weight'].requires_grad is False and r.parameters['0.weight'].grad is None "
  "and norms_match(r, wref(scn_frozen))",
  "the frozen layer's parameters got no gradient and are recorded as not requiring grad; the "
  "others' norms equal those of the same step unwatched", group=G)
P("wa_frozen_summary", "GradWatch.summary",
  "watched(scn_frozen).summary()",
  "r.startswith('gradients ok') and '0.weight' in r",
  "docs: frozen parameters are named after the verdict, and 'gradients ok' then speaks of "
  "the trainable ones (every trainable one got a finite nonzero gradient, all held by SGD)",
  group=G)
P("wa_frozen_diagnosis", "why_no_grad",
  "diagnose(scn_frozen, lambda m: m[0].weight)",
  "r.case == 'requires-grad-false'",
  "requires_grad=False", group=G)
# --- a module never called
P("wa_unused_record", "watch",
  "watched(scn_unused)",
  "r.parameters['aux.weight'].grad is None and r.parameters['aux.weight'].module_ran is False "
  "and r.parameters['head.weight'].module_ran is True",
  "aux was never called: no gradient, module_ran False; head ran (twice)", group=G)
P("wa_unused_why", "GradWatch.why_no_grad",
  "watched(scn_unused).why_no_grad('aux.weight')",
  "'never called' in r",
  "docs' example: \"no gradient reached 1.weight: module '1' (Linear) was never called ...\"",
  group=G)
P("wa_unused_diagnosis_module", "why_no_grad",
  "diagnose(scn_unused, lambda m: m.aux.weight, with_module=True)",
  "r.case == 'unused-parameter'",
  "absent from the graph, and with module= given no parameter of aux is in the graph "
  "either: 'unused-parameter' (docs)", group=G)
# --- a detached branch
P("wa_detached_record", "watch",
  "watched(scn_detached)",
  "r.parameters['body.0.weight'].grad is None and r.parameters['body.0.weight'].module_ran is True "
  "and norms_match(r, wref(scn_detached))",
  "body ran but its output was detached: no gradient; head and skip as unwatched", group=G)
P("wa_detached_diagnosis", "why_no_grad",
  "diagnose(scn_detached, lambda m: m.body[0].weight)",
  "r.case == 'not-reachable'",
  "cut by .detach(): not in the loss's graph", group=G)
# --- a NaN in the input
P("wa_nan_input_state", "watch",
  "watched(scn_nan_input)",
  "r.parameters['0.weight'].state == 'nonfinite' and math.isnan(r.rows()[-1]['grad_out'])",
  "one NaN input makes the loss and every gradient NaN: state 'nonfinite'; the gradient at "
  "the last layer's output has a NaN norm", group=G)
# --- NaN made in the backward (sqrt at 0)
P("wa_sqrt_first_nonfinite", "GradWatch.first_nonfinite",
  "watched(scn_sqrt).first_nonfinite()",
  "r is not None and r.name == 'dist'",
  "dist receives a finite gradient and sends NaN (0 * inf at sqrt(0)); head before it is "
  "finite (checked with torch)", group=G)
P("wa_sqrt_diagnosis", "why_no_grad",
  "diagnose(scn_sqrt, lambda m: m.fc.weight)",
  "r.case == 'nonfinite' and 'sqrt' in (r.node or '')",
  "NaN/Inf first appears at the sqrt", group=G)
P("wa_sqrt_trace", "trace_backward",
  "traced(scn_sqrt, use_grad=True).t.first_nonfinite",
  "r is not None and r.grad_fn == 'SqrtBackward0'",
  "the first node that received finite cotangents and sent Inf", group=G)
# --- an optimizer missing some parameters
P("wa_optimizer_missing_params", "GradWatch.summary",
  "(watched(scn_opt_head_only).summary(), watched(scn_opt_all).summary())",
  "r[0] != r[1] and 'body' in r[0]",
  "docs: the summary names parameters no optimizer seen holds (SGD holds only head's)",
  group=G)
# --- dead ReLU
P("wa_dead_relu_first_zero", "GradWatch.first_zero",
  "watched(scn_dead).first_zero()",
  "r is not None and r.kind == 'ReLU'",
  "bias -10: the ReLU receives a nonzero gradient and sends zeros", group=G)
P("wa_dead_relu_units", "GradWatch.layers",
  "watched(scn_dead).layers()",
  "[c.kind for c in r] == ['Linear', 'ReLU', 'Linear'] and r[1].dead_units == (32, 32)",
  "innermost calls in forward order; all 32 units of the ReLU dead for the whole batch", group=G)
# --- GPT-2 training step
P("wa_gpt2_norms", "watch",
  "watched(scn_gpt2)",
  "norms_match(r, wref(scn_gpt2))",
  "every parameter's gradient norm (28 parameters, lm_head tied to wte) equals the unwatched "
  "step's, float32 1e-5", group=G)
P("wa_gpt2_summary_ok", "GradWatch.summary",
  "watched(scn_gpt2).summary()",
  "r.startswith('gradients ok')",
  "a healthy AdamW step of a 2-layer GPT-2: every parameter got a finite nonzero gradient and "
  "the optimizer holds all of them", group=G)
P("wa_gpt2_rows_order", "GradWatch.rows",
  "[row['module'] for row in watched(scn_gpt2).rows()]",
  "r.index('transformer.h.0.attn.c_attn') < r.index('transformer.h.1.attn.c_attn') "
  "< r.index('lm_head')",
  "innermost module calls in forward order", group=G)
P("wa_gpt2_frozen_embeddings", "watch",
  "watched(scn_gpt2_frozen)",
  "r.parameters['transformer.wte.weight'].grad is None and norms_match(r, wref(scn_gpt2_frozen))",
  "wte frozen (and lm_head with it, tied): no gradient; the rest as unwatched", group=G)
P("wa_gpt2_draw", "draw_modules",
  "ga.draw_modules(watched(scn_gpt2)).svg.count('<rect class=\"ga-box\"')",
  "r == 2",
  "one box per direct submodule of the model (transformer, lm_head), as in the docs' example",
  group=G)
# --- BERT: the pooler runs, its output is not in the loss
P("wa_bert_pooler_unused", "watch",
  "watched(scn_bert)",
  "r.parameters['pooler.dense.weight'].grad is None and r.parameters['pooler.dense.weight'].module_ran is True "
  "and norms_match(r, wref(scn_bert))",
  "pooler ran but its output went unused: no gradient; the rest as unwatched", group=G)
P("wa_bert_trace_unreached", "trace_backward",
  "traced(scn_bert, names=lambda m: {'pooler': m.pooler.dense.weight, "
  "'words': m.embeddings.word_embeddings.weight}).t.unreached",
  "'pooler' in r and 'words' not in r",
  "a named tensor not in the traced graph is listed in unreached", group=G)
# --- LSTM classifier, dense and sparse embeddings
P("wa_sparse_embedding", "watch",
  "watched(scn_lstm_sparse)",
  "r.parameters['emb.weight'].sparse is True and norms_match(r, wref(scn_lstm_sparse))",
  "nn.Embedding(sparse=True): the gradient arrives sparse, its norm taken on the coalesced "
  "values", group=G)
# --- several steps, light recording
P("wa_light_steps", "watch",
  "watched(scn_mlp_loop, steps=6, full_steps=2)",
  "norms_match(r, wref(scn_mlp_loop, steps=6)) and all(row['grad_out'] is None for row in r.rows())",
  "after 2 full steps a healthy loop is recorded light: no gradient inside the model, the "
  "parameters' still (the last step's norms)", group=G)
P("wa_full_steps_none", "watch",
  "watched(scn_mlp_loop, steps=6, full_steps=None)",
  "norms_match(r, wref(scn_mlp_loop, steps=6)) and all(row['grad_out'] is not None for row in r.rows())",
  "full_steps=None: every step in full, gradients at every module", group=G)
P("wa_accumulated_held_before", "watch",
  "watched(scn_accumulate).parameters['0.weight']",
  "rel(r.held_before, accumulate_ref()[0]) and rel(r.grad, accumulate_ref()[1])",
  ".grad already held batch A's gradient when batch B's arrived: held_before is its norm, "
  "grad the norm of B's alone", group=G)
# --- trace_backward on training steps
P("wa_trace_cnn_logits", "trace_backward",
  "trace_cnn()",
  "near(r.t.cotangent('logits'), ce_grad(r.logits, r.y), 1e-5) and "
  "all(torch.equal(r.t.leaves[n], p.grad) for n, p in r.net.named_parameters()) and "
  "near([p.grad for p in r.net.parameters()], list(cnn_ref_grads().values()), 1e-5)",
  "the logits receive (softmax - onehot) / N; each leaf's recorded gradient is its .grad, "
  "which is a plain backward's", group=G)
P("wa_trace_inputs_only", "trace_backward",
  "trace_inputs_only()",
  "r == ['9.weight']",
  "inputs=[the last layer's weight]: only it accumulates", group=G)
P("wa_trace_gpt2_leaves", "trace_backward",
  "traced(scn_gpt2, names=lambda m: dict(m.named_parameters())).t.leaves",
  "near([r[n] for n in gpt2_ref_grads()], list(gpt2_ref_grads().values()), 1e-5)",
  "GPT-2's loss traced: every parameter's recorded gradient (the tied wte one summed over "
  "both uses) = a plain backward's", group=G)
P("wa_trace_dead_relu", "trace_backward",
  "relu_out_named().node('h')",
  "bool((r.grad_inputs[0] == 0).all()) and bool((r.arrived != 0).any())",
  "the dead ReLU's node received a nonzero cotangent and sent zeros", group=G)


# ============================================================================= composition
G = "composition"

A32 = randn(32, 32, seed=120, scale=32 ** -0.5)
A16 = randn(16, 16, seed=121, scale=0.25)
X32, X16, V16 = randn(32, seed=122), randn(16, seed=123), randn(16, seed=124)
X16S, V16S = randn(6, 16, seed=125), randn(20, 16, seed=126)
X10 = randn(12, 10, seed=127)
J_C, V_C = randn(3, 4, 5, seed=128), randn(3, 4, seed=129)


def field32(t):
    return torch.tanh(A32 @ t) * t + torch.sin(t)


def field16(t):
    return torch.tanh(A16 @ t) * t + torch.sin(t)


def contractive(jac):
    """grad over the parameters of ||J_x f(x; params)||^2 (a contractive penalty), with the
    Jacobian from ``jac(f, x)``."""
    m = tanh_mlp((10, 20, 5))
    params = {k: v.detach() for k, v in m.named_parameters()}
    x = X10[0]
    return grad(lambda p: jac(lambda t: functional_call(m, p, (t,)), x).pow(2).sum())(params)


def gradient_penalty(vjp):
    """grad over BERT's parameters of (||d sum(pooler) / d embeddings|| - 1)^2 (WGAN-GP style),
    the input gradient from ``vjp(f, x, v)``; eager attention (sdpa has no double backward)."""
    b = bert(dtype=D, attn="eager")
    params = {k: v.detach() for k, v in b.named_parameters()}
    e = emb(6, dtype=D, d=32)
    ones = torch.ones(1, 32, dtype=D)

    def penalty(p):
        g = vjp(lambda t: functional_call(b, p, (), {"inputs_embeds": t}).pooler_output, e, ones)
        return (g.norm() - 1) ** 2

    return grad(penalty)(params)


def cg_grad_x(jac):
    xl = X16.clone().requires_grad_()
    return torch.autograd.grad(jac(field16, xl).pow(2).sum(), xl)[0]


def cg_params(jac):
    """The user's own backward through a create_graph Jacobian into the model's .grad."""
    m = tanh_mlp((10, 20, 5))
    jac(m, X10[0]).pow(2).sum().backward()
    # the last bias does not enter the Jacobian: .grad None there (or zero) is right
    return {n: torch.zeros_like(p) if p.grad is None else p.grad for n, p in m.named_parameters()}


P("co_grad_of_divergence", "jacobian",
  "grad(lambda t: ga.jacobian(field32, t).trace())(X32)",
  "near(r, grad(lambda t: jacrev(field32)(t).trace())(X32), 1e-10)",
  "torch.func.grad of the divergence (trace of the Jacobian) = the same with jacrev", group=G)
P("co_jacrev_of_jacobian", "jacobian",
  "jacrev(lambda t: ga.jacobian(field16, t))(X16)",
  "near(r, jacrev(jacrev(field16))(X16), 1e-10)",
  "jacrev around jacobian: the second derivative = jacrev(jacrev)", group=G)
P("co_hessian_of_jacobian", "jacobian",
  "hessian(lambda t: ga.jacobian(field16, t).sum())(X16)",
  "near(r, hessian(lambda t: jacrev(field16)(t).sum())(X16), 1e-10)",
  "a third derivative: torch.func.hessian of a function of the Jacobian", group=G)
P("co_hessian_of_backward_vjp", "backward_vjp",
  "hessian(lambda t: ga.backward_vjp(field16, t, V16).pow(2).sum())(X16)",
  "near(r, hessian(lambda t: vjp_ref(field16, t, V16).pow(2).sum())(X16), 1e-10)",
  "backward_vjp composes (docs): hessian of a function of v^T J", group=G)
P("co_vmap_jacobian_mlp", "jacobian",
  "(lambda m: vmap(lambda t: ga.jacobian(m, t))(X10))(tanh_mlp((10, 20, 5)))",
  "near(r, vmap(jacrev(tanh_mlp((10, 20, 5))))(X10), 1e-12)",
  "vmap over samples of jacobian of an nn.Module = vmap(jacrev)", group=G)
P("co_vmap_backward_vjp_over_v", "backward_vjp",
  "vmap(lambda v: ga.backward_vjp(field16, X16, v))(V16S)",
  "near(r, vmap(lambda v: vjp_ref(field16, X16, v))(V16S), 1e-12)",
  "batched over 20 upstream gradients: 20 rows v^T J", group=G)
P("co_contractive_penalty", "jacobian",
  "contractive(ga.jacobian)",
  "near(r, contractive(lambda f, x: jacrev(f)(x)), 1e-10)",
  "grad over a module's parameters (functional_call) of ||J||^2, J by jacobian (docs name this "
  "use) = the same with jacrev", group=G)
P("co_bert_gradient_penalty", "backward_vjp",
  "gradient_penalty(ga.backward_vjp)",
  "near(r, gradient_penalty(vjp_ref), 1e-10)",
  "a gradient penalty on a real model: grad over BERT's parameters of a function of the "
  "input gradient = the same with torch.func.vjp", group=G)
P("co_create_graph_autograd_x", "jacobian",
  "cg_grad_x(lambda f, t: ga.jacobian(f, t, create_graph=True))",
  "near(r, grad(lambda t: jacrev(field16)(t).pow(2).sum())(X16), 1e-10)",
  "plain autograd: create_graph=True makes the Jacobian differentiable towards x (docs)", group=G)
P("co_create_graph_params", "jacobian",
  "cg_params(lambda f, t: ga.jacobian(f, t, create_graph=True))",
  "near(r, contractive(lambda f, x: jacrev(f)(x)), 1e-10)",
  "create_graph=True towards the parameters the module captures: backward of ||J||^2 fills "
  "their .grad with the contractive penalty's gradient", group=G)
P("co_contract_grad_v", "contract",
  "grad(lambda v: ga.contract(v, J_C).pow(2).sum())(V_C)",
  "near(r, grad(lambda v: torch.tensordot(v, J_C, dims=2).pow(2).sum())(V_C), 1e-12)",
  "contract is tracked by the transforms (docs): grad in v", group=G)
P("co_vmap_finite_difference", "jacobian",
  "vmap(lambda t: ga.jacobian(field16, t, method='finite-difference'))(X16S)",
  "near(r, vmap(jacrev(field16))(X16S), 1e-6)",
  "central differences evaluated on the batched inputs themselves (docs): within 1e-6", group=G)
P("co_jvp_of_jacobian", "jacobian",
  "jvp(lambda t: ga.jacobian(field16, t), (X16,), (V16,))[1]",
  "near(r, jvp(jacrev(field16), (X16,), (V16,))[1], 1e-10)",
  "torch.func.jvp through jacobian: the directional derivative of J", group=G)
P("co_grad_of_forward_jacobian", "jacobian",
  "grad(lambda t: ga.jacobian(field16, t, method='forward').pow(2).sum())(X16)",
  "near(r, grad(lambda t: jacfwd(field16)(t).pow(2).sum())(X16), 1e-10)",
  "forward-mode columns inside grad = the same with jacfwd", group=G)
P("co_vmap_encoder_layer", "jacobian",
  "(lambda m: vmap(lambda t: ga.jacobian(m, t))(randn(3, 5, 16, seed=130)))(enc_layer(d=16, ff=32))",
  "near(r, vmap(jacrev(enc_layer(d=16, ff=32)))(randn(3, 5, 16, seed=130)), 1e-10)",
  "per-sample Jacobians of nn.TransformerEncoderLayer under vmap = vmap(jacrev)", group=G)
E("co_compare_vjp_in_grad", "compare_vjp",
  "grad(lambda t: ga.compare_vjp(field16, t, V16).backward.sum())(X16)",
  ("grad", "transform"), group=G,
  oracle="a ValueError naming the transform (docs: compare_vjp does not compose)")
E("co_sparse_call_in_vmap", "SparseJacobian",
  "(lambda sj: vmap(lambda t: sj(band_conv, t).to_dense())(randn(3, 200, seed=65)))"
  "(ga.SparseJacobian(band(200, 2)))",
  ("vmap", "transform"), group=G,
  oracle="a ValueError naming the transform (docs)")
E("co_strict_in_grad", "jacobian",
  "grad(lambda t: ga.jacobian(field16, t, strict=True).sum())(X16)",
  ("grad", "transform"), group=G,
  oracle="strict=True inside a transform: a ValueError naming the transform (docs)")
E("co_sparsity_in_jacrev", "jacobian",
  "jacrev(lambda t: ga.jacobian(band_conv, t, sparsity=band(200, 2)).to_dense())(randn(200, seed=65))",
  ("jacrev", "transform"), group=G,
  oracle="sparsity inside a transform: a ValueError naming the transform (docs)")
E("co_sparse_hessian_in_grad", "SparseHessian",
  "(lambda sh: grad(lambda t: sh(energy1d, t).to_dense().sum())(randn(50, seed=131)))"
  "(ga.SparseHessian(band(50, 1)))",
  ("grad", "transform"), group=G,
  oracle="a ValueError naming the transform (docs; torch.func.hessian composes)")


# ============================================================================= sparse
G = "sparse"


def lap_fn(u):
    """2-D 5-point Laplacian with zero boundary, plus a cubic reaction term."""
    up = F.pad(u, (1, 1, 1, 1))
    return up[:-2, 1:-1] + up[2:, 1:-1] + up[1:-1, :-2] + up[1:-1, 2:] - 4 * u + u ** 3


def grid_pattern(s):
    a = torch.arange(s)
    dist = ((a[:, None, None, None] - a[None, None, :, None]).abs()
            + (a[None, :, None, None] - a[None, None, None, :]).abs())
    return dist <= 1


def broken_grid():
    p = grid_pattern(32).clone()
    p[5, 5, 5, 6] = False  # d lap[5, 5] / d u[5, 6] = 1 forgotten
    return p


def u_grid(s=32, dtype=D, seed=132):
    return rand(s, s, seed=seed, dtype=dtype)


def energy2d(u):
    across = torch.log1p((u[1:] - u[:-1]) ** 2).sum()
    along = torch.log1p((u[:, 1:] - u[:, :-1]) ** 2).sum()
    return across + along + (u ** 4).sum() / 4


def energy1d(x):
    return torch.log1p((x[1:] - x[:-1]) ** 2).sum() + (x ** 4).sum() / 4 + torch.cos(x).sum()


def band_energy(x):  # couples neighbours and next neighbours: Hessian half-width 2
    return (torch.cosh(x[1:] - x[:-1]).sum() + torch.sin(x[2:] * x[:-2]).sum()
            + (x ** 4).sum() / 4)


X2000 = rand(2000, seed=133)


def stencil1d(u):
    up = F.pad(u, (1, 1))
    return up[:-2] - 2 * u + up[2:] - torch.exp(u)


def row_block(B, n):
    return torch.eye(B, dtype=torch.bool)[:, None, :, None].expand(B, n, B, n).clone()


X_SM = randn(64, 16, seed=134)


def ar2(x):
    """Residual of a second-order recurrence: y_t = x_t - x_{t-1}^2 / 2 + sin(x_{t-2}) / 4."""
    xm1 = F.pad(x, (1, 0))[:-1]
    xm2 = F.pad(x, (2, 0))[:-2]
    return x - 0.5 * xm1 ** 2 + 0.25 * torch.sin(xm2)


def lower_band(n, w):
    i = torch.arange(n)
    d = i[:, None] - i[None, :]
    return (d >= 0) & (d <= w)


def conv_net2():
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(),
                         nn.Conv2d(4, 2, 3, padding=1)).double()


X_IMG = randn(1, 1, 10, 10, seed=135)


def rf_pattern():
    """Two 3x3 convolutions (zero padding): output pixel (i, j) of every channel reads input
    pixels with |i - k| <= 2 and |j - l| <= 2."""
    a = torch.arange(10)
    near2 = (a[:, None] - a[None, :]).abs() <= 2
    p = near2[:, None, :, None] & near2[None, :, None, :]  # (i, j, k, l)
    return p[None, None, :, :, None, None, :, :].expand(1, 2, 10, 10, 1, 1, 10, 10).clone()


def batch_block():
    return torch.eye(6, dtype=torch.bool)[:, None, :, None].expand(6, 2, 6, 3).clone()


def arrow_fn(u):
    return torch.cat([(u ** 2).sum()[None], u[1:] * u[0] + torch.sin(u[1:])])


def arrow_pattern(n):
    p = torch.eye(n, dtype=torch.bool)
    p[0] = True
    p[:, 0] = True
    return p


def relu_far(u):  # the relu never switches on near 0: a local pattern cannot see it
    return torch.relu(u - 100) + u.roll(1)


def bn_train():
    torch.manual_seed(0)
    return nn.BatchNorm1d(4).double().train()


X_BN = randn(6, 4, seed=136)


def bn_after_one_forward():
    m = bn_train()
    with torch.no_grad():
        m(X_BN)
    return [b.clone() for b in m.buffers()]


def channel_pattern():
    return torch.eye(4, dtype=torch.bool)[None, :, None, :].expand(6, 4, 6, 4).clone()


P("sp_laplace32_jacobian", "SparseJacobian",
  "ga.SparseJacobian(grid_pattern(32).to_sparse(), (32, 32))(lap_fn, u_grid())",
  "r.layout == torch.sparse_coo and tuple(r.shape) == (32, 32, 32, 32) "
  "and near(r, jr(lap_fn, u_grid()), 1e-12)",
  "5-point Laplacian + u^3 on 32 x 32 with its pattern (COO): = the dense jacrev", group=G)
P("sp_laplace32_passes", "SparseJacobian",
  "ga.SparseJacobian(grid_pattern(32), (32, 32))",
  "r.passes == 5 and r.nnz == 4992",
  "5 entries per row and column: the lower bound 5 is met by the lattice colouring the docs "
  "describe; 5 * 1024 - 4 * 32 pattern entries", group=G)
P("sp_laplace32_detected", "jacobian_sparsity",
  "ga.jacobian_sparsity(lap_fn, u_grid())",
  "same_pattern(r, grid_pattern(32))",
  "traced global pattern of pad/slice/pointwise: exactly the 5-point stencil", group=G)
P("sp_laplace32_broken_certify", "SparseJacobian",
  "catch(lambda: ga.SparseJacobian(broken_grid(), (32, 32))(lap_fn, u_grid(), certify=2, "
  "generator=gen(0)))",
  "isinstance(r, ga.CertificateError)",
  "one non-zero of size 1 missing from the pattern: the certificate fails", group=G)
P("sp_stencil1d_csr", "SparseJacobian",
  "ga.SparseJacobian(band(500, 1))(stencil1d, randn(500, seed=137), layout=torch.sparse_csr)",
  "r.layout == torch.sparse_csr and tuple(r.shape) == (500, 500) "
  "and near(r, jr(stencil1d, randn(500, seed=137)), 1e-12)",
  "layout=torch.sparse_csr: the flat m x n matrix in CSR", group=G)
P("sp_grid_coloring", "color_pattern",
  "ga.color_pattern(grid_pattern(32), 'rows', x_shape=(32, 32))",
  "valid_coloring(r, grid_pattern(32).reshape(1024, 1024)) and int(r.max()) + 1 == 5",
  "a proper distance-2 row colouring meeting the lower bound 5 (lattice colouring, docs)",
  group=G)
P("sp_row_softmax", "SparseJacobian",
  "(lambda sj: (sj.passes, sj(softmax_rows, X_SM)))(ga.SparseJacobian(row_block(64, 16), (64, 16)))",
  "r[0] == 16 and near(r[1], jr(softmax_rows, X_SM), 1e-12)",
  "per-row softmax of (64, 16): block-diagonal, 16 passes instead of 1024", group=G)
P("sp_row_softmax_detected", "jacobian_sparsity",
  "ga.jacobian_sparsity(softmax_rows, X_SM)",
  "same_pattern(r, row_block(64, 16))",
  "softmax's rule: each output depends on its row", group=G)
P("sp_row_softmax_kwarg", "jacobian",
  "ga.jacobian(softmax_rows, X_SM, sparsity=row_block(64, 16))",
  "r.layout == torch.sparse_coo and near(r, jr(softmax_rows, X_SM), 1e-12)",
  "jacobian(sparsity=pattern) returns sparse COO = dense jacrev", group=G)
P("sp_recurrence_detected", "jacobian_sparsity",
  "(lambda P_: (P_, ga.SparseJacobian(P_)))(ga.jacobian_sparsity(ar2, X2000))",
  "same_pattern(r[0], lower_band(2000, 2)) and r[1].passes == 3",
  "second-order recurrence residual on 2000 steps: a lower band of width 3, 3 passes", group=G)
P("sp_hessian_grid32", "SparseHessian",
  "ga.SparseHessian(grid_pattern(32), (32, 32))(energy2d, u_grid())",
  "near(r, hessian(energy2d)(u_grid()), 1e-10)",
  "grid energy on 32 x 32 (1024 unknowns): = torch.func.hessian", group=G)
P("sp_hessian_band_star", "SparseHessian",
  "(lambda sh: (sh.passes, sh(band_energy, X2000)))(ga.SparseHessian(band(2000, 2)))",
  "r[0] == 5 and near(r[1], hessian(band_energy)(X2000), 1e-10)",
  "a band of half-width 2: star colouring needs 2*2 + 1 = 5 products (docs); = hessian",
  group=G)
P("sp_hessian_band_acyclic", "SparseHessian",
  "(lambda sh: (sh.passes, sh(band_energy, X2000)))(ga.SparseHessian(band(2000, 2), method='acyclic'))",
  "r[0] == 3 and near(r[1], hessian(band_energy)(X2000), 1e-9)",
  "acyclic colouring of the same band: 2 + 1 = 3 products (docs), entries by substitution",
  group=G)
P("sp_hessian_sparsity_1d", "hessian_sparsity",
  "ga.hessian_sparsity(energy1d, randn(40, seed=138), layout=torch.strided)",
  "same_pattern(r, band(40, 1))",
  "nearest-neighbour energy: log1p and pow mark pairs (i, i+1), cos and x^4 the diagonal",
  group=G)
P("sp_hessian_broken_certify", "SparseHessian",
  "catch(lambda: ga.SparseHessian(band(2000, 1))(band_energy, X2000, certify=2, generator=gen(0)))",
  "isinstance(r, ga.CertificateError)",
  "a tridiagonal pattern for a Hessian of half-width 2: the certificate fails", group=G)
P("sp_cnn_detected", "jacobian_sparsity",
  "ga.jacobian_sparsity(conv_net2(), X_IMG)",
  "same_pattern(r, rf_pattern())",
  "two 3 x 3 convolutions with dense weights: a 5 x 5 receptive field per output pixel",
  group=G)
P("sp_batch_block_diagonal", "jacobian_sparsity",
  "(lambda net, x: (ga.jacobian_sparsity(net, x), ga.SparseJacobian(batch_block(), x.shape)(net, x)))"
  "(tanh_mlp((3, 8, 2)), randn(6, 3, seed=139))",
  "same_pattern(r[0], batch_block()) and near(r[1], jr(tanh_mlp((3, 8, 2)), randn(6, 3, seed=139)), 1e-12)",
  "a network on a batch: block-diagonal pattern, = jacrev", group=G)
P("sp_arrowhead", "SparseJacobian",
  "(lambda sj: (sj.passes, sj(arrow_fn, randn(400, seed=140))))(ga.SparseJacobian(arrow_pattern(400)))",
  "r[0] <= 3 and near(r[1], jr(arrow_fn, randn(400, seed=140)), 1e-12)",
  "a dense row and column: rows or columns alone need 400 colours; the bidirectional split "
  "needs at most 3 passes (the docs' arrowhead took 3)", group=G)
P("sp_contract_coo", "contract",
  "ga.contract(randn(32, 32, seed=141), jr(lap_fn, u_grid()).to_sparse())",
  "near(r, torch.tensordot(randn(32, 32, seed=141), jr(lap_fn, u_grid()), dims=2), 1e-12)",
  "v contracted with a COO Jacobian of shape y.shape + x.shape", group=G)
P("sp_local_pattern_misses", "sparsity_pattern",
  "ga.sparsity_pattern(relu_far, randn(50, seed=142))",
  "same_pattern(r, jr(relu_far, randn(50, seed=142)) != 0)",
  "local pattern (docs): the relu never switches on at the probed points, so only the roll's "
  "entries", group=G)
P("sp_batchnorm_train_detected", "jacobian_sparsity",
  "(lambda net: (ga.jacobian_sparsity(net, X_BN), [b.clone() for b in net.buffers()]))(bn_train())",
  "same_pattern(r[0], channel_pattern()) "
  "and near(r[1], [b.clone() for b in bn_train().buffers()], 1e-12)",
  "batch norm in training: each output depends on its channel across the batch; the running "
  "statistics are left as they were (docs, changed 2026-12-05 with gradarg.core.buffers: "
  "written first as 'the update happens as in one call of fn', the documented behaviour then)",
  group=G)


# ============================================================================= misuse
G = "misuse"

E("mi_jacobian_token_ids", "jacobian",
  "ga.jacobian(lambda t: gpt2()(t).logits, ids(1, 4))",
  ("x", "integer"), group=G)
E("mi_check_backward_nothing_requires_grad", "check_backward",
  "ga.check_backward(LinGelu.apply, *[t.detach() for t in lg_in()])",
  ("requires_grad", "requires grad"), group=G)
E("mi_check_backward_output_for_fn", "check_backward",
  "ga.check_backward(LinGelu.apply(*lg_in()), *lg_in())",
  ("fn",), group=G)
E("mi_compare_vjp_v_shape", "compare_vjp",
  "ga.compare_vjp(lstm_last(), randn(3, 10, 8, seed=4), randn(3, 10, 16, seed=6))",
  ("v", "shape"), group=G)
E("mi_watch_full_steps_zero", "watch",
  "ga.watch(mlp(), full_steps=0)",
  ("full_steps",), group=G)
E("mi_watch_function", "watch",
  "ga.watch(gpt2_hidden())",
  ("model",), group=G)
E("mi_sparse_shape_mismatch", "SparseJacobian",
  "ga.SparseJacobian(grid_pattern(8), (8, 8))(lap_fn, u_grid(6))",
  ("shape", "pattern", "x"), group=G)
E("mi_certify_without_sparsity", "jacobian",
  "ga.jacobian(lap_fn, u_grid(8), certify=2)",
  ("certify",), group=G)
E("mi_trace_logits_without_gradient", "trace_backward",
  "ga.trace_backward(gpt2()(ids(1, 4)).logits)",
  ("gradient",), group=G)
E("mi_backward_vjp_lstm_tuple", "backward_vjp",
  "ga.backward_vjp(lstm2(), randn(3, 10, 8, seed=4), randn(3, 10, 16, seed=6))",
  ("fn", "tuple"), group=G)
E("mi_batch_dim_with_sparsity", "jacobian",
  "ga.jacobian(tanh_mlp((3, 8, 2)), randn(6, 3, seed=139), batch_dim=0, sparsity=batch_block())",
  ("batch_dim", "sparsity"), group=G)
P("mi_watch_why_unknown_parameter", "GradWatch.why_no_grad",
  "catch(lambda: watched(scn_frozen).why_no_grad('nope.weight'))",
  "isinstance(r, KeyError)",
  "KeyError: not a parameter of the watched model (docs)", group=G)
