"""gradarg.check_backward against torch.autograd.gradcheck on the corpus of custom Functions.

For every Function in ``tests/check/backward_corpus.py`` (wrong and right backwards, written on
purpose), prints whether ``gradarg.check_backward`` (float64 and float32 inputs) and
``torch.autograd.gradcheck`` (float64, as it requires, ``raise_exception=False``, default
tolerances) call it wrong, then the totals of catches and false alarms.  For reference, also
gradcheck on the float32 inputs, which it warns against.

    python benchmarks/gradcheck_corpus.py
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import torch

import gradarg

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "check"))
from backward_corpus import CASES, F32, F64, inputs


def gradarg_says_wrong(case, dtype) -> tuple[bool, str]:
    r = gradarg.check_backward(case.fn, *inputs(case, dtype))
    named = ", ".join(sorted({p.pattern or ("region" if p.region else "?")
                              for p in r.wrong_pairs}))
    return (not r), named


def gradcheck_says_wrong(case, dtype=F64) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # float32 inputs: "not a double precision" warning
        try:
            ok = torch.autograd.gradcheck(case.fn, inputs(case, dtype), raise_exception=False)
        except Exception as err:  # noqa: BLE001 - an error is a verdict too
            return f"error ({type(err).__name__})"
    return "wrong" if not ok else "right"


def main() -> None:
    torch.manual_seed(0)
    rows = []
    tally = {"gradarg64": [0, 0], "gradarg32": [0, 0], "gradcheck": [0, 0],
             "gradcheck32": [0, 0]}
    n_wrong = n_right = 0
    for case in CASES:
        truth = "wrong" if case.wrong else "right"
        g64, named = gradarg_says_wrong(case, F64)
        g32, _ = gradarg_says_wrong(case, F32)
        gc = gradcheck_says_wrong(case)
        gc32 = gradcheck_says_wrong(case, F32)
        if case.wrong:
            n_wrong += 1
        else:
            n_right += 1
        for key, says in (("gradarg64", g64), ("gradarg32", g32), ("gradcheck", gc != "right"),
                          ("gradcheck32", gc32 != "right")):
            if key.endswith("32") and case.wrong and F32 not in case.wrong_in:
                says = not says  # no bug exists in float32: "right" is the correct answer
            if case.wrong and says:
                tally[key][0] += 1
            elif not case.wrong and says:
                tally[key][1] += 1
        rows.append((case.name.replace("|", "\\|"), truth, "wrong" if g64 else "right",
                     "wrong" if g32 else "right", gc, gc32, named))
    head = ("Function", "truth", "gradarg f64", "gradarg f32", "gradcheck f64", "gradcheck f32",
            "gradarg names")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        print("| " + " | ".join(r) + " |")
    print()
    print(f"{n_wrong} wrong and {n_right} right backwards")
    for key, label in (("gradarg64", "gradarg, float64"), ("gradarg32", "gradarg, float32"),
                       ("gradcheck", "gradcheck, float64"), ("gradcheck32", "gradcheck, float32")):
        caught, alarms = tally[key]
        print(f"{label:20s} catches {caught}/{n_wrong}, false alarms {alarms}/{n_right}")
    print("(float32 columns: the float32-backward bug does not exist for float32 inputs, so "
          "'right' counts as the catch there)")


if __name__ == "__main__":
    main()
