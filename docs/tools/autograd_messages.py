"""The autograd error and warning messages a user can hit, collected from the installed torch by a
fixed procedure, each triggered live, and matched with the question entry that prints it.

    python docs/tools/autograd_messages.py            # rewrite docs/questions/_data/autograd_messages.json
    python docs/tools/autograd_messages.py --check    # only report, write nothing

The procedure:

1. **Candidates, Python**: every string constant (an f-string's fixed parts joined) of at least 25
   characters inside a ``raise ...(...)`` or a ``warnings.warn(...)`` call in the autograd and
   functorch Python sources of the installed torch (``PY_SOURCES`` below).
2. **Candidates, C++**: ``strings -n 25`` on ``libtorch_cpu.so`` and ``libtorch_python.so``, kept
   when a line contains one of ``CPP_WORDS`` and reads as a sentence (five words or more), and
   dropped when it names JIT, ONNX, dispatcher, RPC or other internals (``CPP_DROP``).
3. **Kept**: by hand, from the candidates, the messages a user can trigger through the public API
   in ordinary code, each with a minimal trigger (``MESSAGES`` below: the message's fixed part and
   the code). Every trigger is run here, in one process, warnings recorded; a message counts as
   triggered only when the raised exception's text or a recorded warning contains the fixed part.
   A trigger is ``None`` when it needs hardware or processes this check does not have.
4. **Source**: ``python:<file>`` when the fixed part is in a Python candidate, else ``libtorch``
   when it is in a C++ candidate, else ``built`` (assembled at run time from pieces).
5. **Entry**: the question entry (``questions/<page>#<label>``) whose prose or heading quotes the
   message's distinctive part (``grep`` over ``docs/questions/*.md``), or None. With
   ``--built <html dir>``, also ``printed``: the pages and sections whose built HTML (cell outputs
   included) contain it, i.e. where the site prints the message live.
6. **Hits**: how often the message occurs in public threads, counted with the project's search
   tool (corpora ``issues`` and ``pages``, the distinctive words as the query); the tool is not
   callable from here, so counts are recorded in ``HITS`` by hand and copied into the JSON.
"""

from __future__ import annotations

import ast
import html
import json
import re
import subprocess
import sys
import time
import warnings
from pathlib import Path

import torch

DOCS = Path(__file__).resolve().parents[1]
OUT = DOCS / "questions" / "_data" / "autograd_messages.json"
TORCH = Path(torch.__file__).parent
PY_SOURCES = ["autograd", "func", "_functorch", "_tensor.py", "utils/checkpoint.py", "utils/hooks.py",
              "nn/utils/parametrize.py", "nn/utils/clip_grad.py", "nn/modules/module.py",
              "optim/optimizer.py", "amp/grad_scaler.py"]
CPP_LIBS = ["lib/libtorch_cpu.so", "lib/libtorch_python.so"]
CPP_WORDS = re.compile(r"grad|backward|inplace|in-place|leaf|version counter|requires_grad|saved|"
                       r"hook|jvp|vjp|vmap|checkpoint|retain_graph|create_graph", re.IGNORECASE)
CPP_DROP = re.compile(r"_Z|\.cpp|aten::|jit|TorchScript|onnx|dispatch|internal|TORCH_|rpc|"
                      r"dist autograd|kineto|mkl|dnnl|cudnn|xnnpack|guard|pybind|schema|mps|"
                      r"vulkan|quantiz|profil|lazy|functionaliz|tracing|dynamo|\{", re.IGNORECASE)

PRELUDE = """
import warnings
import torch, torch.nn as nn, torch.nn.functional as F
import torch.autograd.forward_ad as fwAD
from torch.func import grad, vmap, jacrev, jvp, vjp
from torch.utils.checkpoint import checkpoint
x = torch.tensor([1., 2.], requires_grad=True)
class Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t):
        return 2 * t
    @staticmethod
    def backward(ctx, g):
        return 2 * g
"""

