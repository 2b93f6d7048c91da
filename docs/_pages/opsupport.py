"""Which derivatives each PyTorch operator has, probed live: the table of the operators page.

For every entry of PyTorch's OpInfo database (``torch.testing._internal.
common_methods_invocations.op_db``: private, the registry PyTorch's own operator tests run
over, with sample inputs for each operator) that runs on the CPU in float64, the first sample
(seeded from the operator's name) is differentiated four ways:

``backward``
    reverse mode: ``torch.autograd.grad`` of the floating outputs;
``batched``
    ``torch.func.jacrev`` (backwards under ``vmap``, one per output entry), against
    ``torch.autograd.functional.jacobian`` with a Python loop of backwards
    (``vectorize=False``): compared entry by entry, not only on a random projection;
``forward``
    forward mode: the inputs as dual tensors (``torch.autograd.forward_ad``);
``second``
    a second derivative: the first ``grad`` taken with ``create_graph=True``, then
    differentiated again;
``complex``
    reverse mode on the operator's complex128 sample, when it has one.

A mode that runs is then checked against finite differences, as PyTorch's tests check it:
``torch.autograd.gradcheck`` (``check_forward_ad=True`` for forward mode) and
``gradgradcheck``, in fast mode (a random projection ``vᵀ J u`` against central differences;
https://pytorch.org/docs/stable/notes/gradcheck.html). Each result is one :class:`Cell`:
``checked``, ``mismatch`` (runs, and gradcheck disagrees), ``unchecked`` (runs; the value
could not be checked, with the reason: a random output, a dtype conversion), ``raises`` (the
exception torch raises, quoted), ``none`` (nothing to differentiate: no floating output, or
an output without ``grad_fn``) or ``no sample``.

Page plumbing, not part of ``gradarg``; imports only torch.
"""

from __future__ import annotations

import contextlib
import copy
import itertools
import warnings
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import torch
from torch.autograd import forward_ad as fwAD
from torch.autograd import gradcheck, gradgradcheck
from torch.autograd.gradcheck import GradcheckError

BATCHED_SAMPLES = 8
SCAN = 64  # samples looked through for the first one without an empty input
MAX_JACOBIAN = 250_000  # entries of a whole Jacobian taken for the jacrev column
LOOP_ROWS = 16  # rows of each output's Jacobian compared with one backward each
MODES = ("backward", "batched", "forward", "second", "complex")
KINDS = ("checked", "mismatch", "unchecked", "raises", "none", "no sample")
SYMBOL = {"checked": "✓", "mismatch": "≠", "unchecked": "runs", "raises": "✗", "none": "—",
          "no sample": ""}

# Families: a heading of the page each, chosen by the operator's name.
LINALG = {"cholesky", "cholesky_inverse", "cholesky_solve", "det", "geqrf", "inverse", "logdet",
          "lu", "lu_solve", "lu_unpack", "matrix_exp", "ormqr", "pinverse", "qr", "slogdet",
          "svd", "svd_lowrank", "pca_lowrank", "triangular_solve", "householder_product",
          "symeig", "eig", "matrix_power", "mm", "bmm", "addmm", "addbmm", "baddbmm", "addmv",
          "addr", "mv", "matmul", "dot", "vdot", "inner", "outer", "ger", "kron", "tensordot",
          "einsum", "chain_matmul", "trace", "tril", "triu", "diag", "diag_embed", "diagonal",
          "cross", "cdist", "dist", "norm", "renorm"}
FAMILIES = {
    "linalg": "Linear algebra",
    "fft": "FFT and signal",
    "special": "Special functions",
    "nn": "Neural-network functions",
    "index": "Indexing, scatter, gather and sorting",
    "reduce": "Reductions",
    "other": "Arithmetic, shapes and the rest",
    "masked": "Masked and sparse operations",
    "private": "Internal operators (names starting with _)",
}
INDEXING = ("index", "scatter", "gather", "take", "put", "masked_", "where", "nonzero",
            "argwhere", "sort", "argsort", "topk", "kthvalue", "unique", "searchsorted",
            "bucketize", "select", "narrow", "__getitem__", "__setitem__", "roll", "flip",
            "histc", "histogram", "bincount", "mode", "msort", "isin", "embedding")
