"""Blind cases, fourth set: gradarg on real models and ordinary sizes, written before any was run.

Written from the public docstrings (``help()`` on ``gradarg.__all__``, ``gradarg.sparse.__all__``
and the methods of the objects they return), the pages under ``docs/`` and torch's own tools
(``torch.func.jacrev`` / ``jacfwd`` / ``hessian`` / ``vmap`` / ``vjp`` / ``jvp``,
``torch.autograd.functional.jacobian``, ``torch.autograd.gradcheck``), without reading
``src/gradarg``, the earlier case files' bodies (their first 60 lines only) or any results.
No gradarg function was called while writing them; every torch-side oracle was run with torch
alone, and every call was run once with ``gradarg`` replaced by a torch-only stub kept outside
the repository (to check that the torch parts of each call run).

What they try, as a practitioner would: ``transformers`` models built offline from tiny
configs (GPT-2 with and without its LM head and tied weights, BERT, T5's encoder, DistilBERT,
ViT, Whisper's encoder); ``nn.TransformerDecoderLayer``, ``Conv1d`` / ``Conv3d`` /
``ConvTranspose2d``, pooling and ``Upsample``, ``GroupNorm`` / ``InstanceNorm2d``,
``PixelShuffle``, ``Bilinear``, ``EmbeddingBag``, ``Embedding(sparse=True)``, the
``weight_norm`` / ``spectral_norm`` parametrizations, ``torch.utils.checkpoint``, CPU autocast to
bfloat16, complex layers, tuple inputs and outputs; Jacobians of hundreds to a few thousand rows
and columns against ``jacrev`` / ``jacfwd`` / ``torch.autograd.functional.jacobian``; per-sample
Jacobians (``batch_dim``) against ``vmap(jacrev)`` or a loop; calls after the user's own
``backward()``; ``jacobian`` / ``backward_vjp`` under ``torch.func`` transforms; custom
``autograd.Function``s of real operations (attention softmax, tanh-GELU, a convolution through
``unfold``, log-sum-exp, a straight-through quantiser, batch norm in training, a function with
two outputs, an in-place clamp with ``mark_dirty``), right and with planted bugs, labelled by
``torch.autograd.gradcheck`` in float64; watched training steps (micro-batch accumulation with
AdamW, a scheduler and ``clip_grad_norm_``, a frozen GPT-2 backbone, GPT-2's tied embedding, a
NaN from ``log(0)`` behind a masked softmax, a module used twice, ``torch.no_grad`` inside
``forward``, a dead ReLU, sparse embeddings, checkpointing, autocast); and ``gradarg.sparse`` on
1-D / 2-D / 3-D stencils, a graph Laplacian, per-sample block-diagonal functions and Hessians of
sums of pairwise terms.

Format (``casekit``): ``E(...)`` expects a ``TypeError`` / ``ValueError`` naming one of
``keys``; ``P(...)`` evaluates ``pred`` on the result ``r`` (and the warning texts ``W``);
``either=True`` where the docs leave a refusal acceptable.  Exceptions of other kinds the docs
name (``RuntimeError``, ``CertificateError``, ``VectorizationError``, ``UnsupportedOpError``,
``KeyError``) are caught by ``catch`` and checked in a predicate.  Tolerances follow the dtype:
``near(a, b, rtol)`` is the entry rule of ``check_backward``'s Notes,
``|a - b| <= rtol (|b| + max|b|)``: float64 1e-10 (1e-12 where both sides compute the same
products), float32 1e-5, bfloat16 1.6e-2, finite differences 1e-6; watch norms 1e-5 relative.

Groups (cases): models 24, sizes 13, after-backward 14, composition 14, checker 30, watch 24,
sparse 15, misuse 7 (141; 11 ``E``, 130 ``P``, 2 with ``either=True``).  Targets: ``jacobian`` 55,
``check_backward`` 27, ``watch`` and its record 19 (with ``draw_modules`` 20), ``why_no_grad`` 8,
``compare_vjp`` 8, ``SparseJacobian`` 8, ``trace_backward`` 7, ``SparseHessian`` 3, ``backward_vjp``
2, ``jacobian_sparsity`` 2, ``hessian_sparsity`` 1.
Held-out names: ``held_out_blind4.txt`` (``random.Random(6143)``).

Run by hand::

    PYTHONPATH=src OMP_NUM_THREADS=1 python tests/fuzz/run.py --cases cases_blind4 \\
        --out tests/fuzz/results_blind4.json
"""

from __future__ import annotations

import contextlib
import itertools
import math
import os

import torch
import torch.nn.functional as F
from casekit import D, Registry, S, close, covers, dense, jr, same_pattern, taj, tri, vjp_ref  # noqa: F401
from torch import nn
from torch.func import hessian, jacfwd, jacrev, vjp, vmap

import gradarg as ga

REG = Registry(globals())
E, P = REG.E, REG.P
CASES = REG.cases  # what run.py reads


# ----------------------------------------------------------------------------- helpers
def near(a, b, rtol):
    """check_backward's entry rule, |a - b| <= rtol (|b| + max |b|); tuples element-wise."""
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
    scale = b.abs().max() if b.numel() else torch.tensor(0.0, dtype=D)
    return bool(((a - b).abs() <= rtol * (b.abs() + scale) + 1e-300).all())


def rel(a, b, rtol=1e-5):
    """Two norms (floats) equal within rtol, relative."""
    return a is not None and b is not None and math.isclose(float(a), float(b), rel_tol=rtol,
                                                           abs_tol=1e-12)


def catch(f):
    try:
        return f()
    except Exception as e:  # noqa: BLE001
        return e


def gen(seed):
    return torch.Generator().manual_seed(seed)


def rnd(*shape, seed=1, dtype=S, scale=1.0):
    return torch.randn(*shape, generator=gen(seed), dtype=dtype) * scale


def detached(J):
    if isinstance(J, (tuple, list)):
        return type(J)(detached(j) for j in J)
    return J.detach()


def loop_jac(fn, x, dim=0):
    """Per-sample Jacobians by a plain loop of torch.autograd.functional.jacobian."""
    return torch.stack([taj(fn, s) for s in x.unbind(dim)])


def grads_of(model):
    return {n: (None if p.grad is None else p.grad.detach().clone())
            for n, p in model.named_parameters()}


def same_grads(a, b):
    return a.keys() == b.keys() and all(
        (a[k] is None and b[k] is None) or (a[k] is not None and b[k] is not None
                                            and torch.equal(dense(a[k]), dense(b[k])))
        for k in a)


def no_hooks(model):
    for m in model.modules():
        if (m._forward_hooks or m._forward_pre_hooks or m._backward_hooks
                or getattr(m, "_backward_pre_hooks", None)):
            return False
    for p in model.parameters():
        if p._backward_hooks or getattr(p, "_post_accumulate_grad_hooks", None):
            return False
    return True


def pair_of(r, name, index):
    """The PairCheck of input ``name`` (or the ``index``-th distinct input, in order)."""
    by_name = [p for p in r.pairs if p.input == name]
    if by_name:
        return by_name
    order = list(dict.fromkeys(p.input for p in r.pairs))
    return [p for p in r.pairs if index < len(order) and p.input == order[index]]


def pairs_agree(r, name, index):
    ps = pair_of(r, name, index)
    return bool(ps) and all(p.agree for p in ps)


def pairs_wrong(r, name, index):
    ps = pair_of(r, name, index)
    return bool(ps) and any(not p.agree for p in ps)


# ----------------------------------------------------------------------------- models
def hf():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import transformers

    transformers.logging.set_verbosity_error()
    return transformers


def gpt2(seed=0, lm=False, layers=2, dtype=S, attn="eager"):
    T = hf()
    torch.manual_seed(seed)
    cfg = T.GPT2Config(n_embd=32, n_layer=layers, n_head=4, vocab_size=64, n_positions=32,
                       bos_token_id=0, eos_token_id=0, attn_implementation=attn)
    m = (T.GPT2LMHeadModel if lm else T.GPT2Model)(cfg)
    return m.eval().to(dtype)


def bert(seed=0, dtype=S):
    T = hf()
    torch.manual_seed(seed)
    cfg = T.BertConfig(vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                       intermediate_size=64, max_position_embeddings=32, pad_token_id=0,
                       attn_implementation="eager")
    return T.BertModel(cfg).eval().to(dtype)


def t5enc(seed=0, dtype=D):
    T = hf()
    torch.manual_seed(seed)
    cfg = T.T5Config(vocab_size=64, d_model=32, d_kv=8, num_heads=4, d_ff=64, num_layers=2,
                     dropout_rate=0.0, pad_token_id=0, eos_token_id=1, decoder_start_token_id=0,
                     attn_implementation="eager")
    return T.T5EncoderModel(cfg).eval().to(dtype)


def distilbert(seed=0, dtype=S):
    T = hf()
    torch.manual_seed(seed)
    cfg = T.DistilBertConfig(vocab_size=64, dim=32, n_layers=2, n_heads=4, hidden_dim=64,
                             max_position_embeddings=32, pad_token_id=0,
                             attn_implementation="eager")
    return T.DistilBertModel(cfg).eval().to(dtype)


def vit(seed=0, dtype=S):
    T = hf()
    torch.manual_seed(seed)
    cfg = T.ViTConfig(image_size=8, patch_size=4, num_channels=3, hidden_size=32,
                      num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                      attn_implementation="eager")
    return T.ViTModel(cfg).eval().to(dtype)


def whisper_enc(seed=0, dtype=S):
    T = hf()
    from transformers.models.whisper.modeling_whisper import WhisperEncoder

    torch.manual_seed(seed)
    cfg = T.WhisperConfig(num_mel_bins=8, d_model=32, encoder_layers=1,
                          encoder_attention_heads=4, encoder_ffn_dim=64, max_source_positions=8,
                          decoder_layers=1, decoder_attention_heads=4, decoder_ffn_dim=64,
                          vocab_size=64, pad_token_id=0, bos_token_id=0, eos_token_id=0,
                          decoder_start_token_id=1, attn_implementation="eager")
    return WhisperEncoder(cfg).eval().to(dtype)


def seeded(seed, build):
    torch.manual_seed(seed)
    return build()


def gpt2_f(dtype=S):
    m = gpt2(dtype=dtype)
    return lambda e: m(inputs_embeds=e).last_hidden_state


def gpt2_lm_f():
    m = gpt2(lm=True)
    return lambda e: m(inputs_embeds=e).logits


def bert_pool_f():
    m = bert()
    return lambda e: m(inputs_embeds=e).pooler_output


def t5_f():
    m = t5enc()
    return lambda e: m(inputs_embeds=e).last_hidden_state


def distil_two_f():
    m = distilbert()
    mask = torch.tensor([[1, 1, 1, 1, 0, 0]])

    def f(e):
        h = m(inputs_embeds=e, attention_mask=mask).last_hidden_state
        return h[:, 0], h[:, :4].mean(1)
    return f


def distil_mask_f():
    m = distilbert()
    mask = torch.tensor([[1, 1, 1, 1, 0, 0]])
    return lambda e: m(inputs_embeds=e, attention_mask=mask).last_hidden_state


def vit_f():
    m = vit()
    return lambda px: m(pixel_values=px).pooler_output


def whisper_f():
    m = whisper_enc()
    return lambda feats: m(feats).last_hidden_state


def decoder_layer_f():
    layer = seeded(7, lambda: nn.TransformerDecoderLayer(32, 4, 64, dropout=0.0,
                                                         batch_first=True)).eval()
    mask = nn.Transformer.generate_square_subsequent_mask(5)
    return lambda tgt, mem: layer(tgt, mem, tgt_mask=mask)


def conv1d_f():
    net = seeded(8, lambda: nn.Sequential(nn.Conv1d(4, 8, 5, padding=2), nn.GELU(),
                                          nn.Conv1d(8, 4, 3)))
    return net


def conv3d_f():
    return seeded(9, lambda: nn.Sequential(nn.Conv3d(2, 4, 3, padding=1), nn.Tanh()))


def convT_f():
    return seeded(10, lambda: nn.Sequential(nn.ConvTranspose2d(3, 2, 4, stride=2, padding=1),
                                            nn.SiLU()))


