"""The classic small examples of the ``gradient`` argument, each of which must stay on a page.

Every example is listed by the page that shows it, what its visible code must contain (the
inputs, as a reader types them) and the numbers the built page must show (derived on paper,
never copied from a build). ``test_classic_examples.py`` checks the code in the page sources
(``nox -s tests``); ``tests/browser/test_classic_examples.py`` checks that the numbers are
visible on the built pages, as a reader's browser shows them (``nox -s browser``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Example:
    name: str
    page: str  # source path under docs/, without ".md"
    code: tuple[str, ...]  # fragments of the page's visible code cells
    shows: tuple[str, ...]  # text the built page shows (at 1280 px, collapsed parts excluded)


EXAMPLES = (
    # a = 5, b = a*a, c = 8b, d = log c: dd/da = 2/a = 0.4
    Example("the scalar chain, from its end",
            "tutorial/scalar-chain",
            ("a = torch.tensor(a_value, requires_grad=True)", "b = a * a", "c = 8 * b",
             "d = torch.log(c)", "chain(5.0)"),
            ("a.grad = 0.4",)),
    # c = 8 * 25 = 200: dd/dc = 1/200 = 0.005, dd/db = 8/200 = 0.04, both give a.grad = 0.4
    Example("the scalar chain, started at c and at b with their upstream gradients",
            "tutorial/scalar-chain",
            ('grad_from("c", 5.0, gradient=1 / c)', 'grad_from("b", 5.0, gradient=8 / c)'),
            ("c = 200", "from c: a.grad = 0.4", "from b: a.grad = 0.4", "0.005", "0.04")),
    # a = [1, 2, 3]: 2/a = [2, 1, 0.6667]; c = 8a² = [8, 32, 72], so 1/c = [0.125, 0.03125,
    # 0.01389] and 8/c = [1, 0.25, 0.1111]
    Example("the vector chain, from e = sum(d) and from d, c and b",
            "tutorial/scalar-chain",
            ("a_values = [1.0, 2.0, 3.0]", 'nodes["d"].sum().backward()',
             '("d", torch.ones(3)), ("c", 1 / c_vec), ("b", 8 / c_vec)'),
            ("from e: a.grad = [2, 1, 0.6667]", "from d, gradient=[1, 1, 1]",
             "from c, gradient=[0.125, 0.03125, 0.01389]",
             "from b, gradient=[1, 0.25, 0.1111]")),
    # DFME (arXiv 2011.14779): an estimated dL/dx handed to the generator's output
    Example("upstream gradients estimated for a black box, handed to gen_out.backward",
            "tutorial/black-box",
            ("gen_out.backward(upstream)",),
            ("2011.14779",)),
    # y = x**2 at 1: J = [[2]]; v = 1 gives 2, v = 100 gives 200
    Example("y = x**2 at x = 1, backward() and backward(tensor(100.)), against NumPy vᵀ·J",
            "tutorial/vjp-by-examples",
            ("x = torch.tensor(1.0, requires_grad=True)", "y = x**2", "torch.tensor(v)",
             "vT @ J"),
            ("y = x**2, v = None: returned None, x.grad = 2, vᵀ·J = [[2.]]",
             "y = x**2, v = 100.0: returned None, x.grad = 200, vᵀ·J = [[200.]]")),
    # y = x1 + x2 at [1, 2]: J = [[1, 1]]; v = 1 gives [1, 1], v = 100 gives [100, 100]
    Example("y = sum(x) at x = [1, 2], backward() and backward(tensor(100.)), against NumPy",
            "tutorial/vjp-by-examples",
            ("x = torch.tensor([1.0, 2.0], requires_grad=True)", "y = x.sum()", "vT @ J"),
            ("y = sum(x), v = None: x.grad = [1, 1], vᵀ·J = [[1. 1.]]",
             "y = sum(x), v = 100.0: x.grad = [100, 100], vᵀ·J = [[100. 100.]]")),
    # ones: y = x**2 at [1, 2, 3], both routes give 2x = [2, 4, 6]
    Example("a vector of ones is the upstream gradient of a sum",
            "tutorial/why-a-vector",
            ("y.backward(torch.ones_like(y))", "(x_sum**2).sum().backward()"),
            ("y.backward(ones): [2, 4, 6]", "y.sum().backward(): [2, 4, 6]")),
    # weights [0.2, 0.8] on [L1, L2] at x = [0.5, 2], t = [1, -1]:
    # 0.2 * 2(x - t) + 0.8 sign(x) = [-0.2 + 0.8, 1.2 + 0.8] = [0.6, 2]
    Example("weights instead of ones: v = [0.2, 0.8] on two losses",
            "tutorial/why-a-vector",
            ("w = torch.tensor([0.2, 0.8])", "losses.backward(gradient=w)"),
            ("losses.backward(w): [0.6, 2]",)),
    # F1, F2 on 2-vectors: the upstream gradient of u is vᵀJ2, then (vᵀJ2) J1
    Example("two maps x -> u -> z: vᵀJ2 carried into J1",
            "tutorial/why-a-vector",
            ("def F1(x):", "def F2(u):", "z.backward(gradient=v)"),
            ("vᵀJ2 =", "(vᵀJ2)J1 =")),
    # x = randn(3), x.sum().backward(): ones
    Example("a random x, y = x.sum(), y.backward(): x.grad = [1, 1, 1]",
            "tutorial/why-a-vector",
            ("x = torch.randn(3, requires_grad=True)", "x.sum().backward()"),
            ("x.grad = [1, 1, 1]",)),
    # doubling until the norm passes 1000: x.grad = 2**k v
    Example("y = x * 2 doubled while its norm < 1000, backward([0.1, 1.0, 0.0001])",
            "tutorial/why-a-vector",
            ("x * 2", "while y.norm() < 1000:", "torch.tensor([0.1, 1.0, 0.0001])"),
            ("2**k =", "= 2**k v")),
    # the memory of a whole Jacobian against one VJP
    Example("why a vector and not the Jacobian: memory",
            "guide/why-not-build-j",
            ("jacrev",),
            ("peaked at",)),
    # x = [[2, 1]], M = [[1, 2], [3, 4]]: y = [[5, 8]], rows of J = Mᵀ: [1, 3], [2, 4], sum
    Example("y = torch.mm(x, M), one-hot gradients pick rows of J",
            "tutorial/matrix-product",
            ("M = torch.tensor([[1.0, 2.0], [3.0, 4.0]])", "torch.mm(x, M)",
             "torch.tensor([[2.0, 1.0]], requires_grad=True)"),
            ("gradient=[[1, 0]]  ->  x.grad = [[1, 3]]",
             "gradient=[[0, 1]]  ->  x.grad = [[2, 4]]",
             "gradient=[[1, 1]]  ->  x.grad = [[3, 7]]", "[[5, 8]]")),
)
