"""Detection on convolutions however their arguments are written: an int or a tuple for
stride, dilation and padding, ``padding='valid'`` or ``'same'``, any number of spatial
dimensions (aten receives a single value for every dimension in some of these).  The oracle
is the dense Jacobian's non-zeros (all-ones weights, so none cancels): the pattern must hold
every one (and, for a convolution, exactly those)."""

from __future__ import annotations

import warnings

import torch
import torch.nn.functional as F
from hypothesis import assume, given
from hypothesis import strategies as st

import gradarg

D = torch.float64
CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}


@st.composite
def conv_cases(draw):
    dims = draw(st.integers(1, 3))
    size = [draw(st.integers(3, 6 if dims < 3 else 4)) for _ in range(dims)]
    kernel = [draw(st.integers(1, 3)) for _ in range(dims)]
    as_tuple = draw(st.booleans())
    stride = [draw(st.integers(1, 2)) for _ in range(dims)]
    dilation = [draw(st.integers(1, 2)) for _ in range(dims)]
    padding = draw(st.sampled_from(["valid", "same", "int", "tuple"]))
    if padding == "same":
        stride = [1] * dims  # torch refuses 'same' with a stride
    if padding == "int":
        padding = draw(st.integers(0, 1))
    elif padding == "tuple":
        padding = tuple(draw(st.integers(0, 1)) for _ in range(dims))

    def arg(v):
        return tuple(v) if as_tuple or len(set(v)) > 1 else v[0]

    groups = draw(st.sampled_from([1, 2]))
    return dims, size, kernel, arg(stride), arg(dilation), padding, groups


@given(conv_cases())
def test_a_convolution_pattern_is_its_jacobian_s_non_zeros(case):
    dims, size, kernel, stride, dilation, padding, groups = case
    weight = torch.ones(2, 2 // groups, *kernel, dtype=D)
    x = torch.rand(1, 2, *size, dtype=D)

    def f(t):
        return CONV[dims](t, weight, stride=stride, padding=padding, dilation=dilation,
                          groups=groups)

    with warnings.catch_warnings():  # 'same' with an even kernel: torch's copy warning
        warnings.simplefilter("ignore", UserWarning)
        try:
            y = f(x)
        except RuntimeError:  # a kernel larger than the (padded) input: torch refuses it too
            assume(False)
        assume(y.numel() > 0)
        found = gradarg.jacobian_sparsity(f, x, layout=torch.strided)
        nonzero = torch.autograd.functional.jacobian(f, x) != 0
    assert found.shape == nonzero.shape
    assert not (nonzero & ~found).any()  # nothing missed
    assert torch.equal(found, nonzero)  # and nothing extra: a convolution's rule is exact