# (fixed part of the message, trigger code): the trigger raises it, or warns it, on torch 2.13
MESSAGES: list[tuple[str, str | None]] = [
    ("element 0 of tensors does not require grad and does not have a grad_fn",
     "torch.ones(2).sum().backward()"),
    ("grad can be implicitly created only for scalar outputs", "(x * 2).backward()"),
    ("grad can be implicitly created only for real scalar outputs",
     "(x * 1j).sum().backward()"),
    ("Trying to backward through the graph a second time",
     "y = (x * x).sum(); y.backward(); y.backward()"),
    ("one of the variables needed for gradient computation has been modified by an inplace operation",
     "y = x.exp(); y.add_(1); y.sum().backward()"),
    ("a leaf Variable that requires grad is being used in an in-place operation",
     "x.add_(1)"),
    ("a view of a leaf Variable that requires grad is being used in an in-place operation",
     "x[0] = 5."),
    ("you can only change requires_grad flags of leaf variables",
     "(x * 2).requires_grad_(False)"),
    ("Only Tensors of floating point and complex dtype can require gradients",
     "torch.ones(2, dtype=torch.long, requires_grad=True)"),
    ("Can't call numpy() on Tensor that requires grad", "x.numpy()"),
    ("Mismatch in shape: grad_output[0] has a shape of",
     "(x * 2).backward(torch.ones(3))"),
    ("appears to not have been used in the graph. Set allow_unused=True",
     "z = torch.ones(2, requires_grad=True); torch.autograd.grad((x * 2).sum(), [x, z])"),
    ("One of the differentiated Tensors does not require grad",
     "torch.autograd.grad((x * 2).sum(), [x, torch.ones(2)])"),
    (("is a view and is being modified inplace. This view is the output of a function that returns "
     "multiple views"), "a, b = (x * 1).unbind(); a.mul_(2)"),
    ("is a view and its base or another view of its base has been modified inplace",
     "y = x * 1; a, b = y.split(1); y.mul_(2); a.grad_fn"),
    ("A view was created in no_grad mode and is being modified inplace with grad mode enabled",
     "y = x * 1\nwith torch.no_grad():\n    v = y[:1]\nv.mul_(2)"),
    ("Inference tensors cannot be saved for backward",
     "with torch.inference_mode():\n    t = torch.ones(2)\n(x * t).sum()"),
    ("Inplace update to inference tensor outside InferenceMode is not allowed",
     "with torch.inference_mode():\n    t = torch.ones(2)\nt.add_(1)"),
    ("Setting requires_grad=True on inference tensor outside InferenceMode is not allowed",
     "with torch.inference_mode():\n    t = torch.ones(2)\nt.requires_grad_()"),
    ("cannot register a hook on a tensor that doesn't require gradient",
     "torch.ones(2).register_hook(lambda g: g)"),
    ("can't retain_grad on Tensor that has requires_grad=False", "torch.ones(2).retain_grad()"),
    ("Can't detach views in-place. Use detach() instead", "(x * 1)[:1].detach_()"),
    ("cannot resize variables that require grad", "x.resize_(3)"),
    ("has changed the size of value",
     "y = x * 2; y.register_hook(lambda g: g[:1]); y.sum().backward()"),
    ("returned an invalid gradient at index 0 - got",
     ("class Bad(torch.autograd.Function):\n"
     "    forward = staticmethod(lambda ctx, t: t * 2)\n"
     "    backward = staticmethod(lambda ctx, g: torch.ones(3))\n"
     "Bad.apply(x).sum().backward()")),
    ("returned an incorrect number of gradients (expected",
     ("class Bad(torch.autograd.Function):\n"
     "    forward = staticmethod(lambda ctx, t, s: t * s)\n"
     "    backward = staticmethod(lambda ctx, g: g)\n"
     "Bad.apply(x, 2.).sum().backward()")),
    ("returned a gradient different than None at position",
     ("class Bad(torch.autograd.Function):\n"
     "    forward = staticmethod(lambda ctx, t, s: t * s)\n"
     "    backward = staticmethod(lambda ctx, g: (g, g))\n"
     "Bad.apply(x, 2.).sum().backward()")),
    ("returned nan values in its 0th output",
     "with torch.autograd.detect_anomaly():\n    torch.sqrt(x - 2).sum().backward()"),
    ("The .grad attribute of a Tensor that is not a leaf Tensor is being accessed",
     "(x * 2).grad"),
    ("Using backward() with create_graph=True will create a reference cycle",
     "(x * x).sum().backward(create_graph=True)"),
    ("Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior",
     "float(x[0])"),
    ("To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone()",
     "torch.tensor(x)"),
    ("attempting to assign a gradient of size", "x.grad = torch.ones(3)"),
    ("attempting to assign a gradient with dtype",
     "x.grad = torch.ones(2, dtype=torch.float64)"),
    ("can't assign Variable as its own grad", "x.grad = x"),
    ("`inputs` argument to `grad()` cannot be empty", "torch.autograd.grad((x * 2).sum(), [])"),
    ("`inputs` argument to `backward()` cannot be empty", "(x * 2).sum().backward(inputs=[])"),
    ("data set to a tensor that requires gradients must be floating point or complex dtype",
     "x.data = torch.ones(2, dtype=torch.long)"),
    ("Some elements marked as dirty during the forward method were not returned as output",
     ("class Bad(torch.autograd.Function):\n"
     "    @staticmethod\n"
     "    def forward(ctx, t):\n"
     "        ctx.mark_dirty(t); return t * 2\n"
     "    backward = staticmethod(lambda ctx, g: g)\n"
     "Bad.apply(x * 1)")),
    ("save_for_backward can only save variables, but argument 0 is of type",
     ("class Bad(torch.autograd.Function):\n"
     "    @staticmethod\n"
     "    def forward(ctx, t):\n"
     "        ctx.save_for_backward(1.0); return t * 2\n"
     "    backward = staticmethod(lambda ctx, g: g)\n"
     "Bad.apply(x)")),
    ("You must implement the jvp function for custom autograd.Function to use it with forward mode AD",
     "with fwAD.dual_level():\n    Double.apply(fwAD.make_dual(torch.ones(2), torch.ones(2)))"),
    ("You must implement either the backward or vjp method for your custom autograd.Function",
     ("class Bad(torch.autograd.Function):\n"
     "    forward = staticmethod(lambda ctx, t: t * 2)\n"
     "Bad.apply(x).sum().backward()")),
    ("Legacy autograd function with non-static forward method is deprecated",
     ("class Old(torch.autograd.Function):\n"
     "    def forward(self, t):\n"
     "        return t * 2\n"
     "Old()(x)")),
    ("it must override the setup_context staticmethod",
     "grad(lambda t: Double.apply(t).sum())(torch.ones(2))"),
    ("the use_reentrant parameter should be passed explicitly",
     "checkpoint(lambda t: t.sin(), x)"),
    ("Recomputed values for the following tensors have different metadata than during the forward pass",
     ("n = [2]\n"
     "def f(t):\n"
     "    n[0] += 1; return (t.repeat(n[0]) ** 2).sum()\n"
     "checkpoint(f, x, use_reentrant=False).backward()")),
    ("trying to save more tensors during recomputation than during the original forward pass",
     ("n = [0]\n"
     "def f(t):\n"
     "    n[0] += 1; return t.sin() if n[0] == 1 else t.sin().exp()\n"
     "checkpoint(f, x, use_reentrant=False).sum().backward()")),
    ("torch.utils.checkpoint is incompatible with .grad() or passing an `inputs` parameter",
     "torch.autograd.grad(checkpoint(torch.sin, x, use_reentrant=True).sum(), x)"),
    ("None of the inputs have requires_grad=True. Gradients will be None",
     "checkpoint(torch.sin, torch.ones(2), use_reentrant=True)"),
    ("Expected f(*args) to return a scalar Tensor, got tensor with 1 dims",
     "grad(lambda t: t.sum(0, keepdim=True))(torch.ones(2))"),
    ("Expected f(*args) to return a Tensor, got", "grad(lambda t: 1.0)(torch.ones(2))"),
    ("It looks like you're attempting to use a Tensor in some data-dependent control flow",
     "vmap(lambda t: t if t.sum() > 0 else -t)(torch.ones(2, 2))"),
    ("We don't support vmap over calling .item() on a Tensor",
     "vmap(lambda t: t.item())(torch.ones(2))"),
    ("called random operation while in randomness error mode",
     "vmap(lambda t: t + torch.rand(1))(torch.ones(2))"),
    ("backward() called inside a functorch transform",
     "vmap(lambda t: (t * x).sum().backward())(torch.ones(2, 2))"),
    ("You are attempting to call Tensor.requires_grad_()",
     "vmap(lambda t: t.requires_grad_())(torch.ones(2, 2))"),
    ("is not possible because there exists a Tensor `other` in extra_args that has more elements",
     "z = torch.zeros(3); vmap(lambda t: z.copy_(t))(torch.ones(2, 3))"),
    ("Expected all tensors to have the same size in the mapped dimension",
     "vmap(torch.add)(torch.ones(2), torch.ones(3))"),
    ("All outputs of f must be floating-point or complex Tensors",
     "vjp(lambda t: t.long(), torch.ones(2))"),
    ("Expected primals to be a tuple", "jvp(torch.sin, torch.ones(2), torch.ones(2))"),
    ("Nested forward mode AD is not supported at the moment",
     ("with fwAD.dual_level():\n"
      "    with fwAD.dual_level():\n"
      "        pass")),
    ("The vector v can only be None if the user-provided function returns a single Tensor",
     "torch.autograd.functional.vjp(lambda t: t * 2, torch.ones(2))"),
    ("Cannot access data pointer of Tensor",
     "vmap(lambda t: torch.from_numpy(t.numpy()))(torch.ones(2, 3))"),
    ("of the user-provided function does not require gradients",
     "torch.autograd.functional.jacobian(lambda t: torch.ones(2), torch.ones(2), strict=True)"),
    ("The Tensor returned by the function given to hessian should contain a single element",
     "torch.autograd.functional.hessian(lambda t: t * 2, torch.ones(2))"),
    ("Jacobian mismatch for output 0 with respect to input 0",
     ("class Bad(torch.autograd.Function):\n"
     "    forward = staticmethod(lambda ctx, t: t * 2)\n"
     "    backward = staticmethod(lambda ctx, g: 3 * g)\n"
     "torch.autograd.gradcheck(Bad.apply, torch.ones(2, dtype=torch.float64, requires_grad=True))")),
    ("Input #0 requires gradient and is not a double precision floating point or complex",
     "torch.autograd.gradcheck(torch.sin, x, raise_exception=False)"),
    ("gradcheck expects at least one input tensor to require gradient",
     "torch.autograd.gradcheck(torch.sin, torch.ones(2, dtype=torch.float64))"),
    ("Using a non-full backward hook when the forward contains multiple autograd Nodes",
     ("m = nn.Linear(2, 2); m.register_backward_hook(lambda *a: None)\n"
     "m(torch.ones(1, 2)).sum().backward()")),
    ("This view was created inside a custom Function (or because an input was returned as-is)",
     ("m = nn.ReLU(inplace=True); m.register_full_backward_hook(lambda *a: None)\n"
     "m(x * 1)")),
    ("Cannot use both regular backward hooks and full backward hooks on a single Module",
     ("m = nn.Linear(2, 2); m.register_backward_hook(lambda *a: None)\n"
     "m.register_full_backward_hook(lambda *a: None); m(torch.ones(1, 2))")),
    ("for gradients from `parameters` is non-finite, so it cannot be clipped",
     ("p = nn.Parameter(torch.ones(2)); p.grad = torch.tensor([1., float('nan')])\n"
     "nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)")),
    ("optimizer got an empty parameter list", "torch.optim.SGD([], lr=0.1)"),
    ("can't optimize a non-leaf Tensor", "torch.optim.SGD([x * 2], lr=0.1)"),
    ("Expected to have finished reduction in the prior iteration", None),
    ("the derivative for 'igamma: input' is not implemented",
     "torch.igamma(x, torch.ones(2)).sum().backward()"),
    ("The eigenvectors in the complex case are specified up to multiplication by",
     ("a = torch.randn(3, 3, dtype=torch.complex64); a = (a + a.mH).requires_grad_()\n"
     "torch.linalg.eigh(a)[1].real.sum().backward()")),
    ("Trying to set a forward gradient that has a different size than that of the original Tensor",
     "with fwAD.dual_level():\n    fwAD.make_dual(torch.ones(2), torch.ones(3))"),
    ("functions with out=... arguments don't support automatic differentiation",
     "torch.add(x, 1, out=torch.empty(2))"),
    ("Tensor post accumulate grad hooks should return None",
     "x.register_post_accumulate_grad_hook(lambda p: p * 1); (x * 2).sum().backward()"),
    ("post accumulate grad hooks cannot be registered on non-leaf tensors",
     "(x * 2).register_post_accumulate_grad_hook(lambda p: None)"),
    ("(torch.nn.Parameter or None expected)", "m = nn.Linear(2, 2); m.weight = torch.ones(2, 2)"),
    ("cannot assign parameters before Module.__init__() call",
     ("class M(nn.Module):\n"
     "    def __init__(self):\n"
     "        self.w = nn.Parameter(torch.ones(2))\n"
     "M()")),
    ("Attempting to unscale FP16 gradients",
     ("p = nn.Parameter(torch.ones(2, dtype=torch.float16)); opt = torch.optim.SGD([p], lr=.1)\n"
     "s = torch.amp.GradScaler('cpu'); s.scale((p * 1).sum()).backward(); s.step(opt)")),
    ("unscale_() has already been called on this optimizer since the last update()",
     ("p = nn.Parameter(torch.ones(2)); opt = torch.optim.SGD([p], lr=.1)\n"
     "s = torch.amp.GradScaler('cpu'); s.scale((p * 1).sum()).backward()\n"
     "s.unscale_(opt); s.unscale_(opt)")),
    ("No inf checks were recorded for this optimizer",
     ("p = nn.Parameter(torch.ones(2)); opt = torch.optim.SGD([p], lr=.1)\n"
     "s = torch.amp.GradScaler('cpu'); s.scale((p * 1).sum()); s.step(opt)")),
    ("Error detected in",
     ("with torch.autograd.detect_anomaly():\n"
     "    y = x.exp(); y.add_(1); y.sum().backward()")),
    ("Anomaly Detection has been enabled",
     "with torch.autograd.detect_anomaly():\n    pass"),
    ("Trying to use a saved tensor that has been detached in-place",
     "a = x * 1; b = a.sin(); a.detach_(); b.sum().backward()"),
    ("Calling register_hooks on a saved tensor after it has been freed",
     ("y = (x * x); g = y.grad_fn; y.sum().backward()\n"
     "g._raw_saved_self.register_hooks(lambda t: t, lambda t: t)")),
    ("Output 0 of BackwardHookFunction is a view and is being modified inplace",
     ("m = nn.Sequential(nn.Linear(2, 2)); m.register_full_backward_hook(lambda *a: None)\n"
     "m(torch.ones(1, 2)).add_(1)")),
    ("Expected tangent to be floating point or complex",
     "with fwAD.dual_level():\n    fwAD.make_dual(torch.ones(2), torch.ones(2, dtype=torch.long))"),
    ("argnums must be int or Tuple[int, ...]", "grad(torch.sin, argnums=[0])(torch.ones(()))"),
    ("Got argnum=2, but only 2 positional inputs",
     "grad(lambda a, b: (a * b).sum(), argnums=2)(torch.ones(2), torch.ones(2))"),
]

