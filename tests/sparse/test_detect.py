"""jacobian_sparsity / hessian_sparsity against dense Jacobians and Hessians at random points."""

import itertools

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from problems import brusselator, stencil_1d, stencil_2d

from gradarg import SparseJacobian, UnsupportedOpError, hessian_sparsity, jacobian_sparsity

D = torch.float64


def true_pattern(f, x, points=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    nz = None
    for _ in range(points):
        j = torch.func.jacrev(f)(torch.randn(x.shape, generator=g, dtype=D)) != 0
        nz = j if nz is None else nz | j
    return nz


W1 = torch.randn(3, 2, 3, dtype=D, generator=torch.Generator().manual_seed(1))
W2 = torch.randn(4, 2, 3, 3, dtype=D, generator=torch.Generator().manual_seed(2))
NET = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.Tanh(), torch.nn.Linear(6, 3)).double()
_G = torch.Generator().manual_seed(4)
W2S = torch.randn(4, 2, 3, 3, dtype=D, generator=_G)
W2S[:, :, 1, 1] = 0  # the centre of every kernel: its zeros stay zeros
W3 = torch.randn(2, 2, 2, 3, 2, dtype=D, generator=_G)
WT1 = torch.randn(2, 3, 3, dtype=D, generator=_G)
WT2 = torch.randn(4, 1, 3, 2, dtype=D, generator=_G)
WT3 = torch.randn(2, 2, 2, 2, 2, dtype=D, generator=_G)
LN = torch.nn.LayerNorm(4).double()
BN_W, BN_B = torch.rand(3, dtype=D) + 0.5, torch.rand(3, dtype=D)


def BN_TRAIN(x):  # batch statistics, no running ones (torch.func refuses their in-place update)
    return F.batch_norm(x, None, None, BN_W, BN_B, training=True)


BN_EVAL = torch.nn.BatchNorm1d(3).double().eval()
GN = torch.nn.GroupNorm(2, 4).double()
A = torch.randn(6, 6, dtype=D, generator=torch.Generator().manual_seed(3))
A[A.abs() < 0.7] = 0


def moves(x):
    e = torch.zeros(7, dtype=x.dtype)
    e[2:5] = x[:3] * 2
    e[0] += x[6]
    s = torch.stack([x[1:], x[:-1]]).sum(0)
    return torch.cat([x[:2], x[3:], x[torch.tensor([0, 0, 4])], e, s, F.pad(x, (2, 1), value=3.0)])


