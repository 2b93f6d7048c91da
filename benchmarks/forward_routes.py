"""How ``gradarg.jacobian``'s forward route chooses between its batched paths.

For a few layers (``F.linear`` with and without bias, tanh / relu / softmax), one torch thread,
this times the double-VJP (``gradarg.core.forward.forward_by_double_vjp``: the derivative of a
VJP with respect to its upstream gradient, batched with ``is_grads_batched``) against the best
forward-mode path (torch's vectorized forward mode for graphs of ``LEGACY_FAST_BACKWARD`` nodes,
else ``torch.func`` vmap over jvp), and prints which one ``jacobian(method="auto")`` takes.
The double-VJP is used only where the graph has a node of ``DOUBLE_VJP_WINS`` (a linear layer's
bias), where it measured faster.

Run as ``OMP_NUM_THREADS=1 python benchmarks/forward_routes.py``.  Not part of ``nox -s bench``:
it is how the rule was chosen; the bench's ``mlp 16->512`` and ``matmul 16->512`` rows guard it.
"""

from __future__ import annotations

import statistics

import torch
import torch.nn.functional as F
from timing import sample

from gradarg.core import forward


def _layers(n_in: int, hidden: int, n_out: int) -> dict:
    g = torch.Generator().manual_seed(0)
    w1 = torch.randn(hidden, n_in, generator=g) / n_in**0.5
    b1 = torch.randn(hidden, generator=g) * 0.1
    w2 = torch.randn(n_out, hidden, generator=g) / hidden**0.5
    b2 = torch.randn(n_out, generator=g) * 0.1
    w = torch.randn(n_out, n_in, generator=g) / n_in**0.5
    b = torch.randn(n_out, generator=g) * 0.1
    return {
        "linear, no bias": lambda t: F.linear(t, w),
        "linear + bias": lambda t: F.linear(t, w, b),
        "tanh(linear), no bias": lambda t: torch.tanh(F.linear(t, w)),
        "tanh(linear + bias)": lambda t: torch.tanh(F.linear(t, w, b)),
        "2 layers tanh, no bias": lambda t: F.linear(torch.tanh(F.linear(t, w1)), w2),
        "2 layers tanh + bias": lambda t: F.linear(torch.tanh(F.linear(t, w1, b1)), w2, b2),
        "2 layers relu + bias": lambda t: F.linear(torch.relu(F.linear(t, w1, b1)), w2, b2),
        "softmax(linear + bias)": lambda t: torch.softmax(F.linear(t, w, b), -1),
    }


def _median_ms(fn, repeats: int = 15) -> float:
    number = max(1, int(0.002 / max(sample(fn, 1), 1e-7)))
    return statistics.median(sample(fn, number) for _ in range(repeats)) * 1e3


def main() -> int:
    print(f"torch {torch.__version__} | threads {torch.get_num_threads()} | ms per Jacobian")
    print("| function | in -> out | double-VJP | forward mode | ratio | auto takes |")
    print("|---|---|---:|---:|---:|---|")
    for n_in, n_out in [(16, 512), (64, 256), (256, 1024)]:
        x = torch.randn(n_in, generator=torch.Generator().manual_seed(n_in))
        for label, fn in _layers(n_in, 256, n_out).items():
            if forward.forward_by_double_vjp(fn, (x,)) is None:
                continue
            double = _median_ms(lambda fn=fn, x=x: forward.forward_by_double_vjp(fn, (x,)))
            fwd = _median_ms(
                lambda fn=fn, x=x: forward.forward_vectorized(fn, (x,), allow_double=False)
            )
            plan = forward._legacy_forward_plan(fn, (x,), True)[0]
            print(f"| {label} | {n_in} -> {n_out} | {double:.3f} | {fwd:.3f} | "
                  f"{double / fwd:.2f} | {plan} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
