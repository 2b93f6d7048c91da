"""Cost of ``gradarg.watch`` and ``gradarg.trace_backward`` against a plain training step.

Run as ``python benchmarks/watch.py`` (``nox -s bench`` runs it with ``OMP_NUM_THREADS=1``).
Four models, each with a batch, a loss and SGD:

- a 10-layer MLP (``Linear`` width 256 with ReLU between, batch 64, float32);
- ``nn.TransformerEncoderLayer`` (d_model 128, 4 heads, feed-forward 256, batch 16 × 32
  tokens);
- ``nn.LSTM`` (input 64, hidden 128, 2 layers, batch 16 × 32 steps);
- a small CNN (two 3×3 convolutions, 16 and 32 channels, on 16 × 1 × 28 × 28, then a Linear).

One sample times one whole step: ``zero_grad``, forward, loss, backward, ``optimizer.step``.
Variants: plain; inside ``gradarg.watch(model)`` entered for that one step (the step of a block
recorded in full; entering and leaving the block, and reading the record, are timed
separately, per call); and with ``gradarg.trace_backward(loss)`` in place of
``loss.backward()``.  Two more run on twin models (the same seed) watched by one block kept on
over the whole run, as a watched training loop is: ``loop``, ``gradarg.watch(model)`` (the
default, ``full_steps=3``: steps after the third light while healthy, the recorder's
module-call hooks replaced by the light notes of ``trace/watching/sentinel.py``, the checks of
what the optimizer reads run), and ``full loop``, ``gradarg.watch(model, full_steps=None)``
(every step recorded in full, each new step dropping the last one's record); their ratios are
taken against a third twin stepped plain (a model of its own, as cold in the caches).  While
those blocks are on, their global hooks (optimizer steps, ``backward()`` calls) also run
during the other variants' steps, a few microseconds each. Samples of the
variants alternate in a shuffled order per repeat, so machine noise hits all alike; each
figure is a ratio of medians. Target for ``watch`` on the MLP: at most 1.3x in a watched loop
by default ('loop'); a block entered for one step ('watch') records that step in full, as
the first steps of every block are.

The MLP's steps do not train it: at PyTorch's default initialisation its gradients vanish
through the ten layers, and an SGD step at ``lr=1e-4`` leaves at least half the entries of 17
of its 20 parameters bit for bit unchanged (99 % of the first layer's; checked with torch
alone, comparing the weights before and after ``optimizer.step()``; still 6 of 20 at
``lr=1.0``).  So every step of 'loop' takes the watch's path for that finding (it names the
parameters the step left unchanged): after the step, the sampled entries of every
parameter's ``.grad`` are read as well as its weights (in ``stepmoves.StepMoves.after``),
where a step that moves every parameter stops after comparing the weights. ``--clock cpu``
times process CPU time instead of wall time (for a machine busy with other work).

``--floor`` adds a fourth variant: the hooks ``watch`` puts on, with bodies that do nothing but
take the same gradient norms (forward pre-hook and hook on every module, a ``Node`` pre-hook on
each module output's ``grad_fn``, a tensor hook and a post-accumulate-grad hook on every
parameter, ``vector_norm(...).item()`` of every gradient a hook sees): what ``watch`` would cost
with no bookkeeping at all, the lower bound of this design.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import torch

import gradarg


def mlp():
    torch.manual_seed(0)
    mods = []
    for i in range(10):
        mods.append(torch.nn.Linear(256, 256))
        if i < 9:
            mods.append(torch.nn.ReLU())
    net = torch.nn.Sequential(*mods)
    x, y = torch.randn(64, 256), torch.randn(64, 256)
    return net, lambda: torch.nn.functional.mse_loss(net(x), y)


def transformer():
    torch.manual_seed(0)
    net = torch.nn.TransformerEncoderLayer(128, 4, dim_feedforward=256, dropout=0.0,
                                           batch_first=True)
    x = torch.randn(16, 32, 128)
    return net, lambda: net(x).pow(2).mean()


def lstm():
    torch.manual_seed(0)
    net = torch.nn.LSTM(64, 128, num_layers=2, batch_first=True)
    x = torch.randn(16, 32, 64)
    return net, lambda: net(x)[0].pow(2).mean()


def cnn():
    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Conv2d(1, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Flatten(), torch.nn.Linear(32 * 7 * 7, 10))
    x, y = torch.randn(16, 1, 28, 28), torch.randint(0, 10, (16,))
    return net, lambda: torch.nn.functional.cross_entropy(net(x), y)


MODELS = {"10-layer MLP": mlp, "TransformerEncoderLayer": transformer, "LSTM": lstm,
          "small CNN": cnn}


CLOCK = time.perf_counter


def step(net, opt, loss_fn, how: str) -> float:
    t0 = CLOCK()
    opt.zero_grad(set_to_none=True)
    loss = loss_fn()
    if how == "trace":
        gradarg.trace_backward(loss)
    else:
        loss.backward()
    opt.step()
    return CLOCK() - t0


def floor_hooks(net: torch.nn.Module) -> list:
    """The hooks of ``watch`` with bodies that only take the gradient norms (see ``--floor``)."""
    handles: list = []
    norms: list[float] = []

    def node_prehook(grads):
        for g in grads:
            if g is not None:
                norms.append(torch.linalg.vector_norm(g).item())

    def post(module, args, out):
        for t in (out,) if isinstance(out, torch.Tensor) else _tensors_in(out):
            if t.grad_fn is not None:
                handles.append(t.grad_fn.register_prehook(node_prehook))

    for m in net.modules():
        handles.append(m.register_forward_pre_hook(lambda module, args: None))
        handles.append(m.register_forward_hook(post))
    for p in net.parameters():
        handles.append(p.register_hook(
            lambda g: norms.append(torch.linalg.vector_norm(g).item())))
        handles.append(p.register_post_accumulate_grad_hook(lambda t: None))
    return handles


def _tensors_in(value) -> list[torch.Tensor]:
    """The tensors in nested tuples and lists (an LSTM returns ``(out, (h, c))``)."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _tensors_in(v)]
    return []