def pool_f():
    return nn.Sequential(nn.AvgPool2d(2), nn.Upsample(scale_factor=2, mode="bilinear",
                                                      align_corners=False),
                         nn.AdaptiveAvgPool2d(5))


def norms_f():
    net = seeded(11, lambda: nn.Sequential(nn.GroupNorm(2, 4), nn.InstanceNorm2d(4, affine=True)))
    with torch.no_grad():
        net[1].weight.uniform_(0.5, 1.5)
        net[1].bias.uniform_(-0.5, 0.5)
    return net.double()


def bilinear_f():
    layer = seeded(12, lambda: nn.Bilinear(10, 12, 6))
    return lambda a, b: torch.tanh(layer(a, b))


def weightnorm_f():
    lin = seeded(13, lambda: nn.utils.parametrizations.weight_norm(nn.Linear(40, 30)))
    return lambda t: F.gelu(lin(t))


def spectral_f():
    lin = seeded(14, lambda: nn.utils.parametrizations.spectral_norm(nn.Linear(20, 20)))
    lin.eval()
    return lin


def ckpt_block():
    return seeded(15, lambda: nn.Sequential(nn.Linear(24, 48), nn.GELU(), nn.Linear(48, 24)))


def ckpt_f():
    block = ckpt_block()
    return lambda t: torch.utils.checkpoint.checkpoint(block, t, use_reentrant=False)


def autocast_f():
    lin = seeded(16, lambda: nn.Linear(64, 32))

    def f(t):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return lin(t)
    return f


def complex_f():
    W = rnd(6, 6, seed=17, dtype=torch.complex128) / 3
    return lambda z: torch.tanh(z @ W) * z


def spectral_layer_f():
    w = rnd(9, seed=18, dtype=torch.complex64)
    return lambda t: torch.fft.rfft(torch.tanh(t), dim=-1) * w


def mlp(seed=20, sizes=(64, 256, 64), act=nn.Tanh, dtype=S):
    def build():
        layers = []
        for a, b in itertools.pairwise(sizes):
            layers += [nn.Linear(a, b), act()]
        return nn.Sequential(*layers[:-1])
    return seeded(seed, build).to(dtype)


def tall_f():
    m = mlp(32, (64, 2048))
    return lambda t: F.gelu(m(t))


def scalar_f():
    m = mlp(44, (12, 16, 1), nn.Tanh, D)
    return lambda s: m(s).sum()


def grad_of(jac, f):
    return lambda t: jac(f, t, create_graph=True)


def embbag_f():
    idx = torch.tensor([3, 7, 7, 1, 40, 41, 2, 9, 11, 49, 0, 5])
    offsets = torch.tensor([0, 3, 6, 9])
    return lambda W: F.embedding_bag(idx, W, offsets, mode="mean")


def attn_pair_f(q, k):
    s = q @ k.T / math.sqrt(q.shape[-1])
    return torch.softmax(s, -1), (q * k).sum(-1)


def item_f():
    lin = seeded(21, lambda: nn.Linear(6, 4))

    def f(s):
        h = lin(s)
        return torch.tanh(h) * (2.0 if h.sum().item() > 0 else 0.5)
    return f


def lstm_f():
    lstm = seeded(22, lambda: nn.LSTM(6, 8))
    return lambda s: lstm(s)[0]


def conv_sample_f():
    return seeded(23, lambda: nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.Tanh()))


def gpt2_causal_ok(J):
    J = J.detach()[0, :, :, 0]          # (6, 32, 6, 32)
    return all(bool((J[i, :, j] == 0).all()) for i in range(6) for j in range(i + 1, 6))


def masked_cols_zero(J):
    J = J.detach()[0, :4, :, 0]          # unmasked outputs vs every input position
    return bool((J[:, :, 4:] == 0).all()) and bool((J[:, :, :4] != 0).any())


# ============================================================================ models (24)
P("b4_gpt2_embeds_rev", "jacobian",
  "ga.jacobian(gpt2_f(), rnd(1, 6, 32, seed=2))",
  "near(r, jr(gpt2_f(), rnd(1, 6, 32, seed=2)), 1e-5)",
  "GPT-2 (2 layers, eager attention) hidden states vs inputs_embeds: 192 x 192, jacrev",
  group="models")
P("b4_gpt2_causal_zero", "jacobian",
  "ga.jacobian(gpt2_f(D), rnd(1, 6, 32, seed=3, dtype=D))",
  "gpt2_causal_ok(r) and near(r, jr(gpt2_f(D), rnd(1, 6, 32, seed=3, dtype=D)), 1e-10)",
  "causal mask: position i never depends on a later position j (exact zeros); float64 jacrev",
  group="models")
P("b4_gpt2_f64_forward", "jacobian",
  "ga.jacobian(gpt2_f(D), rnd(1, 5, 32, seed=4, dtype=D), method='forward')",
  "near(r, jacfwd(gpt2_f(D))(rnd(1, 5, 32, seed=4, dtype=D)), 1e-10)",
  "forward mode through eager GPT-2 in float64 equals torch.func.jacfwd", group="models")
P("b4_gpt2_lm_logits_auto", "jacobian",
  "ga.jacobian(gpt2_lm_f(), rnd(1, 4, 32, seed=5))",
  "near(r, jr(gpt2_lm_f(), rnd(1, 4, 32, seed=5)), 1e-5)",
  "GPT-2 LM head (tied wte), 256 logits vs 128 embedding entries (auto may pick forward)",
  group="models")
P("b4_bert_pooler", "jacobian",
  "ga.jacobian(bert_pool_f(), rnd(1, 5, 32, seed=6))",
  "r.shape == (1, 32, 1, 5, 32) and near(r, jr(bert_pool_f(), rnd(1, 5, 32, seed=6)), 1e-5)",
  "BERT pooler output (tanh of CLS) vs inputs_embeds, 32 x 160", group="models")
P("b4_t5_encoder_f64", "jacobian",
  "ga.jacobian(t5_f(), rnd(1, 6, 32, seed=7, dtype=D))",
  "near(r, jr(t5_f(), rnd(1, 6, 32, seed=7, dtype=D)), 1e-10)",
  "T5 encoder (relative position bias, RMS layer norm) in float64 vs jacrev", group="models")
P("b4_distilbert_tuple_out", "jacobian",
  "ga.jacobian(distil_two_f(), rnd(1, 6, 32, seed=8))",
  "isinstance(r, tuple) and len(r) == 2 and "
  "near(r, tuple(jr(distil_two_f(), rnd(1, 6, 32, seed=8))), 1e-5)",
  "a function with two outputs gives a 2-tuple of blocks, as jacrev (CLS and masked mean)",
  group="models")
P("b4_distilbert_mask_zero", "jacobian",
  "ga.jacobian(distil_mask_f(), rnd(1, 6, 32, seed=9))",
  "masked_cols_zero(r) and near(r, jr(distil_mask_f(), rnd(1, 6, 32, seed=9)), 1e-5)",
  "padding positions 4, 5 of the mask: unmasked outputs do not depend on them (exact zeros)",
  group="models")
P("b4_vit_pixels", "jacobian",
  "ga.jacobian(vit_f(), rnd(1, 3, 8, 8, seed=10))",
  "r.shape == (1, 32, 1, 3, 8, 8) and near(r, jr(vit_f(), rnd(1, 3, 8, 8, seed=10)), 1e-5)",
  "ViT (patch conv, CLS pooler) vs pixel values, 32 x 192", group="models")
P("b4_whisper_encoder", "jacobian",
  "ga.jacobian(whisper_f(), rnd(1, 8, 16, seed=11))",
  "r.shape == (1, 8, 32, 1, 8, 16) and near(r, jr(whisper_f(), rnd(1, 8, 16, seed=11)), 1e-5)",
  "Whisper encoder (two convolutions, stride 2, GELU) vs log-mel features: 256 x 128",
  group="models")
P("b4_decoder_layer_tuple_in", "jacobian",
  "ga.jacobian(decoder_layer_f(), (rnd(2, 5, 32, seed=12), rnd(2, 7, 32, seed=13)))",
  "near(r, tuple(jacrev(decoder_layer_f(), argnums=(0, 1))(rnd(2, 5, 32, seed=12), "
  "rnd(2, 7, 32, seed=13))), 1e-5)",
  "TransformerDecoderLayer(tgt, memory), causal tgt mask: one output, two input blocks",
  group="models")
P("b4_conv1d_stack", "jacobian",
  "ga.jacobian(conv1d_f(), rnd(2, 4, 32, seed=14))",
  "r.shape == (2, 4, 30, 2, 4, 32) and near(r, jr(conv1d_f(), rnd(2, 4, 32, seed=14)), 1e-5)",
  "Conv1d-GELU-Conv1d on a batch: 240 x 256", group="models")
P("b4_conv3d_auto", "jacobian",
  "ga.jacobian(conv3d_f(), rnd(1, 2, 6, 6, 6, seed=15))",
  "near(r, jr(conv3d_f(), rnd(1, 2, 6, 6, 6, seed=15)), 1e-5)",
  "Conv3d + tanh: 864 outputs vs 432 inputs (auto may choose forward columns)", group="models")
P("b4_convT2d_reverse", "jacobian",
  "ga.jacobian(convT_f(), rnd(1, 3, 6, 6, seed=16), method='reverse')",
  "near(r, jr(convT_f(), rnd(1, 3, 6, 6, seed=16)), 1e-5)",
  "ConvTranspose2d stride 2 + SiLU, reverse rows: 288 x 108", group="models")
P("b4_pool_upsample", "jacobian",
  "ga.jacobian(pool_f(), rnd(1, 3, 10, 10, seed=17, dtype=D))",
  "close(r, jr(pool_f(), rnd(1, 3, 10, 10, seed=17, dtype=D)), rtol=1e-12, atol=1e-14)",
  "AvgPool2d - bilinear Upsample - AdaptiveAvgPool2d(5): a linear map, float64", group="models")
P("b4_group_instance_norm", "jacobian",
  "ga.jacobian(norms_f(), rnd(2, 4, 5, 5, seed=18, dtype=D))",
  "near(r, jr(norms_f(), rnd(2, 4, 5, 5, seed=18, dtype=D)), 1e-10)",
  "GroupNorm(2, 4) then affine InstanceNorm2d, float64, 200 x 200", group="models")
P("b4_pixelshuffle_perm", "jacobian",
  "ga.jacobian(nn.PixelShuffle(2), rnd(1, 8, 4, 4, seed=19))",
  "torch.equal(r, jr(nn.PixelShuffle(2), rnd(1, 8, 4, 4, seed=19))) and "
  "bool((r.reshape(128, 128).sum(0) == 1).all())",
  "PixelShuffle is a permutation: exact 0/1 entries, one per column", group="models")
P("b4_bilinear_two_inputs", "jacobian",
  "ga.jacobian(bilinear_f(), (rnd(4, 10, seed=20), rnd(4, 12, seed=21)))",
  "near(r, tuple(jacrev(bilinear_f(), argnums=(0, 1))(rnd(4, 10, seed=20), "
  "rnd(4, 12, seed=21))), 1e-5)",
  "nn.Bilinear on two inputs: a tuple of two blocks", group="models")
P("b4_weight_norm", "jacobian",
  "ga.jacobian(weightnorm_f(), rnd(5, 40, seed=22))",
  "near(r, jr(weightnorm_f(), rnd(5, 40, seed=22)), 1e-5)",
  "parametrizations.weight_norm(Linear(40, 30)) + GELU, 150 x 200", group="models")
P("b4_spectral_norm_eval", "jacobian",
  "ga.jacobian(spectral_f(), rnd(6, 20, seed=23))",
  "near(r, taj(spectral_f(), rnd(6, 20, seed=23)), 1e-5)",
  "spectral_norm(Linear) in eval mode (no power iteration): a fixed linear map", group="models")
P("b4_checkpoint_nonreentrant", "jacobian",
  "ga.jacobian(ckpt_f(), rnd(3, 24, seed=24))",
  "near(r, jr(ckpt_block(), rnd(3, 24, seed=24)), 1e-5)",
  "checkpoint(use_reentrant=False) around an MLP block: same Jacobian as the block",
  group="models")
