"""A script as a user types it, checked by mypy in ``nox -s tests`` (with the package): the
public API's types must let it through without casts."""

from __future__ import annotations

import torch

import gradarg

x = torch.linspace(-1.0, 1.0, 4, dtype=torch.float64)
J: torch.Tensor = gradarg.jacobian(torch.sin, x)
for method in gradarg.METHODS:
    J = gradarg.jacobian(torch.sin, x, method=method)
report: gradarg.VJPComparison = gradarg.compare_vjp(torch.sin, x, torch.ones(4, dtype=x.dtype))
agree: bool = report.agree

a = torch.tensor(5.0, requires_grad=True)
trace: gradarg.BackwardTrace = gradarg.trace_backward(torch.log(8 * a * a), names={"a": a})
drawing: gradarg.Drawing = trace.draw()
player: gradarg.BackwardPlayer = trace.player()
first_arrived: str = player.steps[0].arrived

pattern = gradarg.jacobian_sparsity(torch.sin, x)
sparse = gradarg.SparseJacobian(pattern, x.shape, method="reverse")
diagnosis: gradarg.GradDiagnosis = gradarg.why_no_grad(torch.log(8 * a * a), a)
case: str = diagnosis.case