REDUCTIONS = ("sum", "mean", "prod", "amax", "amin", "max", "min", "std", "var", "median",
              "nanmedian", "logsumexp", "cumsum", "cumprod", "cummax", "cummin", "logcumsumexp",
              "norm", "count_nonzero", "all", "any", "aminmax", "argmax", "argmin", "nansum",
              "nanmean", "quantile", "nanquantile", "trapz", "trapezoid", "cumulative_trapezoid")


def family(name: str) -> str:
    """The family key of an operator's OpInfo name (``linalg.solve`` → ``linalg``)."""
    head = name.split(".")[0]
    if name.startswith("_"):
        return "private"
    if head == "linalg" or name in LINALG:
        return "linalg"
    if head in ("fft", "signal") or name in ("stft", "istft"):
        return "fft"
    if head == "special" or name in ("igamma", "igammac", "polygamma", "mvlgamma", "lgamma",
                                     "digamma", "erf", "erfc", "erfinv", "i0", "sinc", "xlogy",
                                     "zeta", "logit", "nextafter"):
        return "special"
    if head == "nn":
        return "nn"
    if head in ("masked", "sparse") or "sparse" in name or name.startswith("to_sparse"):
        return "masked"
    if any(name == r or name.startswith(r + ".") for r in REDUCTIONS):
        return "reduce"
    if any(name.startswith(p) for p in INDEXING):
        return "index"
    return "other"


@dataclass(frozen=True)
class Cell:
    """One mode of one operator: ``kind`` is one of :data:`KINDS`; ``detail`` the quoted
    exception (``raises``, ``mismatch``) or the reason (``unchecked``, ``none``)."""

    kind: str
    detail: str = ""

    @property
    def symbol(self) -> str:
        return SYMBOL[self.kind]


# PyTorch's own gradient tests (test/test_ops_gradients.py, test/test_ops_fwd_gradients.py)
TESTS = {"backward": ("TestBwdGradients", "test_fn_grad"),
         "batched": ("TestBwdGradients", "test_fn_grad"),
         "forward": ("TestFwdGradients", "test_forward_mode_AD"),
         "second": ("TestBwdGradients", "test_fn_gradgrad"),
         "complex": ("TestBwdGradients", "test_fn_grad")}


def known_failure(op, mode: str) -> str:
    """How PyTorch's own gradient test of this operator and mode is marked, if it is:
    ``"expected to fail"`` or ``"skipped: <reason>"``; empty when it is not marked."""
    cls, test = TESTS[mode]
    dtype = torch.complex128 if mode == "complex" else torch.float64
    for info in op.decorators:
        if getattr(info, "cls_name", None) != cls or info.test_name not in (None, test):
            continue
        if info.dtypes is not None and dtype not in info.dtypes:
            continue
        decorators = info.decorators if isinstance(info.decorators, (list, tuple)) else [
            info.decorators]
        for dec in decorators:
            if getattr(dec, "__name__", "") == "expectedFailure":
                return "expected to fail"
            for cell in getattr(dec, "__closure__", None) or ():
                try:
                    value = cell.cell_contents
                except ValueError:
                    continue
                if isinstance(value, str):
                    return f"skipped: {value}"
    return ""


@dataclass(frozen=True)
class Row:
    """One operator: its OpInfo name (with the variant after a dot), family and four cells."""

    name: str
    family: str
    cells: dict
    known: dict


