"""A two-block Swin Transformer whose second block shifts the windows with ``torch.roll`` (by half a
window), runs window attention and rolls back, without the attention mask of the shifted windows.
After the cyclic shift the last window along each axis is made of tokens from both edges of the
image, which the shift brought together; the mask is what stops them attending to each other.
Without it the top-left token attends to the bottom-right ones (its output after the second block
changes with the input at the opposite corner, which is 6 tokens away in each direction and in no
window with it in the first block): attention wraps around the image borders.  The loss is finite,
every gradient finite and nonzero; nothing raises.

Source: https://www.chipfoundryservices.com/topic/shifted-window-attention ("Shifted window
attention is the cross-window communication mechanism in Swin Transformer that shifts the window
partition grid by half a window size between consecutive transformer layers"; "Maintains Linear
Complexity: The shifting operation itself has zero computational cost — it's just a change in how
tokens are grouped, not an additional attention computation").  Adapted: the shift done as a cyclic
roll and nothing more; an 8 x 8 grid of 3-channel tokens embedded by ``Linear(3, 16)``, windows of
4, 2 heads, a regular block then a shifted one (pre-norm, MLP ``Linear(16, 32), GELU, Linear(32,
16)``), mean pooling and a head ``Linear(16, 4)``, 16 images labelled by their brightest quadrant,
Adam at 1e-3.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://www.chipfoundryservices.com/topic/shifted-window-attention"
DESCRIPTION = "Swin shifted windows by torch.roll without the attention mask: wraps across borders"
ASK = []
MUST = [
    [r"\bmask\w*", r"shift\w*", r"\broll\b|cyclic"],
    [
        r"(mask\w*)[^\n]{0,40}(missing|absent|not applied|omitted|forgot\w*|without)",
        r"(no|without( the)?) (attention )?mask",
        r"wrap\w*[- ]?around|wraps",
        r"(opposite|both) (edges?|sides?|borders?|corners?)",
        r"across (the )?(image )?(borders?|edges?|boundar\w*)",
        r"non-?adjacent|not adjacent",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b"]
SIZE, WINDOW, SHIFT, WIDTH, HEADS = 8, 4, 2, 16, 2


def partition(x):  # (B, H, W, C) -> (B * windows, WINDOW * WINDOW, C)
    b, h, w, c = x.shape
    x = x.view(b, h // WINDOW, WINDOW, w // WINDOW, WINDOW, c).transpose(2, 3)
    return x.reshape(-1, WINDOW * WINDOW, c)


def merge(windows, b):
    x = windows.view(b, SIZE // WINDOW, SIZE // WINDOW, WINDOW, WINDOW, -1).transpose(2, 3)
    return x.reshape(b, SIZE, SIZE, -1)


def shifted_window_mask():
    regions = torch.zeros(1, SIZE, SIZE, 1)
    spans = (slice(0, -WINDOW), slice(-WINDOW, -SHIFT), slice(-SHIFT, None))
    label = 0
    for hs in spans:
        for ws in spans:
            regions[:, hs, ws] = label
            label += 1
    ids = partition(regions).squeeze(-1)  # (windows, WINDOW * WINDOW)
    return ids[:, :, None] != ids[:, None, :]  # True where attention must be blocked


class SwinBlock(nn.Module):
    def __init__(self, shift, masked):
        super().__init__()
        self.shift, self.masked = shift, masked
        self.norm1 = nn.LayerNorm(WIDTH)
        self.qkv = nn.Linear(WIDTH, 3 * WIDTH)
        self.proj = nn.Linear(WIDTH, WIDTH)
        self.norm2 = nn.LayerNorm(WIDTH)
        self.mlp = nn.Sequential(nn.Linear(WIDTH, 32), nn.GELU(), nn.Linear(32, WIDTH))
        self.register_buffer("blocked", shifted_window_mask())

    def forward(self, x):  # (B, H, W, C)
        b = x.shape[0]
        h = self.norm1(x)
        if self.shift:
            h = torch.roll(h, shifts=(-SHIFT, -SHIFT), dims=(1, 2))
        win = partition(h)
        q, k, v = (
            self.qkv(win).view(win.shape[0], -1, 3, HEADS, WIDTH // HEADS).permute(2, 0, 3, 1, 4)
        )
        scores = q @ k.transpose(-1, -2) / (WIDTH // HEADS) ** 0.5  # (B * windows, heads, N, N)
        if self.shift and self.masked:
            blocked = self.blocked.repeat(b, 1, 1)[:, None]
            scores = scores.masked_fill(blocked, float("-inf"))
        out = (scores.softmax(-1) @ v).transpose(1, 2).reshape(win.shape[0], -1, WIDTH)
        h = merge(self.proj(out), b)
        if self.shift:
            h = torch.roll(h, shifts=(SHIFT, SHIFT), dims=(1, 2))
        x = x + h
        return x + self.mlp(self.norm2(x))


class TinySwin(nn.Module):
    def __init__(self, masked):
        super().__init__()
        self.embed = nn.Linear(3, WIDTH)
        self.blocks = nn.Sequential(SwinBlock(False, masked), SwinBlock(True, masked))
        self.head = nn.Linear(WIDTH, 4)

    def features(self, images):  # (B, H, W, 3)
        return self.blocks(self.embed(images))

    def forward(self, images):
        return self.head(self.features(images).mean((1, 2)))


def data():
    g = torch.Generator().manual_seed(1)
    images = torch.rand(16, SIZE, SIZE, 3, generator=g)
    quadrants = images[..., 0].view(16, 2, SIZE // 2, 2, SIZE // 2).mean((2, 4)).flatten(1)
    return images, quadrants.argmax(1)


def step(watch, masked=False):
    torch.manual_seed(0)
    model = TinySwin(masked)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    images, labels = data()
    with watch(model) as w:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(images), labels)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    probe = images.clone().requires_grad_(True)  # after the step: what the top-left token reads
    model.features(probe)[:, 0, 0].sum().backward()
    reach = probe.grad.abs().sum((0, 3))  # (H, W)
    model.zero_grad(set_to_none=True)
    return Run(w=w, model=model, loss=float(loss.detach()), grads=grads, reach=reach)


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert (
        float(run.reach[SIZE - 1, SIZE - 1]) > 0
    )  # the opposite corner reaches the top-left token