P("b4_autocast_bf16", "jacobian",
  "ga.jacobian(autocast_f(), rnd(4, 64, seed=25))",
  "r.dtype == torch.float32 and r.shape == (4, 32, 4, 64) and "
  "near(r, taj(autocast_f(), rnd(4, 64, seed=25)), 1.6e-2)",
  "CPU autocast to bfloat16 inside fn: the Jacobian comes back in x's dtype (float32), within "
  "bfloat16 rounding of torch's", group="models")
P("b4_complex_holomorphic", "jacobian",
  "ga.jacobian(complex_f(), rnd(3, 6, seed=26, dtype=torch.complex128))",
  "near(r, taj(complex_f(), rnd(3, 6, seed=26, dtype=torch.complex128), vectorize=True), 1e-10)",
  "complex layer tanh(zW)*z: conjugate Wirtinger entries, as autograd.functional.jacobian("
  "vectorize=True)", group="models")
P("b4_rfft_layer_forward", "jacobian",
  "ga.jacobian(spectral_layer_f(), rnd(3, 16, seed=27), method='forward')",
  "r.dtype == torch.complex64 and near(r, taj(spectral_layer_f(), rnd(3, 16, seed=27), "
  "strategy='forward-mode', vectorize=True), 1e-5)",
  "real input, complex output (rfft spectral layer): forward mode gives the complex derivative, "
  "in the output's dtype", group="models")


# ============================================================================= sizes (13)
P("b4_mlp_512_square", "jacobian",
  "ga.jacobian(mlp(), rnd(8, 64, seed=30))",
  "near(r, jr(mlp(), rnd(8, 64, seed=30)), 1e-5)",
  "MLP 64-256-64 (33k weights) on a batch of 8: 512 x 512, jacrev", group="sizes")
P("b4_tall_forward", "jacobian",
  "ga.jacobian(tall_f(), rnd(64, seed=32))",
  "near(r, jacfwd(tall_f())(rnd(64, seed=32)), 1e-5)",
  "64 inputs, 2048 outputs (auto: forward columns), vs jacfwd", group="sizes")
P("b4_fd_f64_mlp", "jacobian",
  "ga.jacobian(mlp(33, (50, 60, 40), nn.Tanh, D), rnd(50, seed=33, dtype=D), "
  "method='finite-difference')",
  "near(r, jr(mlp(33, (50, 60, 40), nn.Tanh, D), rnd(50, seed=33, dtype=D)), 1e-6)",
  "central differences on a float64 MLP: 40 x 50 within 1e-6", group="sizes")
P("b4_batch_dim_mlp", "jacobian",
  "ga.jacobian(mlp(34, (24, 32, 10)), rnd(16, 24, seed=34), batch_dim=0)",
  "r.shape == (16, 10, 24) and near(r, loop_jac(mlp(34, (24, 32, 10)), rnd(16, 24, seed=34)), "
  "1e-5)",
  "per-sample Jacobians of an MLP, 16 samples, vs a loop of jacobians", group="sizes")
P("b4_batch_dim_1", "jacobian",
  "ga.jacobian(mlp(35, (24, 10), nn.Tanh, D), rnd(24, 16, seed=35, dtype=D), batch_dim=1)",
  "r.shape == (16, 10, 24) and near(r, vmap(jacrev(mlp(35, (24, 10), nn.Tanh, D)), "
  "in_dims=1)(rnd(24, 16, seed=35, dtype=D)), 1e-12)",
  "batch_dim=1: samples are columns of x", group="sizes")
P("b4_batch_dim_conv", "jacobian",
  "ga.jacobian(conv_sample_f(), rnd(4, 3, 8, 8, seed=36), batch_dim=0)",
  "r.shape == (4, 4, 8, 8, 3, 8, 8) and near(r, loop_jac(conv_sample_f(), "
  "rnd(4, 3, 8, 8, seed=36)), 1e-5)",
  "per-image Jacobians of an unbatched Conv2d+tanh", group="sizes")
P("b4_batch_dim_lstm", "jacobian",
  "ga.jacobian(lstm_f(), rnd(3, 5, 6, seed=37), batch_dim=0)",
  "r.shape == (3, 5, 8, 5, 6) and near(r, loop_jac(lstm_f(), rnd(3, 5, 6, seed=37)), 1e-5)",
  "unbatched nn.LSTM per sequence (docs: the loop where it cannot batch)", group="sizes")
P("b4_batch_dim_item", "jacobian",
  "ga.jacobian(item_f(), rnd(8, 6, seed=38), batch_dim=0)",
  "near(r, loop_jac(item_f(), rnd(8, 6, seed=38)), 1e-5)",
  "per-sample fn with .item() control flow: loop, right per sample", group="sizes")
P("b4_batch_dim_item_vectorize", "jacobian",
  "catch(lambda: ga.jacobian(item_f(), rnd(8, 6, seed=38), batch_dim=0, vectorize=True))",
  "type(r).__name__ == 'VectorizationError'",
  "vectorize=True where fn cannot be batched: VectorizationError", group="sizes")
P("b4_tuple_in_tuple_out", "jacobian",
  "ga.jacobian(attn_pair_f, (rnd(6, 8, seed=39, dtype=D), rnd(6, 8, seed=40, dtype=D)))",
  "near(r, taj(attn_pair_f, (rnd(6, 8, seed=39, dtype=D), rnd(6, 8, seed=40, dtype=D))), "
  "1e-10)",
  "two inputs, two outputs (attention weights, row dot products): J[k][j] as torch's",
  group="sizes")
P("b4_strategy_dropin", "jacobian",
  "ga.jacobian(mlp(42, (20, 50)), rnd(3, 20, seed=42), False, False, True, 'forward-mode')",
  "near(r, taj(mlp(42, (20, 50)), rnd(3, 20, seed=42), strategy='forward-mode', "
  "vectorize=True), 1e-5)",
  "positional drop-in for torch.autograd.functional.jacobian with strategy='forward-mode'",
  group="sizes")
P("b4_embedding_bag_weight", "jacobian",
  "ga.jacobian(embbag_f(), rnd(50, 16, seed=43))",
  "r.shape == (4, 16, 50, 16) and close(r, jr(embbag_f(), rnd(50, 16, seed=43)), rtol=1e-6, "
  "atol=1e-7)",
  "EmbeddingBag(mean) as a function of its weight (800 inputs): repeated index 7 counts twice",
  group="sizes")
P("b4_create_graph_hessian", "jacobian",
  "ga.jacobian(grad_of(ga.jacobian, scalar_f()), rnd(12, seed=44, dtype=D))",
  "near(r, hessian(scalar_f())(rnd(12, seed=44, dtype=D)), 1e-10)",
  "Jacobian of a create_graph=True gradient of an MLP: its Hessian", group="sizes")


# ===================================================================== after-backward (14)
def clf(seed=50):
    return seeded(seed, lambda: nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.LayerNorm(32),
                                              nn.Linear(32, 5)))


LABELS = torch.tensor([0, 1, 2, 3])


def ab_jacobian():
    model = clf()
    x = rnd(4, 16, seed=51).requires_grad_()
    F.cross_entropy(model(x), LABELS).backward()
    xg, xv = x.grad.clone(), x.detach().clone()
    J = ga.jacobian(model, x)
    return {"J": J, "x_same": torch.equal(x.detach(), xv), "x_grad_same": torch.equal(x.grad, xg),
                "rg": x.requires_grad}


def ab_bvjp():
    model = clf()
    x = rnd(4, 16, seed=52).requires_grad_()
    F.cross_entropy(model(x), LABELS).backward()
    xg, xv = x.grad.clone(), x.detach().clone()
    out = ga.backward_vjp(model, x, rnd(4, 5, seed=53))
    return {"out": out, "x_same": torch.equal(x.detach(), xv),
                "x_grad_same": torch.equal(x.grad, xg), "rg": x.requires_grad}


def gpt2_clf_loss(model, seed=54):
    ids = torch.randint(0, 64, (2, 7), generator=gen(seed))
    h = model(input_ids=ids).last_hidden_state
    return h[..., :5].sum()


def ab_why(kind):
    model = gpt2(seed=55)
    loss = gpt2_clf_loss(model)
    loss.backward(retain_graph=True)
    if kind == "accumulated":
        loss.backward(retain_graph=True)
    before = grads_of(model)
    d = ga.why_no_grad(loss, model.wte.weight)
    return {"d": d, "same": same_grads(before, grads_of(model)), "grad": model.wte.weight.grad.clone()}


def drop_model():
    return seeded(56, lambda: nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Dropout(0.5),
                                            nn.Linear(32, 1))).train()


def ab_why_random():
    model = drop_model()
    x = rnd(8, 16, seed=57)

    def loss_fn():
        return model(x).pow(2).mean()
    loss_fn().backward()
    state = torch.get_rng_state()
    d = ga.why_no_grad(loss_fn, model[0].weight)
    return {"d": d, "rng_same": torch.equal(state, torch.get_rng_state())}


def bn_model():
    return seeded(58, lambda: nn.Sequential(nn.Linear(10, 12), nn.BatchNorm1d(12), nn.ReLU(),
                                            nn.Linear(12, 1))).train()


def ab_why_bn():
    model = bn_model()
    x = rnd(16, 10, seed=59)

    def loss_fn():
        return model(x).pow(2).mean()
    loss_fn().backward()
    d = ga.why_no_grad(loss_fn, model[0].weight)
    return {"d": d, "mean": model[1].running_mean.clone(), "var": model[1].running_var.clone(),
                "n": int(model[1].num_batches_tracked)}


def bn_ref():
    model = bn_model()
    x = rnd(16, 10, seed=59)
    for _ in range(3):                      # the user's forward, then two more
        model(x)
    return {"mean": model[1].running_mean.clone(), "var": model[1].running_var.clone(),
                "n": int(model[1].num_batches_tracked)}


def bag_model():
    return seeded(60, lambda: nn.ModuleDict({"emb": nn.Embedding(100, 16, sparse=True),
                                             "lin": nn.Linear(16, 2)}))


BAG_IDS = torch.tensor([[3, 7, 7, 12], [50, 3, 99, 0], [7, 7, 7, 1]])


def bag_loss(m):
    return m["lin"](m["emb"](BAG_IDS).mean(1)).pow(2).sum()


def ab_why_sparse():
    m = bag_model()
    loss = bag_loss(m)
    loss.backward(retain_graph=True)
    g = m["emb"].weight.grad.clone()
    d = ga.why_no_grad(loss, m["emb"].weight)
    g2 = m["emb"].weight.grad
    return {"d": d, "sparse": g2.is_sparse, "same": torch.equal(g.to_dense(), g2.to_dense())}


class EntropyHead(nn.Module):
    """Entropy of a masked softmax, guarded by where: finite forward, NaN backward."""

    def forward(self, logits, mask):
        p = torch.softmax(logits.masked_fill(mask, float("-inf")), -1)
        return -torch.where(p > 0, p * torch.log(p), torch.zeros_like(p)).sum(-1)


class EntropyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 6)
        self.ent = EntropyHead()

    def forward(self, x, mask):
        return self.ent(self.lin(x), mask)


ENT_MASK = torch.tensor([[False] * 4 + [True] * 2] * 5)


def ent_net():
    return seeded(61, EntropyNet)


def ent_loss(m):
    return m(rnd(5, 8, seed=62), ENT_MASK).mean()


def ab_why_nonfinite():
    m = ent_net()
    loss = ent_loss(m)
    loss.backward()
    return ga.why_no_grad(loss, m.lin.weight)


def ab_trace_accumulates():
    model = clf()
    x = rnd(4, 16, seed=63)
    F.cross_entropy(model(x), LABELS).backward()
    ga.trace_backward(F.cross_entropy(model(x * 2), LABELS))
    return grads_of(model)


def ab_trace_ref():
    model = clf()
    x = rnd(4, 16, seed=63)
    F.cross_entropy(model(x), LABELS).backward()
    F.cross_entropy(model(x * 2), LABELS).backward()
    return grads_of(model)