def load_op_db() -> list:
    """PyTorch's OpInfo entries that run on the CPU in float64.

    ``common_methods_invocations`` imports ``expecttest`` (a test-only dependency of PyTorch,
    in the ``test`` and ``docs`` extras)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from torch.testing._internal.common_methods_invocations import op_db
    return [o for o in op_db if torch.float64 in o.supported_dtypes("cpu")
            and "Jiterator" not in type(o).__name__ and "jiterator" not in o.name]


def label(op) -> str:
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


def _message(err: BaseException) -> str:
    lines = [ln.strip() for ln in str(err).strip().splitlines() if ln.strip()]
    return f"{type(err).__name__}: {lines[0] if lines else ''}"[:220]


def _samples(op, dtype: torch.dtype, count: int = 1) -> list:
    """The first sample, or ``count`` samples spread evenly over the operator's list (seeded
    from the operator's name, so every build sees the same ones)."""
    torch.manual_seed(zlib.crc32(label(op).encode()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gen = op.sample_inputs("cpu", dtype, requires_grad=op.supports_autograd)
        if count == 1:  # the first sample without an empty input (read lazily)
            first = None
            for sample in itertools.islice(gen, SCAN):
                first = sample if first is None else first
                if all(t.numel() for t in tensors((sample.input, *sample.args))):
                    return [sample]
            return [first]
        every = list(itertools.islice(gen, 48))
    # an empty input makes every check pass about nothing: samples with one are left out
    every = [s for s in every if all(t.numel() for t in tensors((s.input, *s.args)))] or every
    if len(every) <= count:
        return every
    return [every[round(i * (len(every) - 1) / (count - 1))] for i in range(count)]


_FIRST: dict[tuple[int, torch.dtype], tuple[object, object]] = {}


def _first_sample(op, dtype: torch.dtype):
    """The operator's first sample, made once per operator and dtype (four float64 modes share
    it); each caller gets its own copy, so that no mode sees what another did to it."""
    key = (id(op), dtype)
    if key not in _FIRST or _FIRST[key][0] is not op:
        if len(_FIRST) > 8:               # one operator at a time is ever needed again
            _FIRST.clear()
        _FIRST[key] = (op, _samples(op, dtype)[0])
    try:
        return copy.deepcopy(_FIRST[key][1])
    except Exception:  # noqa: BLE001  (a layout deepcopy refuses, e.g. sparse CSR: a fresh one)
        return _samples(op, dtype)[0]


def _as_function(op, sample) -> tuple[Callable, tuple]:
    """The sample as ``fn(*tensors)``, the way PyTorch's gradient tests call it: the input
    (or the tensors of a tensor-list input) and the positional arguments; keywords fixed."""
    inp = sample.input
    if isinstance(inp, torch.Tensor):
        args, count = (inp, *sample.args), None
    elif isinstance(inp, (list, tuple)) and all(isinstance(t, torch.Tensor) for t in inp):
        args, count = (*inp, *sample.args), len(inp)
    else:
        raise TypeError("a sample input that is neither a tensor nor a list of tensors")

    def fn(*inputs):
        if count is not None:
            inputs = (list(inputs[:count]), *inputs[count:])
        out = op.gradcheck_wrapper(op.get_op(), *inputs, **sample.kwargs)
        return sample.output_process_fn_grad(out)

    return fn, tuple(args)


def sample_calls(op, count: int, dtype: torch.dtype = torch.float64) -> list[tuple[Callable, tuple]]:
    """Up to ``count`` of the operator's samples, spread over its list (as the jacrev column
    takes them), each as ``(fn, args)`` with its floating inputs requiring a gradient."""
    calls = []
    for sample in _samples(op, dtype, count):
        try:
            fn, args = _as_function(op, sample)
        except TypeError:  # a sample input that is not tensors (a number): left out
            continue
        calls.append((fn, _with_leaves(args)))
    return calls


def backward_cell(fn: Callable, args: tuple, nondet_tol: float = 0.0) -> Cell:
    """The backward column's cell for one call: whether its backward runs, then ``gradcheck``
    of it against finite differences (as :func:`probe` does for the first sample)."""
    plain = _plain("backward", fn, args)
    if plain is not None:
        return plain
    try:
        if _random_output(fn, args):
            return Cell("unchecked", "random or uninitialised output")
    except Exception as err:  # noqa: BLE001
        return Cell("unchecked", f"the plain call raised: {_message(err)}")
    return _check("backward", fn, args, nondet_tol)


def tensors(value) -> list[torch.Tensor]:
    """The tensors in ``value``: a tensor, or nested lists and tuples of them."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in tensors(v)]
    return []


def _differentiable(outs: Iterable[torch.Tensor]) -> list[torch.Tensor]:
    return [t for t in outs if (t.is_floating_point() or t.is_complex()) and t.requires_grad]


def _leaves(args: tuple) -> list[torch.Tensor]:
    return [t for t in args if isinstance(t, torch.Tensor) and t.requires_grad]


def _with_leaves(args: tuple) -> tuple:
    """``args``, or, when none requires a gradient (an operator OpInfo lists without
    autograd), its floating tensors made leaves that do."""
    if _leaves(args):
        return args
    return tuple(a.detach().requires_grad_() if isinstance(a, torch.Tensor)
                 and (a.is_floating_point() or a.is_complex()) else a for a in args)


def _random_output(fn: Callable, args: tuple) -> bool:
    """Two calls on the same inputs give different values (a random or uninitialised output)."""
    with torch.no_grad():
        torch.manual_seed(1)
        a = [t.detach().clone() for t in tensors(fn(*args))]
        torch.manual_seed(2)
        b = [t.detach().clone() for t in tensors(fn(*args))]
    for x, y in zip(a, b, strict=False):
        try:
            torch.testing.assert_close(x, y, rtol=0, atol=0, equal_nan=True)
        except AssertionError:
            return True
    return False


def _plain(mode: str, fn: Callable, args: tuple) -> Cell | None:
    """Run the mode without checking its values: None when it runs, else the cell."""
    leaves = _leaves(args)
    if not leaves:
        return Cell("none", "no floating input requires a gradient")
    try:
        if mode == "forward":
            with fwAD.dual_level():
                duals = [fwAD.make_dual(a.detach(), torch.randn_like(a.detach()))
                         if isinstance(a, torch.Tensor) and a.requires_grad else a
                         for a in args]
                outs = [t for t in tensors(fn(*duals)) if t.is_floating_point() or t.is_complex()]
                if not outs:
                    return Cell("none", "no floating output")
                if not any(t.numel() for t in outs):
                    return Cell("no sample", "every sample tried has an empty output")
                if all(fwAD.unpack_dual(t).tangent is None for t in outs):
                    return Cell("none", "no output carries a tangent")
            return None
        outs = _differentiable(tensors(fn(*args)))
        if not outs:
            return Cell("none", "no output requires a gradient (no grad_fn)")
        if not any(t.numel() for t in outs):
            return Cell("no sample", "every sample tried has an empty output")
        ws = [torch.randn_like(t) for t in outs]
        grads = torch.autograd.grad(outs, leaves, ws, allow_unused=True,
                                    create_graph=mode == "second")
        if mode == "second":
            live = [g for g in grads if g is not None and g.requires_grad]
            if live:
                torch.autograd.grad([g for g in live], leaves,
                                    [torch.randn_like(g) for g in live], allow_unused=True)
        return None
    except Exception as err:  # noqa: BLE001  (the table quotes whatever torch raises)
        return Cell("raises", _message(err))


def _jacrev_against_loop(fn: Callable, args: tuple) -> Cell:
    """``jacrev`` over every input that requires a gradient, against a loop of backwards."""
    from torch.func import jacrev

    where = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor) and a.requires_grad]
    if not where:
        return Cell("none", "no input requires a gradient")

    def g(*leaves):
        full = list(args)
        for i, leaf in zip(where, leaves, strict=True):
            full[i] = leaf
        outs = [torch.view_as_real(t.resolve_conj()) if t.is_complex() else t for t in tensors(fn(*full))]
        return tuple(t for t in outs if t.is_floating_point() and t.numel())

    leaves = tuple(args[i].detach() for i in where)
    try:
        outs = g(*leaves)
    except Exception as err:  # noqa: BLE001
        return Cell("unchecked", f"the plain call raised: {_message(err)}")
    if not outs:
        return Cell("none", "no non-empty floating output")
    entries = sum(t.numel() for t in outs) * sum(t.numel() for t in leaves)
    if entries > MAX_JACOBIAN:
        return Cell("unchecked", f"a Jacobian of {entries} entries is not taken")
    try:
        vmapped = jacrev(g, argnums=tuple(range(len(leaves))))(*leaves)
    except Exception as err:  # noqa: BLE001
        return Cell("raises", _message(err))
    try:
        rows, loop = _loop_rows(g, leaves)
    except Exception as err:  # noqa: BLE001
        return Cell("unchecked", f"the loop of backwards raised ({_message(err)})")
    # jacrev's Jacobian of each leaf as (all output entries, leaf entries), outputs in order
    per_leaf = [torch.cat([row_v[j].reshape(o.numel(), -1) for row_v, o in
                           zip(vmapped, outs, strict=True)]) for j in range(len(leaves))]
    worst = 0.0
    for j, full in enumerate(per_leaf):
        if full.shape[1] == 0:
            continue
        a, b = full[rows], loop[j]
        worst = max(worst, float(torch.nan_to_num((a - b).abs()).max()))
        scale = float(torch.nan_to_num(b.abs()).max())
        if not torch.allclose(a, b, rtol=1e-7, atol=1e-7 * max(1.0, scale), equal_nan=True):
            return Cell("mismatch", f"jacrev differs from a loop of backwards "
                        f"by up to {worst:.3g}")
    return Cell("checked")


def _loop_rows(g: Callable, leaves: tuple) -> tuple[list[int], list[torch.Tensor]]:
    """Rows of the Jacobian of ``g`` (its outputs flattened and concatenated in order), each
    by one plain backward of one output entry, as ``autograd.functional.jacobian`` takes them:
    of every output, up to :data:`LOOP_ROWS` entries spread evenly from its first to its
    last.  The row numbers and, per leaf, a ``(rows, leaf.numel())`` tensor."""
    live = tuple(t.detach().requires_grad_() for t in leaves)
    rows: list[int] = []
    got: list[list[torch.Tensor]] = [[] for _ in live]
    start = 0
    for out in g(*live):
        flat, n = out.reshape(-1), out.numel()
        picked = (range(n) if n <= LOOP_ROWS else
                  sorted({round(i * (n - 1) / (LOOP_ROWS - 1)) for i in range(LOOP_ROWS)}))
        for k in picked:
            grads = (torch.autograd.grad(flat[k], live, retain_graph=True, allow_unused=True)
                     if flat.requires_grad else (None,) * len(live))
            for j, (gr, leaf) in enumerate(zip(grads, live, strict=True)):
                got[j].append(torch.zeros(leaf.numel(), dtype=out.dtype) if gr is None
                              else gr.reshape(-1))
            rows.append(start + k)
        start += n
    return rows, [torch.stack(r) for r in got]


def _check(mode: str, fn: Callable, args: tuple, nondet_tol: float) -> Cell:
    kw = {"fast_mode": True, "check_undefined_grad": False, "check_batched_grad": False,
          "nondet_tol": nondet_tol}
    try:
        if mode == "forward":
            gradcheck(fn, args, check_forward_ad=True, check_backward_ad=False, **kw)
        elif mode == "second":
            gradgradcheck(fn, args, **kw)
        else:
            gradcheck(fn, args, **kw)
        return Cell("checked")
    except GradcheckError as err:
        return Cell("mismatch", _message(err))
    except Exception as err:  # noqa: BLE001
        text = _message(err)
        if "not implemented" in text or "not support" in text:
            return Cell("raises", text)
        return Cell("unchecked", f"gradcheck could not run ({text})")


def probe(op, mode: str) -> Cell:
    """One operator in one mode of :data:`MODES`."""
    dtype = torch.complex128 if mode == "complex" else torch.float64
    if dtype not in op.supported_dtypes("cpu"):
        return Cell("no sample", f"no {dtype} sample")
    try:
        sample = _first_sample(op, dtype)
        if sample is None:
            return Cell("no sample", "no sample")
        fn, args = _as_function(op, sample)
    except Exception as err:  # noqa: BLE001
        return Cell("no sample", _message(err))
    args = _with_leaves(args)
    plain = _plain("backward" if mode in ("complex", "batched") else mode, fn, args)
    if plain is not None:
        return plain
    try:
        out_dtypes = {t.dtype for t in tensors(fn(*args))
                      if t.is_floating_point() or t.is_complex()}
        random = _random_output(fn, args)
    except Exception as err:  # noqa: BLE001
        return Cell("unchecked", f"the plain call raised: {_message(err)}")
    in_dtypes = {t.dtype for t in _leaves(args)}
    if not out_dtypes <= in_dtypes | {torch.float64, torch.complex128}:
        return Cell("unchecked", "the output dtype differs from the input's (a conversion)")
    if random:
        return Cell("unchecked", "random or uninitialised output")
    if mode == "batched":                 # cheap: more samples (cdist is wrong on most)
        cell = _jacrev_against_loop(fn, args)
        for other in _samples(op, dtype, BATCHED_SAMPLES)[1:]:
            if cell.kind in ("mismatch", "raises"):
                break
            try:
                more = _jacrev_against_loop(*_as_function(op, other))
            except Exception as err:  # noqa: BLE001  (a sample the probe cannot call)
                more = Cell("unchecked", _message(err))
            worse = more.kind in ("mismatch", "raises") and "raised" not in more.detail
            if worse or (cell.kind == "unchecked" and more.kind == "checked"):
                cell = more
        return cell
    torch.manual_seed(zlib.crc32(f"{label(op)}:{mode}".encode()))  # gradcheck's random vectors
    return _check("backward" if mode == "complex" else mode, fn, args, op.gradcheck_nondet_tol)


@contextlib.contextmanager
def no_test_lookup():
    """OpInfo's sample lists look for the ``unittest`` test running them by walking the whole
    stack with ``inspect.stack()`` (``common_utils.extract_test_fn``, at every sample list).
    No ``TestCase`` runs here, so its answer is ``None``: it is given without the walk while
    this context is on.  In a Jupyter kernel each walk resolves the kernel's deep stack of
    cells file by file against every loaded module: every tenth operator took 54 s of CPU
    there against 7 s in a plain process, and 7 s in the kernel without the walk."""
    from torch.testing._internal import common_utils
    from torch.testing._internal.opinfo import core

    saved = common_utils.extract_test_fn, core.extract_test_fn
    common_utils.extract_test_fn = core.extract_test_fn = lambda: None
    try:
        yield
    finally:
        common_utils.extract_test_fn, core.extract_test_fn = saved


def table(ops: list | None = None) -> list[Row]:
    """Every operator of :func:`load_op_db` (or ``ops``) in every mode, sorted by name."""
    rows = []
    with warnings.catch_warnings(), no_test_lookup():
        warnings.simplefilter("ignore")
        for op in ops if ops is not None else load_op_db():
            rows.append(Row(label(op), family(op.name), {m: probe(op, m) for m in MODES},
                            {m: known_failure(op, m) for m in MODES}))
    return sorted(rows, key=lambda r: r.name.lstrip("_"))


HEADERS = ("operator", "backward", "jacrev", "forward mode", "second order", "complex")


def _code(text: str) -> str:
    return "`" + text.replace("`", "'") + "`"


def markdown(rows: list[Row], key: str) -> str:
    """The family ``key``'s table (a row per operator, a symbol per mode), then one line per
    operator whose cells need words: the exception quoted, the reason a value was not
    checked, a mismatch and how PyTorch's own test of it is marked."""
    mine = [r for r in rows if r.family == key]
    lines = ["| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
    notes = []
    for r in mine:
        symbols = []
        for m in MODES:
            c = r.cells[m]
            symbols.append("n/a" if c.kind == "no sample" and m == "complex" else c.symbol)
        lines.append(f"| {_code(r.name)} | " + " | ".join(symbols) + " |")
        said = []
        for m, head in zip(MODES, HEADERS[1:], strict=True):
            c = r.cells[m]
            if c.kind in ("checked",) or (c.kind == "no sample" and m == "complex"):
                continue
            text = f"{head} {c.symbol}: {_code(c.detail)}" if c.detail else f"{head} {c.symbol}"
            if c.kind == "mismatch" and r.known[m]:
                text += f" (PyTorch's own test of it: {r.known[m]})"
            said.append(text)
        if said:
            notes.append(f"- {_code(r.name)}: " + "; ".join(said))
    out = "\n".join(lines)
    if notes:
        out += "\n\nWhere a cell needs words:\n\n" + "\n".join(notes)
    return out


def counts(rows: list[Row]) -> dict:
    """``{(mode, kind): number of operators}``."""
    out: dict = {}
    for r in rows:
        for m in MODES:
            out[(m, r.cells[m].kind)] = out.get((m, r.cells[m].kind), 0) + 1
    return out