MESSAGES += [
    ("Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol",
     "import copy; copy.deepcopy(x * 2)"),
    ("We do not support batching operators that can support dynamic shape",
     "vmap(lambda t: t[t > 0].sum())(torch.ones(2, 3))"),
]

# round 13: the messages of torch.autograd.graph and custom-Function vmap entries
MESSAGES += [
    (("A leaf node was passed to _will_engine_execute_node but we are currently running "
      "autograd.grad()"),
     ("from torch.autograd.graph import register_multi_grad_hook\n"
      "register_multi_grad_hook((x,), lambda g: None); torch.autograd.grad((x * 2).sum(), x)")),
    ("but it does not have vmap support. Please override and implement the vmap staticmethod",
     ("class F(torch.autograd.Function):\n    forward = staticmethod(lambda t: t * 2)\n"
      "    setup_context = staticmethod(lambda ctx, i, o: None)\n"
      "    backward = staticmethod(lambda ctx, g: g * 2)\n"
      "vmap(F.apply)(torch.ones(2, 3))")),
    ("has both generate_vmap_rule=True and an overridden vmap staticmethod",
     ("class F(torch.autograd.Function):\n    generate_vmap_rule = True\n"
      "    forward = staticmethod(lambda t: t * 2)\n"
      "    setup_context = staticmethod(lambda ctx, i, o: None)\n"
      "    backward = staticmethod(lambda ctx, g: g * 2)\n"
      "    vmap = staticmethod(lambda info, in_dims, t: (t * 2, 0))\n"
      "vmap(F.apply)(torch.ones(2, 3))")),
]