def ab_trace_use_grad():
    model = clf()
    x = rnd(4, 16, seed=64)
    F.cross_entropy(model(x), LABELS).backward()
    before = grads_of(model)
    loss = F.cross_entropy(model(-x), LABELS)
    t = ga.trace_backward(loss, names={"w0": model[0].weight}, use_grad=True)
    ref = torch.autograd.grad(F.cross_entropy(model(-x), LABELS), model[0].weight)[0]
    return {"t": t, "same": same_grads(before, grads_of(model)), "ref": ref, "hooks": no_hooks(model)}


def ab_compare_tensor():
    model = mlp(65, (6, 10, 4), nn.Tanh, D)
    x = rnd(3, 6, seed=65, dtype=D).requires_grad_()
    model(x).sum().backward()
    xg = x.grad.clone()
    y = model(x)
    J = jr(model, x.detach())
    c = ga.compare_vjp(y, x, rnd(3, 4, seed=66, dtype=D), reference=J)
    return {"c": c, "restored": torch.equal(x.grad, xg)}


def ab_check_rng():
    torch.manual_seed(123)
    state = torch.get_rng_state()
    res = ga.check_backward(GeluTanh.apply, rnd(12, seed=67, dtype=D).requires_grad_())
    return {"res": res, "same": torch.equal(state, torch.get_rng_state())}


def ab_watch_user_hook():
    net = clf()
    calls = []
    h = net[1].register_forward_hook(lambda m, i, o: calls.append(1))
    with ga.watch(net) as w:
        F.cross_entropy(net(rnd(4, 16, seed=68)), LABELS).backward()
    kept = len(net[1]._forward_hooks) == 1 and all(
        not m._forward_hooks for i, m in enumerate(net) if i != 1)
    h.remove()
    return {"w": w, "kept": kept, "calls": len(calls), "clean": no_hooks(net)}  # after the user's removal


def ab_inference_x():
    with torch.inference_mode():
        x = rnd(4, 16, seed=70)
    return ga.jacobian(clf(), x)


P("b4_ab_jacobian_x_kept", "jacobian", "ab_jacobian()",
  "r['x_same'] and r['x_grad_same'] and r['rg'] and "
  "near(r['J'], jr(clf(), rnd(4, 16, seed=51)), 1e-5)",
  "after the user's backward: x's values and .grad untouched (private copies), J right",
  group="after-backward")
P("b4_ab_bvjp_x_kept", "backward_vjp", "ab_bvjp()",
  "r['x_same'] and r['x_grad_same'] and r['rg'] and "
  "near(r['out'], vjp_ref(clf(), rnd(4, 16, seed=52), rnd(4, 5, seed=53)), 1e-5)",
  "backward_vjp leaves x (.grad, requires_grad, values) untouched; vᵀJ right",
  group="after-backward")
P("b4_ab_why_ok_unchanged", "why_no_grad", "ab_why('ok')",
  "r['same'] and r['d'].case == 'ok'",
  "GPT-2 embedding after one backward(retain_graph=True): 'ok', nothing changed",
  group="after-backward")
P("b4_ab_why_accumulated", "why_no_grad", "ab_why('accumulated')",
  "r['same'] and r['d'].case == 'accumulated' and (r['d'].gradient is None or "
  "near(r['d'].gradient, r['grad'] / 2, 1e-5))",
  "two backward passes of the same loss: 'accumulated' (k = 2), one pass is half of .grad",
  group="after-backward")
P("b4_ab_why_random_forward", "why_no_grad", "ab_why_random()",
  "r['rng_same'] and r['d'].case == 'random-forward'",
  "dropout in training, recomputed by a callable: 'random-forward', RNG state kept",
  group="after-backward")
P("b4_ab_why_bn_two_forwards", "why_no_grad", "ab_why_bn()",
  "r['n'] == bn_ref()['n'] and close(r['mean'], bn_ref()['mean'], 1e-6, 1e-7) and "
  "close(r['var'], bn_ref()['var'], 1e-6, 1e-7)",
  "a callable output is called twice: batch-norm statistics move by exactly two forwards",
  group="after-backward")
P("b4_ab_why_sparse_embedding", "why_no_grad", "ab_why_sparse()",
  "r['sparse'] and r['same'] and r['d'].case == 'ok'",
  "Embedding(sparse=True) after backward: 'ok' read from the stored values, .grad unchanged",
  group="after-backward")
P("b4_ab_why_nonfinite", "why_no_grad", "ab_why_nonfinite()",
  "r.case == 'nonfinite'",
  "entropy of a masked softmax (where-guarded log(0)): NaN in lin.weight.grad",
  group="after-backward")
P("b4_ab_trace_accumulates", "trace_backward", "ab_trace_accumulates()",
  "all(close(r[k], ab_trace_ref()[k], 1e-6, 1e-8) for k in r)",
  ".grad already populated: trace_backward adds one pass, as a plain backward",
  group="after-backward")
P("b4_ab_trace_use_grad", "trace_backward", "ab_trace_use_grad()",
  "r['same'] and r['hooks'] and near(r['t'].node('w0').grad, r['ref'], 1e-6)",
  "use_grad=True: no .grad touched, the leaf's gradient recorded, no hooks left",
  group="after-backward")
P("b4_ab_compare_vjp_restores", "compare_vjp", "ab_compare_tensor()",
  "r['restored'] and r['c'].agree",
  "compare_vjp with an output tensor and a Jacobian reference restores x.grad",
  group="after-backward")
P("b4_ab_check_backward_rng", "check_backward", "ab_check_rng()",
  "r['same'] and bool(r['res'])",
  "check_backward's probes do not touch the caller's generator", group="after-backward")
P("b4_ab_watch_user_hook", "watch", "ab_watch_user_hook()",
  "r['kept'] and r['calls'] == 1 and r['clean']",
  "the user's forward hook survives the watch, ran once; the watch's own hooks are gone",
  group="after-backward")
P("b4_ab_inference_x", "jacobian", "ab_inference_x()",
  "near(r, jr(clf(), rnd(4, 16, seed=70)), 1e-5)",
  "x created in inference mode (an inference tensor is copied)", group="after-backward")


# ======================================================================= composition (14)
# Models are built outside the transforms (a module's initialisation cannot run inside one);
# each helper takes the Jacobian routine, so call and oracle run the same composition.
def sq_f():
    return mlp(71, (8, 16, 8), nn.Tanh, D)


def small_g():
    return mlp(72, (5, 7, 3), nn.Tanh, D)


def x8(seed=74, n=None):
    return rnd(8, seed=seed, dtype=D) if n is None else rnd(n, 8, seed=seed, dtype=D)


def jrf(f, x, **kw):
    """torch.func's own Jacobian, standing in for ga.jacobian in the oracles."""
    if kw.get("batch_dim") is not None:
        return vmap(jacrev(f), in_dims=kw["batch_dim"])(x)
    return (jacfwd if kw.get("method") == "forward" else jacrev)(f)(x)


