"""The sparsity rules, one module per family of ATen operators; importing this package
registers them all in :data:`~gradarg.sparse.detect.registry.RULES`.

A new operator: add its name to the ``register(...)`` call of the rule it follows, or write a
rule (``rule(tr, func, args, kwargs, outs) -> list[Dep | None]``) in its family's module, and
a test against dense Jacobians in ``tests/sparse/test_detect_rules.py``.
"""

from . import (
    blocks,
    convolution,
    fft,
    moves,
    normalization,
    order,
    pointwise,
    pooling,
    products,
    reductions,
    scatter,
)

__all__ = ["blocks", "convolution", "fft", "moves", "normalization", "order", "pointwise",
           "pooling", "products", "reductions", "scatter"]
