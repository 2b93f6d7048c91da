"""Pictures of Jacobians (needs matplotlib, an optional dependency: ``pip install gradarg[plot]``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from .checks import jacobian_arg

__all__ = ["jacobian_heatmap", "pyplot"]


def pyplot(what: str = "this plot") -> Any:
    """``matplotlib.pyplot``, or an ``ImportError`` that says how to get it.

    Raises
    ------
    ImportError
        (a ``ModuleNotFoundError``) matplotlib is not installed; the message names the extra
        ``gradarg[plot]`` that installs it.
    """
    try:
        import matplotlib.pyplot as plt
    except ModuleNotFoundError as err:
        raise ModuleNotFoundError(
            f"{what} needs matplotlib, an optional dependency of gradarg: "
            f"pip install 'gradarg[plot]' (or pip install matplotlib)", name=err.name
        ) from err
    return plt


def jacobian_heatmap(
    jac: torch.Tensor,
    out_shape: Sequence[int],
    *,
    ax: Any = None,
    title: str | None = None,
    annotate: bool | None = None,
) -> Any:
    """Heatmap of a Jacobian of shape ``y.shape + x.shape`` as its ``m × n`` matrix.

    Rows are output elements, columns input elements (both flattened row-major); a diverging
    colour map centred on zero, so signs read at a glance.

    Parameters
    ----------
    jac : torch.Tensor
        Real Jacobian, shape ``out_shape + x.shape``.
    out_shape : sequence of int
        ``y.shape``: how many leading dimensions of ``jac`` are output dimensions.
    ax : matplotlib Axes, optional
        Where to draw; a new figure if omitted.
    title : str, optional
    annotate : bool, optional
        Write each entry in its cell; default when the matrix has at most 64 entries.

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    TypeError
        ``jac`` is not a tensor, or is complex (draw ``jac.real`` and ``jac.imag`` apart).
    ValueError
        ``jac``'s shape does not start with ``out_shape``; ``jac`` is on the meta device.
    ImportError
        matplotlib is not installed (the message says ``pip install 'gradarg[plot]'``).
    """
    jac = jacobian_arg("jac", jac, out_shape, "out_shape")
    if jac.is_complex():
        raise TypeError(f"jac must be a real Jacobian, got {jac.dtype}: a diverging colour map "
                        "shows one real number per entry; draw jac.real and jac.imag apart")
    plt = pyplot("jacobian_heatmap")

    m = math.prod(jac.shape[: len(tuple(out_shape))])
    mat = jac.detach().reshape(m, -1).cpu().double().numpy()
    if ax is None:
        _, ax = plt.subplots(figsize=(min(8, 1.2 + 0.5 * mat.shape[1]), min(6, 1.0 + 0.45 * m)))
    vmax = float(abs(mat).max()) or 1.0
    im = ax.imshow(mat, cmap="RdBu_r", vmin=-vmax, vmax=vmax, aspect="auto")
    ax.figure.colorbar(im, ax=ax, shrink=0.8)
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    # no index letters: a page's title may name the tensor indices (J[i, k, j, l])
    ax.set_xlabel(f"column: input element, x flattened ({mat.shape[1]})")
    ax.set_ylabel(f"row: output element, y flattened ({m})")
    if title:
        ax.set_title(title)
    if annotate if annotate is not None else mat.size <= 64:
        from .render import fmt

        for (i, j), val in np.ndenumerate(mat):
            ax.text(j, i, fmt(val, 3), ha="center", va="center", fontsize=8,
                    color="white" if abs(val) > 0.6 * vmax else "black")
    return ax