class ScaledTanh(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return torch.tanh(2 * x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return 2 * g * (1 - y * y)


def cmp_grad_trace(jac):
    f = sq_f()
    return torch.func.grad(lambda t: jac(f, t).trace())(x8())


def cmp_vmap(jac):
    f = sq_f()
    return vmap(lambda t: jac(f, t))(x8(75, 6))


def cmp_jacrev_of(jac):
    g = small_g()
    return jacrev(lambda t: jac(g, t))(rnd(5, seed=76, dtype=D))


def cmp_jacfwd_of(jac):
    g = small_g()
    return jacfwd(lambda t: jac(g, t, method="forward"))(rnd(5, seed=77, dtype=D))


def cmp_grad_bvjp(bvjp):
    f = sq_f()
    return torch.func.grad(lambda t: bvjp(f, t, x8(78)).pow(2).sum())(x8())


def vjp_fn(f, x, v):
    return vjp(f, x)[1](v)[0]


def jacreg(jac):
    """Gradient, in the parameters, of the squared Frobenius norm of the input Jacobian."""
    model = mlp(73, (6, 12, 4), nn.Tanh, D)
    params = {k: v.detach() for k, v in model.named_parameters()}
    x = rnd(6, seed=73, dtype=D)

    def loss(p):
        return jac(lambda t: torch.func.functional_call(model, p, (t,)), x).pow(2).sum()
    return torch.func.grad(loss)(params)


def near_dict(a, b, rtol):
    return isinstance(a, dict) and a.keys() == b.keys() and all(near(a[k], b[k], rtol) for k in b)


def cmp_strict_vmap():
    f = sq_f()
    return vmap(lambda t: ga.jacobian(f, t, strict=True))(x8(79, 3))


def cmp_compare_in_grad():
    f = sq_f()
    return torch.func.grad(lambda t: ga.compare_vjp(f, t, x8(81)).backward.sum())(x8())


def cmp_sparse_in_vmap():
    sj = ga.SparseJacobian(tri(8))
    return vmap(lambda t: sj(lambda u: torch.sin(u) * u.roll(1), t))(x8(82, 3))


def cmp_fd_grad(jac):
    g = small_g()
    return torch.func.grad(lambda t: jac(g, t, method="finite-difference").sum())(
        rnd(5, seed=83, dtype=D))


def cmp_batch_grad(jac):
    g = small_g()
    return torch.func.grad(lambda t: jac(g, t, batch_dim=0).pow(2).sum())(
        rnd(4, 5, seed=84, dtype=D))


def cmp_hessian_of(jac):
    g = small_g()
    return hessian(lambda t: jac(g, t).pow(2).sum())(rnd(5, seed=85, dtype=D))


P("b4_cmp_grad_of_trace", "jacobian", "cmp_grad_trace(ga.jacobian)",
  "near(r, cmp_grad_trace(jrf), 1e-10)",
  "grad of the trace of the Jacobian (a divergence) equals torch.func's", group="composition")
P("b4_cmp_vmap", "jacobian", "cmp_vmap(ga.jacobian)", "near(r, cmp_vmap(jrf), 1e-12)",
  "vmap over jacobian: one Jacobian per sample", group="composition")
P("b4_cmp_jacrev_of_jacobian", "jacobian", "cmp_jacrev_of(ga.jacobian)",
  "r.shape == (3, 5, 5) and near(r, cmp_jacrev_of(jrf), 1e-10)",
  "jacrev of jacobian: the second derivative tensor (3, 5, 5)", group="composition")
P("b4_cmp_jacfwd_of_forward", "jacobian", "cmp_jacfwd_of(ga.jacobian)",
  "near(r, cmp_jacfwd_of(jrf), 1e-10)", "jacfwd of a forward-mode jacobian",
  group="composition")
P("b4_cmp_grad_of_bvjp", "backward_vjp", "cmp_grad_bvjp(ga.backward_vjp)",
  "near(r, cmp_grad_bvjp(vjp_fn), 1e-10)",
  "grad through backward_vjp (a gradient penalty) equals grad through torch.func.vjp",
  group="composition")
P("b4_cmp_jacobian_penalty_params", "jacobian", "jacreg(ga.jacobian)",
  "near_dict(r, jacreg(jrf), 1e-10)",
  "Jacobian regularisation: grad over parameters (functional_call) of ||J||^2",
  group="composition")
E("b4_cmp_strict_in_vmap", "jacobian", "cmp_strict_vmap()", ("vmap", "strict"),
  group="composition",
  oracle="strict=True inside a torch.func transform: ValueError naming the transform")
E("b4_cmp_sparsity_in_vmap", "jacobian",
  "vmap(lambda t: ga.jacobian(torch.sin, t, sparsity=torch.eye(8, dtype=torch.bool)))(x8(80, 3))",
  ("vmap", "sparsity"), group="composition",
  oracle="sparsity inside a torch.func transform: ValueError naming the transform")
E("b4_cmp_compare_vjp_in_grad", "compare_vjp", "cmp_compare_in_grad()",
  ("grad", "backward_vjp", "transform"), group="composition",
  oracle="compare_vjp inside torch.func.grad: ValueError naming the transform")
E("b4_cmp_sparse_jac_in_vmap", "SparseJacobian", "cmp_sparse_in_vmap()",
  ("vmap", "transform"), group="composition",
  oracle="a compressed Jacobian called inside vmap: ValueError naming the transform")
P("b4_cmp_fd_under_grad", "jacobian", "cmp_fd_grad(ga.jacobian)",
  "near(r, cmp_fd_grad(jrf), 1e-6)",
  "finite differences under grad: the difference quotient of the derivative, 1e-6",
  group="composition")
P("b4_cmp_batch_dim_under_grad", "jacobian", "cmp_batch_grad(ga.jacobian)",
  "near(r, cmp_batch_grad(jrf), 1e-10)",
  "per-sample Jacobians under grad (the docs do not say whether batch_dim composes)",
  group="composition", either=True)
P("b4_cmp_hessian_of_jacobian", "jacobian", "cmp_hessian_of(ga.jacobian)",
  "near(r, cmp_hessian_of(jrf), 1e-10)",
  "torch.func.hessian of a function of the Jacobian (third derivatives inside)",
  group="composition")
P("b4_cmp_custom_fn_vmap", "jacobian",
  "vmap(lambda t: ga.jacobian(ScaledTanh.apply, t))(x8(86, 4))",
  "near(r, vmap(jacrev(ScaledTanh.apply))(x8(86, 4)), 1e-12)",
  "a custom Function with setup_context and generate_vmap_rule, jacobian under vmap",
  group="composition")


# =========================================================================== checker (30)
GELU_C = math.sqrt(2.0 / math.pi)


class AttnSoftmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, s):
        y = torch.softmax(s, -1)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return y * (g - (g * y).sum(-1, keepdim=True))


class AttnSoftmaxBug(AttnSoftmax):
    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return y * g                           # the -sum(g y) term forgotten


def _gelu_parts(x):
    u = GELU_C * (x + 0.044715 * x ** 3)
    t = torch.tanh(u)
    return t, 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * GELU_C * (1 + 3 * 0.044715 * x * x)


class GeluTanh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return 0.5 * x * (1 + torch.tanh(GELU_C * (x + 0.044715 * x ** 3)))

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * _gelu_parts(x)[1]


class GeluTanhHalf(GeluTanh):
    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 0.5 * g * _gelu_parts(x)[1]      # a stray factor 1/2


class GeluErfDeriv(GeluTanh):
    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors               # the erf-GELU's derivative for the tanh forward
        cdf = 0.5 * (1 + torch.erf(x / math.sqrt(2.0)))
        pdf = torch.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
        return g * (cdf + x * pdf)


class ConvUnfold(torch.autograd.Function):
    """Valid 2-D convolution through unfold: x (N, C, H, W), w (O, C, k, k)."""

    @staticmethod
    def forward(ctx, x, w):
        k = w.shape[-1]
        n, _, h, wd = x.shape
        ctx.save_for_backward(x, w)
        out = w.flatten(1) @ F.unfold(x, k)
        return out.view(n, w.shape[0], h - k + 1, wd - k + 1)

    @staticmethod
    def grads(ctx, g):
        x, w = ctx.saved_tensors
        k = w.shape[-1]
        cols = F.unfold(x, k)
        g2 = g.flatten(2)
        gw = g2 @ cols.transpose(1, 2)
        gx = F.fold(w.flatten(1).T @ g2, x.shape[-2:], k)
        return gx, gw

    @staticmethod
    def backward(ctx, g):
        gx, gw = ConvUnfold.grads(ctx, g)
        return gx, gw.sum(0).view(ctx.saved_tensors[1].shape)


class ConvUnfoldBugW(ConvUnfold):
    @staticmethod
    def backward(ctx, g):
        gx, gw = ConvUnfold.grads(ctx, g)
        return gx, gw.mean(0).view(ctx.saved_tensors[1].shape)   # mean over the batch


class LSE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.logsumexp(x, -1)
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        return g.unsqueeze(-1) * torch.exp(x - y.unsqueeze(-1))


class LSEBug(LSE):
    @staticmethod
    def backward(ctx, g):
        x, _ = ctx.saved_tensors               # shifted by the max, never normalised
        return g.unsqueeze(-1) * torch.exp(x - x.amax(-1, keepdim=True))


class QuantSTE(torch.autograd.Function):
    """Round to quarters; straight-through gradient."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.round(x * 4) / 4

    @staticmethod
    def backward(ctx, g):
        return g


class BatchNormTrain(torch.autograd.Function):
    """Batch norm in training mode over dim 0: x (N, C), gamma, beta (C,)."""

    @staticmethod
    def forward(ctx, x, gamma, beta):
        mu = x.mean(0)
        rstd = (x.var(0, unbiased=False) + 1e-5).rsqrt()
        xh = (x - mu) * rstd
        ctx.save_for_backward(xh, rstd, gamma)
        return gamma * xh + beta

    @staticmethod
    def backward(ctx, g):
        xh, rstd, gamma = ctx.saved_tensors
        gxh = g * gamma
        gx = rstd * (gxh - gxh.mean(0) - xh * (gxh * xh).mean(0))
        return gx, (g * xh).sum(0), g.sum(0)


class BatchNormTrainBug(BatchNormTrain):
    @staticmethod
    def backward(ctx, g):
        xh, rstd, gamma = ctx.saved_tensors
        gxh = g * gamma
        gx = rstd * (gxh - xh * (gxh * xh).mean(0))   # the mean of gxh forgotten
        return gx, (g * xh).sum(0), g.sum(0)


class TwoOut(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        t = torch.tanh(x)
        ctx.save_for_backward(x, w, t)
        return x @ w, t

    @staticmethod
    def backward(ctx, ga_, gt):
        x, w, t = ctx.saved_tensors
        return ga_ @ w.T + gt * (1 - t * t), x.T @ ga_


class TwoOutBug(TwoOut):
    @staticmethod
    def backward(ctx, ga_, gt):
        x, w, t = ctx.saved_tensors
        return ga_ @ w.T + gt * (1 - t), x.T @ ga_   # 1 - t for 1 - t²


class ClampInplace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        mask = x.abs() < 1
        ctx.save_for_backward(mask)
        x.clamp_(-1, 1)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, g):
        (mask,) = ctx.saved_tensors
        return g * mask


class ClampInplaceBug(ClampInplace):
    @staticmethod
    def backward(ctx, g):
        return g * 1                            # the mask forgotten


def clamp_fn(cls):
    return lambda x: cls.apply(x * 1)


class UnfoldConvLayer(nn.Module):
    def __init__(self, bug=False):
        super().__init__()
        self.weight = nn.Parameter(rnd(4, 3, 3, 3, seed=90, dtype=D))
        self.fn = ConvUnfoldBugW if bug else ConvUnfold

    def forward(self, x):
        return self.fn.apply(x, self.weight)


def xg(*shape, seed=91, dtype=D, scale=1.0):
    return rnd(*shape, seed=seed, dtype=dtype, scale=scale).requires_grad_()


def ste_x():
    return torch.linspace(-1.75, 1.75, 15, dtype=D).requires_grad_()   # centres of the steps


def two_out_args():
    return xg(3, 4, seed=92), xg(4, 5, seed=93)


def bn_args():
    return (xg(6, 5, seed=94), (1 + rnd(5, seed=95, dtype=D) / 4).requires_grad_(),
            xg(5, seed=96))


def gn_module():
    return seeded(97, lambda: nn.GroupNorm(2, 8)).double()


def one_wrong_of(r, n_entries):
    w = [p for p in r.pairs if not p.agree]
    return len(w) == 1 and w[0].n_entries == n_entries


def wrong_pattern(r, pattern):
    return not r and any(p.pattern == pattern for p in r.wrong_pairs)


CB = "check_backward"
P("b4_cb_softmax_right", CB, "ga.check_backward(AttnSoftmax.apply, xg(2, 3, 6, seed=100))",
  "bool(r) and r.status == 'agree'", "attention softmax backward, right (gradcheck passes)",
  group="checker")
P("b4_cb_softmax_bug", CB, "ga.check_backward(AttnSoftmaxBug.apply, xg(2, 3, 6, seed=100))",
  "not r and r.status == 'wrong'", "softmax backward without -Σ g·y (gradcheck fails)",
  group="checker")
P("b4_cb_gelu_half", CB, "ga.check_backward(GeluTanhHalf.apply, xg(4, 8, seed=101, scale=2))",
  "wrong_pattern(r, 'factor')", "tanh-GELU backward with a stray 1/2: a constant factor",
  group="checker")
P("b4_cb_gelu_erf_deriv", CB, "ga.check_backward(GeluErfDeriv.apply, xg(4, 8, seed=101, scale=2))",
  "not r and r.status == 'wrong'",
  "erf-GELU's derivative for the tanh forward (differs by up to ~2e-3; gradcheck fails)",
  group="checker")
P("b4_cb_gelu_right_f32", CB,
  "ga.check_backward(GeluTanh.apply, xg(64, 32, seed=102, dtype=S, scale=2))",
  "bool(r)", "tanh-GELU in float32 (2048 elements), right", group="checker")
P("b4_cb_gelu_half_f32", CB,
  "ga.check_backward(GeluTanhHalf.apply, xg(64, 32, seed=102, dtype=S, scale=2))",
  "not r", "tanh-GELU in float32 with the factor 1/2", group="checker")
P("b4_cb_conv_right", CB,
  "ga.check_backward(ConvUnfold.apply, xg(2, 3, 6, 6, seed=103), xg(4, 3, 3, 3, seed=104))",
  "bool(r)", "convolution through unfold/fold, right (gradcheck passes)", group="checker")
P("b4_cb_conv_bug_w", CB,
  "ga.check_backward(ConvUnfoldBugW.apply, xg(2, 3, 6, 6, seed=103), xg(4, 3, 3, 3, seed=104))",
  "not r and pairs_agree(r, 'x', 0) and pairs_wrong(r, 'w', 1)",
  "weight gradient averaged over the batch: only the w block wrong (factor 1/2)",
  group="checker")
P("b4_cb_lse_right", CB, "ga.check_backward(LSE.apply, xg(5, 7, seed=105, scale=3))",
  "bool(r)", "log-sum-exp, right", group="checker")
P("b4_cb_lse_bug", CB, "ga.check_backward(LSEBug.apply, xg(5, 7, seed=105, scale=3))",
  "not r", "log-sum-exp backward normalised by the max instead of the sum", group="checker")
P("b4_cb_ste_plain", CB, "ga.check_backward(QuantSTE.apply, ste_x())",
  "not r and wrong_pattern(r, 'not-derivative')",
  "straight-through quantiser vs its (flat) forward: a gradient where the forward is flat",
  group="checker")
P("b4_cb_ste_expected_identity", CB,
  "ga.check_backward(QuantSTE.apply, ste_x(), expected=lambda g, x: g)",
  "bool(r)", "the straight-through backward against its intent, the identity", group="checker")
P("b4_cb_ste_expected_clipped", CB,
  "ga.check_backward(QuantSTE.apply, ste_x(), expected=lambda g, x: g * (x.abs() <= 1))",
  "not r", "against a clipped STE the identity backward is wrong where |x| > 1",
  group="checker")
P("b4_cb_bn_right", CB, "ga.check_backward(BatchNormTrain.apply, *bn_args())",
  "bool(r)", "training-mode batch norm, right (gradcheck passes)", group="checker")
P("b4_cb_bn_bug", CB, "ga.check_backward(BatchNormTrainBug.apply, *bn_args())",
  "not r and pairs_wrong(r, 'x', 0) and pairs_agree(r, 'gamma', 1) and pairs_agree(r, 'beta', 2)",
  "batch norm without the mean of g·γ: only ∂y/∂x wrong", group="checker")
P("b4_cb_two_out_right", CB, "ga.check_backward(TwoOut.apply, *two_out_args())",
  "bool(r) and len(r.pairs) in (0, 4)", "two outputs (x @ w, tanh x), right", group="checker")
P("b4_cb_two_out_bug", CB, "ga.check_backward(TwoOutBug.apply, *two_out_args())",
  "not r and one_wrong_of(r, 144)",
  "1 - t for 1 - t² in the tanh output: only the (tanh x, x) block, 12 x 12, wrong",
  group="checker")
P("b4_cb_clamp_dirty_right", CB,
  "ga.check_backward(clamp_fn(ClampInplace), xg(20, seed=106, scale=1.5))",
  "bool(r)", "in-place clamp with mark_dirty (on a copy of x), right", group="checker")
P("b4_cb_clamp_dirty_bug", CB,
  "ga.check_backward(clamp_fn(ClampInplaceBug), xg(20, seed=106, scale=1.5))",
  "not r", "in-place clamp that passes the gradient where it clamped", group="checker")
P("b4_cb_module_bug_params", CB,
  "ga.check_backward(UnfoldConvLayer(bug=True), xg(2, 3, 6, 6, seed=107))",
  "not r", "module around the buggy Function: its weight's gradient is checked (wrong)",
  group="checker")
P("b4_cb_module_bug_no_params", CB,
  "ga.check_backward(UnfoldConvLayer(bug=True), xg(2, 3, 6, 6, seed=107), parameters=False)",
  "bool(r)", "parameters=False: only x is checked, and its gradient is right", group="checker")
P("b4_cb_softmax_large_right", CB,
  "ga.check_backward(AttnSoftmax.apply, xg(4, 32, 32, seed=108))",
  "bool(r)", "4096 scores (Jacobian 1.7e7 entries, bounded check), right", group="checker")
P("b4_cb_softmax_large_bug", CB,
  "ga.check_backward(AttnSoftmaxBug.apply, xg(4, 32, 32, seed=108))",
  "not r and r.status == 'wrong'", "the same size, the buggy softmax", group="checker")
P("b4_cb_localize_false", CB,
  "ga.check_backward(LSEBug.apply, xg(5, 7, seed=105, scale=3), localize=False)",
  "not r and len(r.pairs) == 0", "probes only: wrong, and no full pairs", group="checker")
P("b4_cb_nn_groupnorm", CB, "ga.check_backward(gn_module(), xg(3, 8, 5, seed=109))",
  "bool(r)", "torch's own GroupNorm (with its affine parameters): right", group="checker")
P("b4_cv_gelu_fd", "compare_vjp",
  "ga.compare_vjp(GeluTanh.apply, rnd(40, seed=110, dtype=D, scale=2), rnd(40, seed=111, dtype=D))",
  "r.agree and r.status == 'agree' and near(r.backward, vjp_ref(lambda t: F.gelu(t, "
  "approximate='tanh'), rnd(40, seed=110, dtype=D, scale=2), rnd(40, seed=111, dtype=D)), 1e-10)",
  "tanh-GELU vs central differences: agree, and the backward is F.gelu(tanh)'s", group="checker")
P("b4_cv_gelu_erf", "compare_vjp",
  "ga.compare_vjp(GeluErfDeriv.apply, rnd(40, seed=110, dtype=D, scale=2), "
  "rnd(40, seed=111, dtype=D))",
  "not r.agree and r.status == 'DISAGREE'", "the erf-derivative bug found by one vᵀJ",
  group="checker")
P("b4_cv_lse_bug_jacobian_ref", "compare_vjp",
  "ga.compare_vjp(LSEBug.apply, rnd(5, 7, seed=112, dtype=D), rnd(5, seed=113, dtype=D), "
  "reference=jr(lambda t: torch.logsumexp(t, -1), rnd(5, 7, seed=112, dtype=D)))",
  "not r.agree and near(r.reference, vjp_ref(lambda t: torch.logsumexp(t, -1), "
  "rnd(5, 7, seed=112, dtype=D), rnd(5, seed=113, dtype=D)), 1e-12)",
  "a Jacobian derived elsewhere as reference: disagree; the reference is vᵀJ", group="checker")
P("b4_cv_softmax_f32", "compare_vjp",
  "ga.compare_vjp(AttnSoftmax.apply, rnd(4, 16, seed=114), rnd(4, 16, seed=115))",
  "r.agree", "float32 attention softmax, right, default finite-difference reference",
  group="checker")
P("b4_cv_callable_ref", "compare_vjp",
  "ga.compare_vjp(lambda t: BatchNormTrain.apply(t, torch.ones(5, dtype=D), torch.zeros(5, "
  "dtype=D)), rnd(6, 5, seed=116, dtype=D), rnd(6, 5, seed=117, dtype=D), reference=lambda v: vjp_ref(lambda t: F.batch_norm(t, None, None, training=True), "
  "rnd(6, 5, seed=116, dtype=D), v))",
  "r.agree", "batch norm vs a VJP function (F.batch_norm) as reference", group="checker")


# ============================================================================= watch (24)
def watching(watched, model):
    return ga.watch(model) if watched else contextlib.nullcontext()


def pnorm(t):
    if t is None:
        return None
    return float(t.coalesce().values().norm() if t.is_sparse else t.norm())


def wsc_accum(watched):
    net = seeded(120, lambda: nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 4)))
    opt = torch.optim.AdamW(net.parameters(), lr=1e-3)
    X, Y = rnd(4, 8, 16, seed=121), rnd(4, 8, 4, seed=122)
    ref = {}
    with watching(watched, net) as w:
        opt.zero_grad()
        for k in range(4):
            loss = F.mse_loss(net(X[k]), Y[k]) / 4
            if not watched:
                ref["held"] = pnorm(net[0].weight.grad)
                ref["last"] = pnorm(torch.autograd.grad(loss, net[0].weight, retain_graph=True)[0])
            loss.backward()
        opt.step()
    ref["final"] = pnorm(net[0].weight.grad)
    return w if watched else ref


def wsc_clip(watched):
    net = seeded(123, lambda: nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 3)))
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    sched = torch.optim.lr_scheduler.StepLR(opt, 1, gamma=0.5)
    x, y = rnd(32, 20, seed=124), torch.randint(0, 3, (32,), generator=gen(125))
    with watching(watched, net) as w:
        opt.zero_grad()
        F.cross_entropy(net(x), y).backward()
        pre = {n: pnorm(p.grad) for n, p in net.named_parameters()}
        total = float(nn.utils.clip_grad_norm_(net.parameters(), 0.05))
        opt.step()
        sched.step()
    post = {n: pnorm(p.grad) for n, p in net.named_parameters()}
    return w if watched else {"pre": pre, "post": post, "total": total}


def wsc_sched_first(watched):
    net = seeded(126, lambda: nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1)))
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    sched = torch.optim.lr_scheduler.StepLR(opt, 1, gamma=0.5)
    with watching(watched, net) as w:
        for k in range(2):
            opt.zero_grad()
            net(rnd(4, 8, seed=127 + k)).pow(2).mean().backward()
            sched.step()                         # before the optimizer: a bug
            opt.step()
    return w


class GPTClf(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = gpt2(seed=128)
        self.head = nn.Linear(32, 3)

    def forward(self, ids):
        return self.head(self.backbone(input_ids=ids).last_hidden_state[:, -1])


def wsc_frozen(watched):
    model = GPTClf()
    torch.manual_seed(129)
    model.head.reset_parameters()
    for p in model.backbone.parameters():
        p.requires_grad_(False)
    opt = torch.optim.AdamW(model.head.parameters(), lr=1e-3)
    ids = torch.randint(0, 64, (4, 6), generator=gen(130))
    with watching(watched, model) as w:
        opt.zero_grad()
        F.cross_entropy(model(ids), torch.tensor([0, 1, 2, 0])).backward()
        head = pnorm(model.head.weight.grad)
        opt.step()
    return w if watched else {"head": head}


def wsc_tied(watched):
    model = gpt2(seed=131, lm=True).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    ids = torch.randint(0, 64, (2, 8), generator=gen(132))
    with watching(watched, model) as w:
        opt.zero_grad()
        model(input_ids=ids, labels=ids).loss.backward()
        wte = pnorm(model.transformer.wte.weight.grad)
        opt.step()
    return w if watched else {"wte": wte}


def wsc_nan(watched):
    m = ent_net()
    with watching(watched, m) as w:
        ent_loss(m).backward()
    return w


class Twice(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(10, 16)
        self.shared = nn.Linear(16, 16)
        self.out = nn.Linear(16, 2)

    def forward(self, x):
        h = torch.tanh(self.inp(x))
        h = torch.tanh(self.shared(h))
        h = torch.tanh(self.shared(h))
        return self.out(h)


def wsc_twice(watched):
    m = seeded(133, Twice)
    opt = torch.optim.SGD(m.parameters(), lr=0.01)
    with watching(watched, m) as w:
        opt.zero_grad()
        m(rnd(8, 10, seed=134)).pow(2).mean().backward()
        shared = pnorm(m.shared.weight.grad)
        opt.step()
    return w if watched else {"shared": shared}


class NoGradEnc(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(12, 12)
        self.head = nn.Linear(12, 3)
        self.aux = nn.Linear(12, 1)            # never called

    def forward(self, x):
        with torch.no_grad():
            h = torch.relu(self.enc(x))
        return self.head(h)


def nograd_step():
    m = seeded(135, NoGradEnc)
    loss = F.cross_entropy(m(rnd(6, 12, seed=136)), torch.tensor([0, 1, 2, 0, 1, 2]))
    return m, loss


def wsc_nograd(watched):
    m, _ = nograd_step()
    opt = torch.optim.SGD(m.parameters(), lr=0.01)
    with watching(watched, m) as w:
        opt.zero_grad()
        F.cross_entropy(m(rnd(6, 12, seed=136)), torch.tensor([0, 1, 2, 0, 1, 2])).backward()
        opt.step()
    return w


def why_nograd(which):
    m, loss = nograd_step()
    return ga.why_no_grad(loss, getattr(m, which).weight, module=m)


def wsc_twice_backward():
    m = seeded(137, lambda: nn.Sequential(nn.Linear(6, 6), nn.Tanh(), nn.Linear(6, 1)))
    with ga.watch(m) as w:
        loss = m(rnd(5, 6, seed=138)).pow(2).mean()
        loss.backward(retain_graph=True)
        loss.backward()
    return w


def wsc_sparse(watched):
    m = bag_model()
    opts = [torch.optim.SparseAdam(list(m["emb"].parameters()), lr=1e-3),
            torch.optim.Adam(m["lin"].parameters(), lr=1e-3)]
    with watching(watched, m) as w:
        for o in opts:
            o.zero_grad()
        bag_loss(m).backward()
        emb = pnorm(m["emb"].weight.grad)
        for o in opts:
            o.step()
    return w if watched else {"emb": emb}


def wsc_dead():
    net = seeded(139, lambda: nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1)))
    with torch.no_grad():
        net[0].bias.fill_(-100.0)
    with ga.watch(net) as w:
        (net(rnd(10, 8, seed=140)) - 1).pow(2).mean().backward()
    return w


def cnn():
    return seeded(141, lambda: nn.Sequential(nn.Conv2d(3, 8, 3), nn.GroupNorm(2, 8), nn.ReLU(),
                                             nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                                             nn.Linear(8, 4)))


CNN_Y = torch.tensor([0, 3, 1, 2, 2])


def wsc_cnn(watched):
    net = cnn()
    x = rnd(5, 3, 8, 8, seed=142)
    with watching(watched, net) as w:
        logits = net(x)
        if not watched:
            logits.retain_grad()
        F.cross_entropy(logits, CNN_Y).backward()
    return w if watched else {"gout": pnorm(logits.grad)}


def ckpt_model():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(12, 24)
            self.block = nn.Sequential(nn.Linear(24, 24), nn.GELU(), nn.Linear(24, 24))
            self.b = nn.Linear(24, 2)

        def forward(self, x):
            h = torch.tanh(self.a(x))
            h = torch.utils.checkpoint.checkpoint(self.block, h, use_reentrant=False)
            return self.b(h)
    return seeded(143, M)


def wsc_ckpt(watched):
    m = ckpt_model()
    with watching(watched, m) as w:
        m(rnd(6, 12, seed=144)).pow(2).mean().backward()
    return w if watched else {n: pnorm(p.grad) for n, p in m.named_parameters()}


def wsc_autocast(watched):
    m = seeded(145, lambda: nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 8)))
    opt = torch.optim.AdamW(m.parameters(), lr=1e-3)
    with watching(watched, m) as w:
        opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            out = m(rnd(16, 32, seed=146))
        out.float().pow(2).mean().backward()
        norms = {n: pnorm(p.grad) for n, p in m.named_parameters()}
        opt.step()
    return w if watched else norms


def wsc_light(watched):
    m = seeded(147, lambda: nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 2)))
    opt = torch.optim.SGD(m.parameters(), lr=0.05)
    with (ga.watch(m, full_steps=1) if watched else contextlib.nullcontext()) as w:
        for k in range(3):
            opt.zero_grad()
            m(rnd(4, 8, seed=148 + k)).pow(2).mean().backward()
            opt.step()
    final = pnorm(m[0].weight.grad)
    return w if watched else {"final": final}


class Small3(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Linear(8, 32)
        self.enc = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True)
        self.head = nn.Linear(32, 2)

    def forward(self, x):
        return self.head(self.enc(self.emb(x)).mean(1))


def wsc_small3():
    m = seeded(150, Small3)
    with ga.watch(m) as w:
        m(rnd(2, 5, 8, seed=151)).pow(2).sum().backward()
    return w


def wsc_gptclf_names():
    model = GPTClf()
    with ga.watch(model) as w:
        model(torch.randint(0, 64, (2, 5), generator=gen(152))).sum().backward()
    return w


def tr_ce(traced):
    net = cnn()
    x = rnd(5, 3, 8, 8, seed=153)
    logits = net(x)
    loss = F.cross_entropy(logits, CNN_Y)
    t = ga.trace_backward(loss, names={"logits": logits}) if traced else loss.backward()
    return {"t": t, "grads": grads_of(net), "logits": logits.detach()}


def ce_grad(logits):
    return (torch.softmax(logits, -1) - F.one_hot(CNN_Y, 4)) / len(CNN_Y)


def tr_nan():
    m = ent_net()
    return ga.trace_backward(ent_loss(m))


def tr_reentrant(traced):
    m = ckpt_model()
    h = torch.tanh(m.a(rnd(6, 12, seed=154)))
    h = torch.utils.checkpoint.checkpoint(m.block, h, use_reentrant=True)
    loss = m.b(h).pow(2).mean()
    if traced:
        t = ga.trace_backward(loss, names={"inner": m.block[0].weight, "outer": m.a.weight})
    else:
        loss.backward()
        t = None
    return {"t": t, "inner": m.block[0].weight.grad.clone()}


def tr_bert(traced):
    model = bert(seed=155).train()
    for mod in model.modules():
        if isinstance(mod, nn.Dropout):
            mod.p = 0.0
    ids = torch.randint(1, 64, (2, 6), generator=gen(156))
    loss = model(input_ids=ids).last_hidden_state[..., :5].sum()
    wemb = model.embeddings.word_embeddings.weight
    t = ga.trace_backward(loss, names={"wemb": wemb}) if traced else loss.backward()
    return {"t": t, "g": wemb.grad.clone()}


W_ = "watch"
P("b4_w_accum_passes", W_, "wsc_accum(True)",
  "r.parameters['0.weight'].passes == 4 and r.summary().startswith('gradients ok')",
  "4 micro-batches, each after its own forward, one AdamW step: .grad sums 4 passes, ok",
  group="watch")
P("b4_w_accum_norms", W_, "wsc_accum(True)",
  "rel(r.parameters['0.weight'].grad, wsc_accum(False)['last']) and "
  "rel(r.parameters['0.weight'].held_before, wsc_accum(False)['held']) and "
  "rel(r.parameters['0.weight'].final, wsc_accum(False)['final'])",
  "the last micro-batch's gradient, what .grad held before it, and .grad at the end",
  group="watch")
P("b4_w_clip_norms", W_, "wsc_clip(True)",
  "all(rel(r.parameters[n].grad, wsc_clip(False)['pre'][n]) and "
  "rel(r.parameters[n].final, wsc_clip(False)['post'][n]) for n in wsc_clip(False)['pre']) "
  "and wsc_clip(False)['total'] > 0.05 and "
  "rel(math.sqrt(sum(p.final ** 2 for p in r.parameters.values())), 0.05, 1e-4)",
  "clip_grad_norm_(0.05) between backward and step: pass norms before, final norms after",
  group="watch")
P("b4_w_scheduler_first", W_, "wsc_sched_first(True)",
  "'scheduler' in (r.summary() + ' '.join(r.problems())).lower()",
  "lr_scheduler.step() before optimizer.step(): named (watch docstring 'Also named')",
  group="watch")
P("b4_w_frozen_backbone", W_, "wsc_frozen(True)",
  "r.summary().startswith('gradients ok') and "
  "all(r.parameters[n].grad is None for n in r.parameters if n.startswith('backbone.')) and "
  "rel(r.parameters['head.weight'].grad, wsc_frozen(False)['head'])",
  "frozen GPT-2 backbone, trainable head: ok for the trainable ones, backbone got none",
  group="watch")
P("b4_w_tied_wte", W_, "wsc_tied(True)",
  "'lm_head.weight' not in r.parameters and r.parameters['transformer.wte.weight'].passes == 1 "
  "and rel(r.parameters['transformer.wte.weight'].grad, wsc_tied(False)['wte'])",
  "GPT-2 LM head tied to wte: one parameter, its gradient sums both uses, one pass",
  group="watch")
P("b4_w_nan_entropy", W_, "wsc_nan(True)",
  "r.first_nonfinite() is not None and r.first_nonfinite().name == 'ent' and "
  "not r.summary().startswith('gradients ok') and r.parameters['lin.weight'].state == "
  "'nonfinite'",
  "masked-softmax entropy: finite loss, NaN made in the backward of module 'ent'",
  group="watch")
P("b4_w_module_twice", W_, "wsc_twice(True)",
  "[m.name for m in r.modules].count('shared') == 2 and "
  "rel(r.parameters['shared.weight'].grad, wsc_twice(False)['shared']) and "
  "r.parameters['shared.weight'].passes == 1 and r.summary().startswith('gradients ok')",
  "a layer applied twice: two records, its gradient the sum over calls, one pass",
  group="watch")
P("b4_w_no_grad_forward", W_, "wsc_nograd(True)",
  "r.parameters['enc.weight'].grad is None and r.parameters['enc.weight'].state == 'none' and "
  "not r.summary().startswith('gradients ok') and isinstance(r.why_no_grad('enc.weight'), str)",
  "torch.no_grad() around the encoder inside forward: enc gets no gradient, named",
  group="watch")
P("b4_w_why_no_grad_cut", "why_no_grad", "why_nograd('enc')",
  "r.case in ('not-reachable', 'unused-parameter')",
  "the encoder ran under no_grad: its weight is not in the loss's graph", group="watch")
P("b4_w_why_no_grad_unused", "why_no_grad", "why_nograd('aux')",
  "r.case == 'unused-parameter'",
  "a head never called, module= given: 'unused-parameter'", group="watch")
P("b4_w_same_graph_twice", W_, "wsc_twice_backward()",
  "r.backward_passes == 2 and not r.summary().startswith('gradients ok')",
  "backward twice through one graph (retain_graph): two passes, a problem", group="watch")
P("b4_w_sparse_embedding", W_, "wsc_sparse(True)",
  "r.parameters['emb.weight'].sparse and "
  "rel(r.parameters['emb.weight'].grad, wsc_sparse(False)['emb'])",
  "Embedding(sparse=True) with SparseAdam, repeated ids: norm of the coalesced values",
  group="watch")
P("b4_w_dead_relu", W_, "wsc_dead()",
  "r.first_zero() is not None and r.first_zero().name == '1' and "
  "[m for m in r.modules if m.name == '1'][0].dead_units == (16, 16)",
  "a ReLU layer with bias -100: every unit dead, the ReLU is where the gradient became 0",
  group="watch")
P("b4_w_cnn_rows", W_, "wsc_cnn(True)",
  "[x['module'] for x in r.rows()] == ['0', '1', '2', '3', '4', '5'] and "
  "rel(r.rows()[-1]['grad_out'], wsc_cnn(False)['gout'])",
  "Conv-GroupNorm-ReLU-pool-flatten-Linear: rows in forward order; the logits' gradient norm",
  group="watch")
P("b4_w_checkpoint", W_, "wsc_ckpt(True)",
  "all(rel(r.parameters[n].grad, g) for n, g in wsc_ckpt(False).items()) and "
  "r.summary().startswith('gradients ok')",
  "a non-reentrant checkpointed block: parameter gradients as without the watch",
  group="watch")
P("b4_w_autocast_bf16", W_, "wsc_autocast(True)",
  "all(rel(r.parameters[n].grad, g) for n, g in wsc_autocast(False).items()) and "
  "r.summary().startswith('gradients ok')",
  "a CPU autocast (bfloat16) training step: gradients ok, norms as plain torch",
  group="watch")
P("b4_w_light_steps", W_, "wsc_light(True)",
  "r.parameters['0.weight'].final_known and "
  "rel(r.parameters['0.weight'].final, wsc_light(False)['final'])",
  "full_steps=1 over 3 steps: the final .grad is still read when the block ends",
  group="watch")
P("b4_w_draw_boxes", "draw_modules", "ga.draw_modules(wsc_small3())",
  "r.svg.count('<rect class=\"ga-box\"') == 3",
  "embedding Linear, TransformerEncoderLayer, head: one box per direct submodule",
  group="watch")
P("b4_w_param_name", W_, "wsc_gptclf_names()",
  "r.param_name('ln_f.weight') == 'backbone.ln_f.weight' and "
  "isinstance(catch(lambda: r.param_name('attn.c_attn.weight')), KeyError) and "
  "isinstance(catch(lambda: r.why_no_grad('nope.weight')), KeyError)",
  "param_name resolves a unique suffix, KeyError for an ambiguous one (h.0 / h.1); "
  "why_no_grad of a non-parameter: KeyError", group="watch")
P("b4_tr_ce_cotangent", "trace_backward", "tr_ce(True)",
  "near(r['t'].cotangent('logits'), ce_grad(r['logits']), 1e-5) and "
  "all(close(r['grads'][k], tr_ce(False)['grads'][k], 1e-6, 1e-8) for k in r['grads'])",
  "cross-entropy: the cotangent at the logits is (softmax - onehot)/N; .grad as plain backward",
  group="watch")
P("b4_tr_nan_first", "trace_backward", "tr_nan()",
  "r.first_nonfinite is not None and r.first_nonfinite.grad_fn == 'MulBackward0'",
  "where-guarded p log p: the product's backward receives 0 and sends 0·(-inf) = NaN",
  group="watch")
P("b4_tr_reentrant_checkpoint", "trace_backward", "tr_reentrant(True)",
  "any('checkpoint' in w.lower() for w in W) and 'inner' in r['t'].unreached and "
  "close(r['inner'], tr_reentrant(False)['inner'], 1e-6, 1e-8)",
  "reentrant checkpoint: a UserWarning, the inner weight unreached, its .grad filled as usual",
  group="watch")
P("b4_tr_bert_leaf", "trace_backward", "tr_bert(True)",
  "close(r['t'].node('wemb').grad, tr_bert(False)['g'], 1e-6, 1e-8) and "
  "close(r['g'], tr_bert(False)['g'], 1e-6, 1e-8)",
  "BERT word embeddings: the recorded leaf gradient and .grad equal a plain backward's",
  group="watch")


# ============================================================================ sparse (15)
def grid_pattern(*shape):
    """|i - i'|_1 <= 1 on a grid of ``shape``: pattern of shape ``shape + shape``."""
    idx = torch.stack(torch.meshgrid(*[torch.arange(s) for s in shape], indexing="ij"), -1)
    a = idx.reshape(-1, 1, len(shape))
    b = idx.reshape(1, -1, len(shape))
    return ((a - b).abs().sum(-1) <= 1).reshape(*shape, *shape)


K3 = torch.zeros(1, 1, 3, 3, 3, dtype=D)
K3[0, 0, 1, 1, 1] = -6.0
for _d in range(3):
    _i = [1, 1, 1]
    for _s in (0, 2):
        _i[_d] = _s
        K3[(0, 0, *_i)] = 1.0
        _i[_d] = 1


def stencil3d(u):
    return F.conv3d(u[None, None], K3, padding=1)[0, 0] + torch.sin(u) * u


def sp_3d():
    sj = ga.SparseJacobian(grid_pattern(6, 6, 6), (6, 6, 6))
    return {"J": sj(stencil3d, rnd(6, 6, 6, seed=160, dtype=D)), "passes": sj.passes}


def reaction1d(u):
    up = F.pad(u[None], (1, 1), mode="replicate")[0]
    return up[:-2] - 2 * u + up[2:] + u * (1 - u) * torch.exp(-u)


def sp_1d():
    x = rnd(2000, seed=161)
    P1 = ga.jacobian_sparsity(reaction1d, x)
    sj = ga.SparseJacobian(P1, x.shape)
    return {"J": sj(reaction1d, x), "passes": sj.passes}


def graph_L(n=300, seed=162):
    g = gen(seed)
    i = torch.arange(n)
    src = torch.cat([i, torch.randint(0, n, (n // 2,), generator=g)])
    dst = torch.cat([(i + 1) % n, torch.randint(0, n, (n // 2,), generator=g)])
    keep = src != dst
    A = torch.zeros(n, n, dtype=D)
    A[src[keep], dst[keep]] = 1.0
    A = ((A + A.T) > 0).to(D)
    return (torch.diag(A.sum(1)) - A).to_sparse()


def lap_sparse_f():
    L = graph_L()
    return lambda u: torch.sparse.mm(L, u[:, None])[:, 0] + u ** 3


def lap_dense_f():
    L = graph_L().to_dense()
    return lambda u: L @ torch.tanh(u) + u ** 3


def lap_pattern():
    return (graph_L().to_dense() != 0) | torch.eye(300, dtype=torch.bool)


def per_sample():
    net = mlp(163, (6, 10, 4), nn.Tanh)
    return lambda X: net(X)


def blockdiag_pattern(b=64, m=4, n=6):
    return torch.block_diag(*[torch.ones(m, n, dtype=torch.bool)] * b).reshape(b, m, b, n)


def sp_blockdiag():
    sj = ga.SparseJacobian(blockdiag_pattern(), (64, 6))
    return {"J": sj(per_sample(), rnd(64, 6, seed=164)), "passes": sj.passes}


def ring_energy(x):
    d = x - x.roll(-1)
    return (torch.log(torch.cosh(d)) + d ** 4 / 4).sum() + torch.cos(x).sum()


def ring_pattern(n=200):
    i = torch.arange(n)
    return ((i[:, None] - i[None, :]) % n <= 1) | ((i[None, :] - i[:, None]) % n <= 1)


def sp_ring():
    sh = ga.SparseHessian(ring_pattern())
    return {"H": sh(ring_energy, rnd(200, seed=165, dtype=D)), "passes": sh.passes}


def grid_energy(x):
    dx = x[1:, :] - x[:-1, :]
    dy = x[:, 1:] - x[:, :-1]
    return (torch.sqrt(1 + dx ** 2).sum() + torch.sqrt(1 + dy ** 2).sum() + (x ** 4).sum() / 4)


def edges(n=150, seed=166):
    g = gen(seed)
    a = torch.randint(0, n, (300,), generator=g)
    b = torch.randint(0, n, (300,), generator=g)
    keep = a != b
    return a[keep], b[keep]


EDGES = {"ab": edges()}                # drawn once at import, outside any transform


def pair_energy(x):
    a, b = EDGES["ab"]
    d = x[a] - x[b]
    return (d ** 2 / (1 + d ** 2)).sum() + (x ** 2).sum() / 2


def pair_pattern(n=150):
    a, b = EDGES["ab"]
    P = torch.eye(n, dtype=torch.bool)
    P[a, b] = True
    P[b, a] = True
    return P


def circ(u):
    return u.roll(1) - 2 * u + u.roll(-1) + torch.sin(u)


def conv_stencil(u):
    k = torch.tensor([[[0.1, -0.5, 1.0, -0.5, 0.1]]], dtype=u.dtype)
    return torch.tanh(F.conv1d(u[None, None], k, padding=2)[0, 0]) + u ** 2


def small_cnn():
    return seeded(167, lambda: nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.Tanh(),
                                             nn.Conv2d(4, 3, 3, padding=1)))


def groupnorm_expected():
    s = torch.arange(2)[:, None, None, None]
    c = torch.arange(4)[None, :, None, None]
    ids_s = s.expand(2, 4, 3, 3).reshape(-1)
    ids_g = (c // 2).expand(2, 4, 3, 3).reshape(-1)
    same = (ids_s[:, None] == ids_s[None, :]) & (ids_g[:, None] == ids_g[None, :])
    return same.reshape(2, 4, 3, 3, 2, 4, 3, 3)


def gn_plain():
    return seeded(168, lambda: nn.GroupNorm(2, 4))


SJ = "SparseJacobian"
P("b4_sp_stencil3d", SJ, "sp_3d()",
  "near(r['J'], jr(stencil3d, rnd(6, 6, 6, seed=160, dtype=D)), 1e-12) and r['passes'] == 7",
  "7-point stencil on a 6x6x6 grid (216 unknowns): exact values, 7 passes (the lower bound, a "
  "lattice colouring meets it)", group="sparse")
P("b4_sp_reaction1d_traced", SJ, "sp_1d()",
  "r['passes'] == 3 and near(r['J'], jr(reaction1d, rnd(2000, seed=161)), 1e-6)",
  "1-D reaction-diffusion, replicate padding, n = 2000, pattern traced: 3 passes",
  group="sparse")
P("b4_sp_laplacian_torch_sparse", "jacobian", "ga.jacobian(lap_sparse_f(), rnd(300, seed=169, dtype=D))",
  "near(r, taj(lap_sparse_f(), rnd(300, seed=169, dtype=D)), 1e-12)",
  "graph Laplacian held as a torch.sparse tensor (vmap cannot batch it): the loop fallback",
  group="sparse")
P("b4_sp_laplacian_compressed", SJ,
  "ga.SparseJacobian(lap_pattern())(lap_sparse_f(), rnd(300, seed=170, dtype=D))",
  "near(r, taj(lap_sparse_f(), rnd(300, seed=170, dtype=D)), 1e-12)",
  "compressed Jacobian through torch.sparse.mm (the docs do not say whether it batches)",
  group="sparse", either=True)
P("b4_sp_laplacian_dense", SJ,
  "ga.SparseJacobian(lap_pattern())(lap_dense_f(), rnd(300, seed=171, dtype=D), certify=2)",
  "near(r, jr(lap_dense_f(), rnd(300, seed=171, dtype=D)), 1e-12)",
  "L tanh(u) + u³ for a 300-node graph Laplacian, certified", group="sparse")
P("b4_sp_blockdiag", SJ, "sp_blockdiag()",
  "r['passes'] == 4 and near(r['J'], jr(per_sample(), rnd(64, 6, seed=164)), 1e-5)",
  "per-sample MLP over 64 samples: block-diagonal, 4 passes (rows of one sample)",
  group="sparse")
P("b4_sh_ring", "SparseHessian", "sp_ring()",
  "near(r['H'], hessian(ring_energy)(rnd(200, seed=165, dtype=D)), 1e-10) and r['passes'] <= 5",
  "ring of pairwise log-cosh + quartic terms, n = 200: periodic tridiagonal Hessian",
  group="sparse")
P("b4_sh_grid2d", "SparseHessian",
  "ga.SparseHessian(grid_pattern(12, 12), (12, 12))(grid_energy, rnd(12, 12, seed=172, dtype=D))",
  "r.shape == (12, 12, 12, 12) and near(r, hessian(grid_energy)(rnd(12, 12, seed=172, "
  "dtype=D)), 1e-10)",
  "minimal-surface-like energy on a 12 x 12 grid: 5-point Hessian", group="sparse")
P("b4_sh_sparsity_covers", "hessian_sparsity",
  "ga.hessian_sparsity(grid_energy, rnd(12, 12, seed=173, dtype=D))",
  "covers(r, hessian(grid_energy)(rnd(12, 12, seed=173, dtype=D))) and "
  "bool((dense(r).reshape(144, 144) == dense(r).reshape(144, 144).T).all())",
  "traced Hessian pattern of the grid energy: symmetric, covers every non-zero",
  group="sparse")
P("b4_sh_pairwise_edges", "SparseHessian",
  "ga.SparseHessian(pair_pattern())(pair_energy, rnd(150, seed=174, dtype=D), certify=2)",
  "near(r, hessian(pair_energy)(rnd(150, seed=174, dtype=D)), 1e-10)",
  "sum of pairwise terms over 300 random edges of 150 nodes, certified", group="sparse")
P("b4_sp_certify_missing_wrap", SJ,
  "catch(lambda: ga.SparseJacobian(tri(100))(circ, rnd(100, seed=175, dtype=D), certify=3))",
  "type(r).__name__ == 'CertificateError' and isinstance(r, ValueError)",
  "periodic stencil (roll) with a tridiagonal pattern that misses the wrap: CertificateError",
  group="sparse")
P("b4_sp_jacobian_sparsity_kw", "jacobian",
  "ga.jacobian(conv_stencil, rnd(500, seed=176, dtype=D), "
  "sparsity=ga.jacobian_sparsity(conv_stencil, rnd(500, seed=176, dtype=D)))",
  "r.layout == torch.sparse_coo and near(r, jr(conv_stencil, rnd(500, seed=176, dtype=D)), "
  "1e-12)",
  "conv1d stencil (width 5): traced pattern passed as sparsity=, COO result", group="sparse")
P("b4_sp_csr_layout", SJ,
  "ga.SparseJacobian(ga.jacobian_sparsity(conv_stencil, rnd(500, seed=177, dtype=D)))("
  "conv_stencil, rnd(500, seed=177, dtype=D), layout=torch.sparse_csr)",
  "r.layout == torch.sparse_csr and near(r, jr(conv_stencil, rnd(500, seed=177, dtype=D)), "
  "1e-12)",
  "CSR layout: the flat 500 x 500 matrix", group="sparse")
P("b4_sp_cnn_batch_pattern", "jacobian_sparsity",
  "ga.jacobian_sparsity(small_cnn(), rnd(4, 2, 8, 8, seed=178), layout=torch.strided)",
  "covers(r, jr(small_cnn(), rnd(4, 2, 8, 8, seed=178))) and "
  "bool((r.reshape(4, 192, 4, 128)[torch.arange(4) != 0][:, :, 0] == 0).all())",
  "two-conv CNN on a batch of 4: covers J, and sample 0's inputs reach no other sample",
  group="sparse")
P("b4_sp_groupnorm_exact", "jacobian_sparsity",
  "ga.jacobian_sparsity(gn_plain(), rnd(2, 4, 3, 3, seed=179), layout=torch.strided)",
  "same_pattern(r, groupnorm_expected())",
  "GroupNorm(2, 4): each element depends on its channel group in its sample, nothing else",
  group="sparse")


# ============================================================================= misuse (7)
E("b4_mi_batch_dim_sparsity", "jacobian",
  "ga.jacobian(per_sample(), rnd(64, 6, seed=180), batch_dim=0, sparsity=blockdiag_pattern())",
  ("batch_dim", "sparsity"))
E("b4_mi_batch_dim_tuple", "jacobian",
  "ga.jacobian(bilinear_f(), (rnd(4, 10, seed=181), rnd(4, 12, seed=182)), batch_dim=0)",
  ("batch_dim", "tuple"))
E("b4_mi_check_backward_output", "check_backward",
  "ga.check_backward(GeluTanh.apply(xg(8, seed=183)), xg(8, seed=183))", ("fn",))
E("b4_mi_watch_full_steps_zero", "watch", "ga.watch(clf(), full_steps=0)", ("full_steps",))
E("b4_mi_trace_gradient_shape", "trace_backward",
  "ga.trace_backward(clf()(rnd(4, 16, seed=184)), gradient=torch.ones(4))",
  ("gradient", "shape"))
E("b4_mi_compare_v_shape", "compare_vjp",
  "ga.compare_vjp(clf(), rnd(4, 16, seed=186), torch.ones(4, 4))", ("v", "shape"))
E("b4_mi_certify_no_sparsity", "jacobian",
  "ga.jacobian(clf(), rnd(4, 16, seed=189), certify=2)", ("certify", "sparsity"))
