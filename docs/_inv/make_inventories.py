"""Write the intersphinx inventories the site links against, so the build never fetches them.

Sphinx's intersphinx accepts a local inventory file per project
(``intersphinx_mapping = {"torch": ("https://docs.pytorch.org/docs/stable/", "_inv/torch.inv")}``):
links point at the real documentation, but nothing is downloaded at build time.

Online, refresh the full inventories with ``python docs/_inv/make_inventories.py --download``
(it fetches each project's ``objects.inv``).  Offline (as on the build machines), this script
writes a subset covering every object the site refers to, with the URLs the projects publish;
``nox -s docs`` with ``-n`` (nitpicky) fails if a reference is not covered.  Needs ``sphobjinv``.
"""

from __future__ import annotations

import sys
import urllib.request
from pathlib import Path

import sphobjinv as soi

HERE = Path(__file__).parent

PROJECTS = {
    "python": ("Python", "3", "https://docs.python.org/3/"),
    "numpy": ("NumPy", "2", "https://numpy.org/doc/stable/"),
    "torch": ("PyTorch", "2", "https://docs.pytorch.org/docs/stable/"),
    "matplotlib": ("Matplotlib", "3", "https://matplotlib.org/stable/"),
}

# (name, role, relative uri with "$" standing for the name, as intersphinx abbreviates)
OBJECTS = {
    "python": [
        *[(n, "class", "library/functions.html#$") for n in
          ("int", "float", "complex", "bool", "str", "tuple", "list", "dict", "object")],
        ("callable", "function", "library/functions.html#$"),
        ("callable", "class", "library/functions.html#$"),  # as NumPy-style types name it
        *[(n, "exception", "library/exceptions.html#$") for n in
          ("TypeError", "ValueError", "RuntimeError", "NotImplementedError", "ImportError")],
        *[(n, "exception", "library/exceptions.html#$") for n in ("RuntimeWarning", "UserWarning")],
        ("collections.abc.Callable", "class", "library/collections.abc.html#$"),
        ("collections.abc.Sequence", "class", "library/collections.abc.html#$"),
        ("typing.Any", "data", "library/typing.html#$"),
        ("typing.Literal", "data", "library/typing.html#$"),
    ],
    "numpy": [
        ("numpy.ndarray", "class", "reference/generated/$.html#$"),
        ("numpy.einsum", "function", "reference/generated/$.html#$"),
    ],
    "torch": [
        ("torch.Tensor", "class", "tensors.html#$"),
        ("torch.Tensor.backward", "method", "generated/$.html#$"),
        ("torch.Tensor.grad", "attribute", "generated/$.html#$"),
        ("torch.dtype", "class", "tensor_attributes.html#$"),
        ("torch.Size", "class", "size.html#$"),
        ("torch.autograd.backward", "function", "generated/$.html#$"),
        ("torch.autograd.grad", "function", "generated/$.html#$"),
        ("torch.autograd.functional.jacobian", "function", "generated/$.html#$"),
        ("torch.autograd.Function", "class", "autograd.html#$"),
        ("torch.func.jacrev", "function", "generated/$.html#$"),
        ("torch.func.jacfwd", "function", "generated/$.html#$"),
        ("torch.func.vjp", "function", "generated/$.html#$"),
        ("torch.func.jvp", "function", "generated/$.html#$"),
        ("torch.func.vmap", "function", "generated/$.html#$"),
        ("torch.testing.assert_close", "function", "testing.html#$"),
    ],
    "matplotlib": [
        ("matplotlib.axes.Axes", "class", "api/_as_gen/$.html#$"),
    ],
}


def write_subset(key: str) -> Path:
    project, version, _ = PROJECTS[key]
    inv = soi.Inventory()
    inv.project, inv.version = project, version
    for name, role, template in OBJECTS[key]:
        # intersphinx expands only a trailing "$"; spell out any other
        uri = template[:-1].replace("$", name) + "$" if template.endswith("$") else template
        inv.objects.append(soi.DataObjStr(
            name=name, domain="py", role=role, priority="1", uri=uri, dispname="-"))
    path = HERE / f"{key}.inv"
    soi.writebytes(path, soi.compress(inv.data_file(contract=True)))
    return path


def download(key: str) -> Path:
    path = HERE / f"{key}.inv"
    with urllib.request.urlopen(PROJECTS[key][2] + "objects.inv", timeout=30) as resp:
        path.write_bytes(resp.read())
    return path


if __name__ == "__main__":
    action = download if "--download" in sys.argv else write_subset
    for key in PROJECTS:
        print("wrote", action(key))
