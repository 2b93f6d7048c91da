"""A tiny GPT-2 (``transformers.GPT2LMHeadModel`` built offline from a ``GPT2Config``) whose user
wants to train the LM head only: every parameter gets ``requires_grad = False``, then
``model.lm_head.weight.requires_grad = True``.  GPT-2 ties the LM head to the token embedding
(``tie_word_embeddings`` defaults to True): ``lm_head.weight`` *is* ``transformer.wte.weight``, so
the "LM head only" step also trains the input embedding table, which the user believes frozen.
``named_parameters()`` lists the shared tensor once, as ``transformer.wte.weight``.

Source: https://github.com/huggingface/transformers/issues/11903 ("Problem when freezing all GPT2
model except the LM head"; reply: "In GPT-2, as with most models, the LM head is tied to the
embeddings: it has the same weights").  The transformers import (about 10 s on this machine) is
paid once per process.
"""

import torch
from scenario_kit import FALSE_OK, Run

SOURCE = "https://github.com/huggingface/transformers/issues/11903"
DESCRIPTION = (
    "GPT-2 frozen except lm_head.weight, which is tied to transformer.wte.weight: wte trains"
)
ASK = []
MUST = [[r"wte"], [r"\btied\b|\btie_word|\bshared\b|same (tensor|parameter|weight)|lm_head"]]
MUST_NOT = [FALSE_OK]


def tiny_gpt2(tie: bool = True):
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    cfg = GPT2Config(
        vocab_size=40,
        n_positions=16,
        n_embd=16,
        n_layer=2,
        n_head=2,
        bos_token_id=0,
        eos_token_id=0,
        tie_word_embeddings=tie,
    )
    return GPT2LMHeadModel(cfg)


def batch(n: int = 4, t: int = 8):
    g = torch.Generator().manual_seed(1)
    return torch.randint(1, 40, (n, t), generator=g)


def step(watch, tie: bool = True):
    model = tiny_gpt2(tie)
    model.train()
    for p in model.parameters():
        p.requires_grad = False
    model.lm_head.weight.requires_grad = True
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=1e-2)
    wte0 = model.transformer.wte.weight.detach().clone()
    head0 = model.lm_head.weight.detach().clone()
    ids = batch()
    with watch(model) as w:
        optimizer.zero_grad()
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        optimizer.step()
    return Run(w=w, model=model, wte0=wte0, head0=head0, n_trainable=len(trainable))


def truth(run):
    m = run.model
    assert m.lm_head.weight is m.transformer.wte.weight  # one tensor
    assert run.n_trainable == 1
    assert not torch.equal(m.transformer.wte.weight.detach(), run.wte0)  # the embedding moved
    assert m.transformer.h[0].attn.c_attn.weight.grad is None  # the rest is frozen