CASES = {
    "stencil 1-D": (stencil_1d, (40,)),
    "stencil 2-D": (stencil_2d, (8, 8)),
    "brusselator 32x32": (brusselator, (2, 32, 32)),
    "conv1d": (lambda x: F.conv1d(x, W1, padding=1, stride=2), (2, 2, 9)),
    "conv2d groups": (lambda x: torch.tanh(F.conv2d(x, W2, padding=1, groups=2)), (2, 4, 6, 5)),
    "per-sample MLP": (NET, (5, 4)),
    "cumsum cumprod": (lambda x: x.cumsum(0) * x.cumprod(0), (6,)),
    "cat stack index padding": (moves, (7,)),
    "reductions": (lambda x: torch.cat([x.sum(0), x.mean(1), x.norm(dim=0), x.sum().reshape(1)]),
                   (3, 4)),
    "softmax": (lambda x: x.softmax(1), (3, 4)),
    "constant matmul": (lambda x: A @ x + (x @ A.T).sin(), (6,)),
    "bmm": (lambda x: torch.bmm(x, x.transpose(1, 2)), (2, 3, 4)),
    "conv2d dilated, zeros in the weight": (lambda x: F.conv2d(x, W2S, padding=(1, 2),
                                                             dilation=(1, 2)), (1, 2, 5, 6)),
    "conv3d": (lambda x: F.conv3d(x, W3, padding=(1, 0, 1), stride=(2, 1, 1)), (1, 2, 4, 5, 3)),
    "conv_transpose1d": (lambda x: F.conv_transpose1d(x, WT1, stride=2, padding=1,
                                                      output_padding=1), (2, 2, 5)),
    "conv_transpose2d groups": (lambda x: F.conv_transpose2d(
        x, WT2, stride=(2, 1), padding=(1, 0), groups=2, dilation=(1, 2)), (1, 4, 3, 4)),
    "conv_transpose3d": (lambda x: F.conv_transpose3d(x, WT3, stride=2), (1, 2, 2, 3, 2)),
    "layer norm": (lambda x: LN(x) + F.layer_norm(x, (5, 4)), (3, 5, 4)),
    "batch norm, training": (BN_TRAIN, (4, 3, 2, 2)),
    "batch norm, evaluation": (BN_EVAL, (5, 3)),
    "group norm": (GN, (2, 4, 3)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_detection_equals_dense_jacobian_nonzeros(name):
    f, shape = CASES[name]
    x = torch.zeros(shape, dtype=D)
    p = jacobian_sparsity(f, x, layout=torch.strided)
    assert torch.equal(p, true_pattern(f, x))
    assert torch.equal(jacobian_sparsity(f, x).to_dense(), p)


def test_where_and_max_are_conservative():
    def f(x):
        return torch.cat([torch.where(x > 0, x, x[[1, 2, 0]] ** 2), x.amax().reshape(1)])

    x = torch.zeros(3, dtype=D)
    p = jacobian_sparsity(f, x, layout=torch.strided)
    assert p[:3].sum() == 6 and p[3].all()
    assert not (true_pattern(f, x) & ~p).any()


@settings(max_examples=20, deadline=None)
@given(st.integers(2, 6), st.integers(2, 6), st.integers(0, 3), st.integers(0, 10**6))
def test_never_smaller_than_the_true_pattern(m, n, shift, seed):
    g = torch.Generator().manual_seed(seed)
    B = torch.randn(m, n, dtype=D, generator=g) * (torch.rand(m, n, generator=g) < 0.5)

    def f(x):
        y = torch.roll(x, shift, 0) * x.exp()
        return torch.cat([B @ torch.tanh(y), y.cumsum(0)[: m], x[: 1].expand(2)])

    x = torch.randn(n, dtype=D, generator=g)
    p = jacobian_sparsity(f, x, layout=torch.strided)
    assert not (true_pattern(f, x, seed=seed) & ~p).any()


def test_pattern_feeds_sparse_jacobian():
    x = torch.rand(300, dtype=D)
    sj = SparseJacobian(jacobian_sparsity(stencil_1d, x), x.shape)
    assert sj.passes == 3
    assert torch.allclose(sj(stencil_1d, x).to_dense(), torch.func.jacrev(stencil_1d)(x))


def test_hessian_of_local_energy_is_exact():
    def energy(u):
        return ((u[1:] - u[:-1]) ** 2).sum() + torch.cos(u).sum() + u[0] * u[5] + (2 * u).relu().sum()

    x = torch.zeros(8, dtype=D)
    p = hessian_sparsity(energy, x, layout=torch.strided)
    h = torch.func.hessian(energy)(torch.randn(8, dtype=D)) != 0
    assert torch.equal(p, h) and torch.equal(p, p.T)


def test_hessian_needs_a_scalar():
    with pytest.raises(ValueError, match="scalar"):
        hessian_sparsity(torch.sin, torch.zeros(3))


def test_unsupported_op_names_it():
    with pytest.raises(UnsupportedOpError, match=r"aten\._to_sparse.*sparsity_pattern"):
        jacobian_sparsity(lambda x: x.to_sparse().to_dense(), torch.zeros(4))


def test_value_dependent_indices_and_python_numbers_are_refused():
    with pytest.raises(UnsupportedOpError, match="indices computed"):
        jacobian_sparsity(lambda x: x.gather(0, (x > 0).long()), torch.zeros(4))
    with pytest.raises(UnsupportedOpError, match="Python number"):
        jacobian_sparsity(lambda x: x[x.argmax()], torch.zeros(4))
    with pytest.raises(UnsupportedOpError, match="Python number"):
        jacobian_sparsity(lambda x: x * x.sum().item(), torch.zeros(4))


def test_bad_input_and_caller_tensor_untouched():
    with pytest.raises(TypeError, match="floating"):
        jacobian_sparsity(torch.sin, torch.zeros(3, dtype=torch.int64))
    x = torch.ones(3)
    jacobian_sparsity(lambda u: u.mul_(2), x)
    assert torch.equal(x, torch.ones(3))


def test_batch_norm_module_in_training_updates_its_statistics_and_is_detected():
    bn = torch.nn.BatchNorm1d(3).double().train()
    x = torch.zeros(4, 3, dtype=D)
    p = jacobian_sparsity(bn, x, layout=torch.strided)
    # each output depends on its channel across the batch: 4 entries
    assert p.sum(dim=(2, 3)).eq(4).all()
    assert torch.equal(p, true_pattern(BN_TRAIN, x))


def test_normalisation_with_weights_computed_from_x_is_refused():
    with pytest.raises(UnsupportedOpError, match="weight computed from x"):
        jacobian_sparsity(lambda x: F.layer_norm(x, (3,), weight=x[0] * 2), torch.zeros(2, 3, dtype=D))


def test_layer_norm_hessian_is_block_diagonal_by_row():
    def energy(x):
        return (F.layer_norm(x, (4,)) ** 3).sum()

    x = torch.randn(3, 4, dtype=D, generator=torch.Generator().manual_seed(5))
    p = hessian_sparsity(energy, x, layout=torch.strided).reshape(12, 12)
    rows = torch.arange(12) // 4
    assert torch.equal(p, rows[:, None] == rows[None, :])  # one dense 4 x 4 block per row
    assert torch.equal(torch.func.hessian(energy)(x).reshape(12, 12) != 0, p)


ORDER = {
    "sort": (lambda x: x.sort(1).values * 2, (3, 4), 1),
    "topk": (lambda x: x.topk(2, dim=1).values, (3, 5), 1),
    "kthvalue": (lambda x: x.kthvalue(2, dim=0).values, (3, 4), 0),
    "median keepdim": (lambda x: x.median(1, keepdim=True).values, (3, 4), 1),
    "msort": (torch.msort, (3, 4), 0),
}


@pytest.mark.parametrize("name", list(ORDER))
def test_order_statistics_depend_on_their_whole_slice(name):
    """Which element a sorted position holds depends on the values: for some input it can be
    any element of its slice, so the global pattern is the whole slice (built by hand here)."""
    f, shape, dim = ORDER[name]
    x = torch.zeros(shape, dtype=D)
    p = jacobian_sparsity(f, x, layout=torch.strided)
    y_shape = tuple(f(x).shape)
    lead = [s for k, s in enumerate(shape) if k != dim]
    slices = torch.arange(x.numel()).reshape(shape).movedim(dim, -1).reshape(-1, shape[dim])
    want = torch.zeros(*y_shape, x.numel(), dtype=torch.bool)
    for y_index in itertools.product(*[range(s) for s in y_shape]):
        other = [i for k, i in enumerate(y_index) if k != dim or len(y_shape) < len(shape)]
        k = 0
        for i, s in zip(other, lead, strict=True):
            k = k * s + i
        want[y_index][slices[k]] = True
    assert torch.equal(p, want.reshape(*y_shape, *shape))
    assert not (true_pattern(f, x) & ~p).any()


def test_transposed_convolution_with_a_weight_from_x_is_refused():
    def f(x):
        return F.conv_transpose1d(x[:, :2], x[:2, :2] * 2)

    with pytest.raises(UnsupportedOpError, match="transposed"):
        jacobian_sparsity(f, torch.zeros(2, 2, 3, dtype=D))


def test_an_lstm_over_a_sequence_is_causal_and_covers_its_jacobian():
    """nn.LSTM splits its gates with aten.unsafe_split: the detected pattern holds every
    non-zero of the Jacobian at random inputs, and no output depends on a later time step."""
    torch.manual_seed(0)
    lstm = torch.nn.LSTM(3, 4, batch_first=True).double()
    steps = 5

    def f(u):
        return lstm(u.view(1, steps, 3))[0].flatten()

    x = torch.randn(steps * 3, dtype=torch.float64)
    P = jacobian_sparsity(f, x).to_dense()
    for _ in range(3):
        J = torch.func.jacfwd(f)(torch.randn_like(x))
        assert not (J != 0)[~P].any()
    t_out = torch.arange(steps * 4) // 4
    t_in = torch.arange(steps * 3) // 3
    assert not P[t_out[:, None] < t_in[None, :]].any()  # causal
    assert P[t_out[:, None] >= t_in[None, :]].all()  # and every earlier step matters
