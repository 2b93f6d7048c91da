"""The finite differences with error estimates that the comparers use as a reference: they live
in ``gradarg.core.fd_error`` (``jacobian(method="finite-difference")`` uses them too); this
module is the name the checker's modules call them by."""

from ..core.fd_error import (
    DISAGREE,
    MAX_STEPS,
    MIN_STEPS,
    UNRESOLVED,
    Estimate,
    base_outputs,
    columns,
    directional,
    n_steps,
    partials,
    steps_for,
    upcast,
)

__all__ = ["DISAGREE", "MAX_STEPS", "MIN_STEPS", "UNRESOLVED", "Estimate", "base_outputs",
           "columns", "directional", "n_steps", "partials", "steps_for", "upcast"]
