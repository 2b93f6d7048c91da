import torch

import gradarg


def test_jacobian_of_square_is_diagonal_of_2x():
    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    assert torch.equal(gradarg.jacobian(lambda t: t**2, x), torch.diag(2 * x))
