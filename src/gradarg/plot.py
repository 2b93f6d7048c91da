"""``gradarg.plot.jacobian_heatmap``: kept at this address; the code lives in :mod:`gradarg.show.plot`."""

from .show.plot import jacobian_heatmap

__all__ = ["jacobian_heatmap"]