def measure(make, repeats: int, floor: bool = False) -> dict[str, float]:
    net, loss_fn = make()
    opt = torch.optim.SGD(net.parameters(), lr=1e-4)
    watcher = gradarg.watch(net)
    watcher.remove()
    times: dict[str, list[float]] = {"plain": [], "watch": [], "trace": [], "enter": [],
                                     "floor": [], "loop": [], "full loop": [], "twin": []}
    rng = random.Random(0)
    # a model per kept-on block, and a third one stepped plain: the ratio of a block's steps
    # is taken against it (the models of the other variants share one model, whose weights
    # stay warmer in the caches: a twin would look slower for that alone)
    twins, blocks = {}, []
    for how in ("loop", "full loop", "twin"):
        tnet, tloss = make()
        twins[how] = (tnet, torch.optim.SGD(tnet.parameters(), lr=1e-4), tloss)
        if how == "loop":
            blocks.append(gradarg.watch(tnet))  # the default
        elif how == "full loop":
            blocks.append(gradarg.watch(tnet, full_steps=None))

    def run(how: str) -> float:
        if how in twins:
            tnet, topt, tloss = twins[how]
            return step(tnet, topt, tloss, "plain")
        if how == "floor":
            handles = floor_hooks(net)
            try:
                return step(net, opt, loss_fn, "plain")
            finally:
                for h in handles:
                    h.remove()
        if how != "watch":
            return step(net, opt, loss_fn, how)
        t0 = time.perf_counter()
        w = gradarg.watch(net)
        entered = time.perf_counter() - t0
        try:
            return step(net, opt, loss_fn, "plain")
        finally:
            t1 = time.perf_counter()
            w.summary()  # read the record once: the norms are synchronised here
            w.remove()
            times["enter"].append(entered + time.perf_counter() - t1)

    variants = ["plain", "watch", "trace", "loop", "full loop", "twin"] + (["floor"] if floor else [])
    for how in variants * 2:  # warm-up
        run(how)
    times["enter"].clear()
    for _ in range(repeats):
        order = list(variants)
        rng.shuffle(order)
        for how in order:
            times[how].append(run(how))
    for w in blocks:
        w.remove()
    plain, twin = statistics.median(times["plain"]), statistics.median(times["twin"])
    out = {"plain_ms": plain * 1e3,
           "watch": statistics.median(times["watch"]) / plain,
           "enter_exit_ms": statistics.median(times["enter"]) * 1e3,
           "trace": statistics.median(times["trace"]) / plain,
           "loop": statistics.median(times["loop"]) / twin,
           "full_loop": statistics.median(times["full loop"]) / twin}
    if floor:
        out["floor"] = statistics.median(times["floor"]) / plain
    return out


def main(argv=None) -> dict[str, dict[str, float]]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=40)
    ap.add_argument("--clock", choices=["wall", "cpu"], default="wall")
    ap.add_argument("--floor", action="store_true",
                    help="also time the same hooks with bodies that only take the norms")
    args = ap.parse_args(argv)
    global CLOCK
    CLOCK = time.process_time if args.clock == "cpu" else time.perf_counter
    print(f"watch and trace_backward against a plain training step (torch {torch.__version__}, "
          f"{torch.get_num_threads()} thread(s), {args.clock} clock, median of {args.repeats} "
          f"interleaved steps):")
    floor_head = f" {'floor':>7}" if args.floor else ""
    print(f"  {'model':<24} {'plain step':>11} {'watch':>8} {'trace_backward':>15} "
          f"{'watch on+off':>13} {'loop':>7} {'full loop':>10}{floor_head}")
    results = {}
    for name, make in MODELS.items():
        r = measure(make, args.repeats, args.floor)
        results[name] = r
        floor_col = f" {r['floor']:>6.2f}x" if args.floor else ""
        print(f"  {name:<24} {r['plain_ms']:>8.2f} ms {r['watch']:>7.2f}x {r['trace']:>14.2f}x "
              f"{r['enter_exit_ms']:>10.2f} ms {r['loop']:>6.2f}x {r['full_loop']:>9.2f}x{floor_col}")
    print("  ratios: step time / plain step time; 'watch on+off': attaching the hooks, reading "
          "the record and removing them, per step (not in the watch ratio); 'loop': one "
          "watch kept on over the run, by default (full_steps=3: light steps after the "
          "third); 'full loop': the same with full_steps=None, every step in full (both "
          "against a twin model stepped plain)"
          + ("; 'floor': the same hooks, bodies that only take the norms" if args.floor else "")
          + ". Target: <= 1.3x on the MLP for a watched loop by default ('loop'); a block of "
          "one step ('watch') is recorded in full.")
    return results


if __name__ == "__main__":
    main()
