"""Operators built for the tests of the operator pages' probes (``docs/_pages/opsupport.py``
and ``opformulas.py``): a stand-in for an OpInfo entry, and ``sin`` with a backward that can
be made wrong."""

from __future__ import annotations

from types import SimpleNamespace

import torch


def fake_op(fn, name="fake", dtypes=(torch.float64, torch.complex128), shapes=((3, 4),)):
    """An object with the parts of an OpInfo entry the probe reads."""

    def sample_inputs(device, dtype, requires_grad=False):
        torch.manual_seed(0)
        for shape in shapes:
            args = [torch.randn(s, dtype=dtype, requires_grad=requires_grad)
                    for s in (shape if isinstance(shape[0], tuple) else (shape,))]
            yield SimpleNamespace(input=args[0], args=tuple(args[1:]), kwargs={},
                                  output_process_fn_grad=lambda out: out)

    return SimpleNamespace(
        name=name, variant_test_name="", supports_autograd=True, decorators=(),
        gradcheck_nondet_tol=0.0, sample_inputs=sample_inputs,
        supported_dtypes=lambda device: set(dtypes), get_op=lambda: fn,
        gradcheck_wrapper=lambda op, *a, **k: op(*a, **k))


class Scaled(torch.autograd.Function):
    """sin with a backward multiplied by ``factor`` (1: right)."""

    factor = 1.0

    @staticmethod
    def forward(x):
        return torch.sin(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return Scaled.factor * g * torch.cos(x)