# (fixed part) -> {corpus: hits}: of the (at most 12) results the search tool returned for the
# message's distinctive words, how many quote the message. Counted by hand on 2026-11-29 for the
# messages no page printed yet; the search budget did not allow all 92 in both corpora.
HITS: dict[str, dict[str, int]] = {
    "can't optimize a non-leaf Tensor": {"pages": 3},
    "(torch.nn.Parameter or None expected)": {"pages": 2},
    "cannot assign parameters before Module.__init__() call": {"pages": 0},
    "No inf checks were recorded for this optimizer": {"pages": 2},
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled":
        {"issues": 3},
    "Cannot access data pointer of Tensor": {"pages": 0},
    "Recomputed values for the following tensors have different metadata than during the "
    "forward pass": {"pages": 1},
    "Inplace update to inference tensor outside InferenceMode is not allowed": {"pages": 0},
    "the derivative for 'igamma: input' is not implemented": {"pages": 0},
    "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol":
        {"issues": 6},
    "It looks like you're attempting to use a Tensor in some data-dependent control flow":
        {"issues": 2},
}


def python_candidates() -> dict[str, str]:
    """Fixed text of raise/warn strings in ``PY_SOURCES`` -> the file (relative to torch)."""
    out: dict[str, str] = {}
    files = []
    for src in PY_SOURCES:
        path = TORCH / src
        files += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            call = None
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
                call = node.exc
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and node.func.attr == "warn"):
                call = node
            if call is None:
                continue
            for arg in call.args:
                parts = [n.value for n in ast.walk(arg)
                         if isinstance(n, ast.Constant) and isinstance(n.value, str)]
                text = "".join(parts).strip()
                if len(text) >= 25:
                    out.setdefault(text, str(path.relative_to(TORCH)))
    return out


