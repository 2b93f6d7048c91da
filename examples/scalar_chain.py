"""Start the backward pass anywhere in a chain

The code of the page docs/tutorial/scalar-chain.md, cell by cell,
generated from that page by docs/tools/visible_code.py
(edit the page, then run `python docs/tools/visible_code.py --write`).

Run: python examples/scalar_chain.py
"""

# %%
import torch

import gradarg


def chain(a_value):
    """a -> b = a*a -> c = 8*b -> d = log(c), on a fresh leaf a."""
    a = torch.tensor(a_value, requires_grad=True)
    b = a * a
    c = 8 * b
    d = torch.log(c)
    return {"a": a, "b": b, "c": c, "d": d}


nodes = chain(5.0)
trace = gradarg.trace_backward(nodes["d"], names=nodes)   # runs d.backward()
print(f'c = {gradarg.fmt(nodes["c"])}  a.grad = {gradarg.fmt(nodes["a"].grad)}')
trace.player()            # the drawing, to step through with next / previous

# %%
def grad_from(node, a_value, gradient=None):
    """a.grad after node.backward(gradient=...) on a fresh chain."""
    nodes = chain(a_value)
    nodes[node].backward(gradient=gradient)
    return nodes["a"].grad


c = chain(5.0)["c"].detach()
from_c = grad_from("c", 5.0, gradient=1 / c)   # c.backward(gradient=dd/dc)
from_b = grad_from("b", 5.0, gradient=8 / c)   # b.backward(gradient=dd/db)
print(f"from c: a.grad = {gradarg.fmt(from_c)}   "
      f"from b: a.grad = {gradarg.fmt(from_b)}")

# %%
a_values = [1.0, 2.0, 3.0]
nodes = chain(a_values)
nodes["d"].sum().backward()                      # e = sum(d)
print(f'from e: a.grad = {gradarg.fmt(nodes["a"].grad)}')
c_vec = nodes["c"].detach()
for node, v in [("d", torch.ones(3)), ("c", 1 / c_vec), ("b", 8 / c_vec)]:
    print(f"from {node}, gradient={gradarg.fmt(v)}: "
          f"a.grad = {gradarg.fmt(grad_from(node, a_values, v))}")

# %%
vec_nodes = chain(a_values)
gradarg.trace_backward(vec_nodes["d"], torch.ones(3), names=vec_nodes).player()
