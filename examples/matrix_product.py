"""One-hot `v` picks a row of the Jacobian

The code of the page docs/tutorial/matrix-product.md, cell by cell,
generated from that page by docs/tools/visible_code.py
(edit the page, then run `python docs/tools/visible_code.py --write`).

Run: python examples/matrix_product.py
"""

# %%
import torch

import gradarg

M = torch.tensor([[1.0, 2.0], [3.0, 4.0]])


def matmul(x):
    return torch.mm(x, M)


def grad_for(gradient):
    """x.grad after torch.autograd.backward(y, grad_tensors=gradient)."""
    x = torch.tensor([[2.0, 1.0]], requires_grad=True)
    y = matmul(x)
    torch.autograd.backward(y, grad_tensors=torch.tensor(gradient))
    return x.grad


x = torch.tensor([[2.0, 1.0]])
y = matmul(x)
GRADIENTS = {"[[1, 0]]": [[1.0, 0.0]], "[[0, 1]]": [[0.0, 1.0]],
             "[[1, 1]]": [[1.0, 1.0]]}
results = {label: grad_for(g) for label, g in GRADIENTS.items()}
for label, g in results.items():
    print(f"gradient={label}  ->  x.grad = {gradarg.fmt(g)}")

# %%
traces = []
for gradient in GRADIENTS.values():
    xl = torch.tensor([[2.0, 1.0]], requires_grad=True)
    y = xl @ M
    traces.append(gradarg.trace_backward(y, torch.tensor(gradient),
                                         names={"x": xl, "y": y, "M": M}))
gradarg.side_by_side(traces, [f"gradient={label}" for label in GRADIENTS])