def cpp_candidates() -> set[str]:
    out = set()
    for lib in CPP_LIBS:
        text = subprocess.run(["strings", "-n", "25", str(TORCH / lib)], capture_output=True,
                              text=True, check=True).stdout
        for line in text.splitlines():
            if (CPP_WORDS.search(line) and not CPP_DROP.search(line)
                    and re.match(r"[A-Za-z'\"(`.]", line) and len(line.split()) >= 5):
                out.add(line.strip())
    return out


def run_trigger(code: str) -> tuple[str, float]:
    """Everything the trigger raised or warned, as one text, and the seconds it took."""
    scope: dict = {}
    exec(PRELUDE, scope)  # noqa: S102 - the fixed prelude of the triggers, written above
    seen = []
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            exec(code, scope)  # noqa: S102 - a trigger from MESSAGES, written above
        except Exception as err:  # noqa: BLE001 - any exception is what we look for
            seen.append(f"{type(err).__name__}: {err}")
    seen += [f"{w.category.__name__}: {w.message}" for w in caught]
    return "\n".join(seen), time.perf_counter() - start


def entry_quoting(fixed: str, pages: dict[str, str]) -> str | None:
    """The entry whose text quotes the message (its first 45 characters, case folded)."""
    key = fixed[:45].lower()
    for page, text in pages.items():
        low = text.lower()
        at = low.find(key)
        if at < 0:
            continue
        labels = list(re.finditer(r"^\(([A-Za-z0-9_-]+)\)=\s*$", text[:at], re.MULTILINE))
        if labels:
            return f"questions/{page}#{labels[-1].group(1)}"
    return None


