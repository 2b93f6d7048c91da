"""Semantic segmentation with three classes (0 background, 1, 2) whose masks mark void / boundary
pixels 255, as VOC-style masks do, trained with ``nn.CrossEntropyLoss()`` without
``ignore_index=255``.  On CPU the loss raises ``IndexError: Target 255 is out of bounds`` in the
first batch; the script sees the exception after the ``with`` block.

Source: https://discuss.pytorch.org/t/segmentation-and-number-of-classes/149210 ("I see that here
we are ignoring index 255, but I am not sure where 255 comes from").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn


class TinySeg(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
        self.head = nn.Conv2d(8, 3, 1)

    def forward(self, x):
        return self.head(self.body(x))


SOURCE = "https://discuss.pytorch.org/t/segmentation-and-number-of-classes/149210"
DESCRIPTION = "segmentation masks with void 255, CrossEntropyLoss without ignore_index: IndexError"
ASK = []
MUST = [[r"255|out of bounds|ignore_index"], [r"IndexError|raised|exception"]]
MUST_NOT = [FALSE_OK]


def batch():
    g = torch.Generator().manual_seed(1)
    images = torch.randn(2, 3, 8, 8, generator=g)
    masks = torch.zeros(2, 8, 8, dtype=torch.long)
    masks[:, 2:6, 2:6] = 1
    masks[1, 4:, 4:] = 2
    masks[:, 1, 1:7] = 255  # void boundary pixels
    masks[:, 6, 1:7] = 255
    return images, masks


def step(watch, ignore: bool = False):
    torch.manual_seed(0)
    model = TinySeg()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    criterion = nn.CrossEntropyLoss(ignore_index=255) if ignore else nn.CrossEntropyLoss()
    images, masks = batch()
    error, loss = None, None
    try:
        with watch(model) as w:
            optimizer.zero_grad()
            loss = criterion(model(images), masks)
            loss.backward()
            optimizer.step()
    except IndexError as e:
        error = e
    return Run(
        w=w, model=model, error=error, loss=None if loss is None else loss.item(), masks=masks
    )


def truth(run):
    assert isinstance(run.error, IndexError) and "255" in str(run.error)
    assert all(p.grad is None for p in run.model.parameters())
