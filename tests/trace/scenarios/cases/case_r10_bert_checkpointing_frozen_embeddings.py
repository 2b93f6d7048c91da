"""Control: a tiny BERT classifier (``BertForSequenceClassification`` from a ``BertConfig``) with its
embeddings frozen and gradient checkpointing on, reentrant (``use_reentrant=True``), the setup of
the report.  In 2023 the encoder layers got no gradient: the reentrant checkpoint saw no input
that required grad.  transformers now makes the embedding output require grad when checkpointing
is enabled (``enable_input_require_grads()``, huggingface/transformers#21598 and later), so the
encoder layers, pooler and classifier get their gradients and the frozen embeddings none: a
healthy step with frozen parameters (transformers 5.24 calls ``enable_input_require_grads()``
whenever checkpointing is enabled on a model whose main input is ``input_ids``).  Checkpointed
layers run twice (their recomputation in the backward).

Source: https://github.com/huggingface/transformers/issues/21381 ("gradient checkpointing disables
requires_grad when freezing part of models").  ``activation_checkpointing_enable`` is the new name
of ``gradient_checkpointing_enable`` (which warns).
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK, Run

SOURCE = "https://github.com/huggingface/transformers/issues/21381"
DESCRIPTION = (
    "control: tiny BERT, embeddings frozen, reentrant checkpointing: encoder layers get grads"
)
ASK = []
MUST = [[HEALTHY_OK, r"frozen"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"no gradient[^\n]*encoder\.layer",
    r"encoder\.layer[^\n]*no gradient",
    r"frozen[^\n]*(still )?moved",
]


def step(watch):
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(0)
    cfg = BertConfig(
        vocab_size=40,
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=16,
        num_labels=2,
    )
    model = BertForSequenceClassification(cfg)
    for p in model.bert.embeddings.parameters():
        p.requires_grad = False
    model.activation_checkpointing_enable(activation_checkpointing_kwargs={"use_reentrant": True})
    model.train()
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(1, 40, (4, 8), generator=g)
    mask = torch.ones_like(ids)
    mask[1, 5:] = 0
    labels = torch.tensor([0, 1, 1, 0])
    emb0 = model.bert.embeddings.word_embeddings.weight.detach().clone()
    with watch(model) as w:
        optimizer.zero_grad()
        loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        loss.backward()
        optimizer.step()
    return Run(w=w, model=model, emb0=emb0)


def truth(run):
    m = run.model
    assert m.bert.embeddings.word_embeddings.weight.grad is None
    assert torch.equal(m.bert.embeddings.word_embeddings.weight.detach(), run.emb0)
    q = m.bert.encoder.layer[0].attention.self.query.weight
    assert q.grad is not None and bool(q.grad.abs().sum() > 0)
    assert m.classifier.weight.grad is not None