def printed_in(fixed: str, built: Path) -> list[str]:
    """``<page>#<section id>`` of every built section whose text contains the message."""
    key = fixed[:45]
    out = []
    for page in sorted(built.rglob("*.html")):
        raw = page.read_text(encoding="utf-8")
        if "_static" in page.parts or key[:20].lower() not in html.unescape(raw).lower():
            continue
        for chunk in raw.split('<section id="')[1:]:
            label = chunk.split('"', 1)[0]
            inner = chunk.split('<section id="', 1)[0]
            text = html.unescape(re.sub(r"<[^>]+>", "", inner))
            if key in text:
                out.append(f"{page.relative_to(built).with_suffix('')}#{label}")
    return out


def main(argv: list[str]) -> int:
    built = Path(argv[argv.index("--built") + 1]) if "--built" in argv else None
    py = python_candidates()
    cpp = cpp_candidates()
    print(f"candidates: {len(py)} Python strings, {len(cpp)} C++ strings")
    pages = {p.stem: p.read_text(encoding="utf-8")
             for p in sorted((DOCS / "questions").glob("*.md"))}
    previous = {}
    if OUT.exists():
        previous = {r["message"]: r for r in json.loads(OUT.read_text(encoding="utf-8"))}
    records = []
    for fixed, code in MESSAGES:
        source = next((f"python:{f}" for text, f in py.items() if fixed in text), None)
        if source is None:
            source = "libtorch" if any(fixed in text for text in cpp) else "built"
        raised, seconds = ("", 0.0) if code is None else run_trigger(code)
        ok = code is not None and fixed in raised
        hits = HITS.get(fixed) or previous.get(fixed, {}).get("hits")
        records.append({"message": fixed, "source": source, "trigger": code if ok else None,
                        "raised": raised.splitlines()[0][:300] if ok else None,
                        "seconds": round(seconds, 2), "hits": hits,
                        "entry": entry_quoting(fixed, pages)})
        if built:
            records[-1]["printed"] = printed_in(fixed, built)
            if records[-1]["entry"] is None:
                records[-1]["entry"] = next((where for where in records[-1]["printed"]
                                             if where.startswith("questions/")), None)
        if seconds > 1.5:
            print(f"SLOW ({seconds:.2f} s): {fixed!r}")
        if not ok:
            print(f"NOT TRIGGERED: {fixed!r}\n    got: {raised[:200]!r}")
    done = [r for r in records if r["trigger"]]
    print(f"kept {len(records)}, triggered {len(done)}, "
          f"quoted by an entry {sum(1 for r in done if r['entry'])}, "
          f"printed on a built page {sum(1 for r in done if r.get('printed'))}, "
          f"slowest trigger {max(r['seconds'] for r in done):.2f} s")
    if "--check" not in argv:
        OUT.parent.mkdir(exist_ok=True)
        OUT.write_text(json.dumps(records, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
