"""A small text classifier with ``nn.MultiheadAttention`` whose ``key_padding_mask`` is the
tokenizer's ``attention_mask`` (1 for a real token, 0 for padding) passed as booleans.  PyTorch's
mask means the opposite (``True``: ignore this key): every real token is hidden and only the pads
are attended to, and a sequence without padding has every key masked.  Its attention row is a
softmax over ``-inf`` only: NaN, made in the attention; the pooled output, the loss and every
gradient are NaN.

Source: https://jkschin.com/blog/2024/src-key-padding-mask ("I was checking my code recently and
decided to dive deep into how src_key_padding_mask in PyTorch Transformers work and check if my
outputs are actually correct"; a correctly constructed mask gives the same output as the unpadded
input).  The two conventions: http://linux.office369.com/code/20639.html ("src_key_padding_mask
则更像是 huggingface 中的 attention mask").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://jkschin.com/blog/2024/src-key-padding-mask"
DESCRIPTION = "HF attention_mask (1 = token) as key_padding_mask: unpadded row all masked, NaN"
ASK = []
MUST = [
    [r"\bnan\b", r"non-?finite"],
    [r"\battn\b", r"attention", r"MultiheadAttention", r"key_padding_mask", r"softmax", r"\bmask"],
]
MUST_NOT = [FALSE_OK, r"explod", r"learning rate"]


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20, 16)
        self.attn = nn.MultiheadAttention(16, 2, batch_first=True)
        self.head = nn.Linear(16, 3)

    def forward(self, tokens, key_padding_mask, keep):
        h = self.emb(tokens)
        h, _ = self.attn(h, h, h, key_padding_mask=key_padding_mask)
        pooled = (h * keep[..., None]).sum(1) / keep.sum(1, keepdim=True)  # mean over real tokens
        return self.head(pooled)


def batch():
    lengths = [6, 4, 3, 5]  # the first sequence has no padding
    g = torch.Generator().manual_seed(1)
    tokens = torch.randint(1, 20, (4, 6), generator=g)
    attention_mask = torch.tensor([[1] * n + [0] * (6 - n) for n in lengths])
    tokens = tokens * attention_mask  # pad id 0
    labels = torch.tensor([0, 2, 1, 2])
    return tokens, attention_mask, labels


def step(watch, convert: bool = False):
    torch.manual_seed(0)
    model = Classifier()
    tokens, attention_mask, labels = batch()
    # PyTorch: True = "ignore this key"; Hugging Face: 1 = "attend to this token"
    kpm = (attention_mask == 0) if convert else attention_mask.bool()
    keep = attention_mask.float()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    with watch(model) as w:
        opt.zero_grad()
        logits = model(tokens, kpm, keep)
        loss = F.cross_entropy(logits, labels)
        loss.backward()
        grads = {n: p.grad.clone() for n, p in model.named_parameters()}
        opt.step()
    return Run(w=w, kpm=kpm, logits=logits.detach(), loss=loss.item(), grads=grads)


def truth(run):
    assert bool(run.kpm[0].all())  # every key of the unpadded sequence masked
    assert bool(torch.isnan(run.logits[0]).all())
    assert run.loss != run.loss
    assert bool(torch.isnan(run.grads["head.weight"]).any())
