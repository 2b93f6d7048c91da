"""Judge ``gradarg.compare_vjp`` on the blind situations of ``compare_situations_blind.py`` and
print the counts on the held-out third and on the open two thirds.

    PYTHONPATH=src OMP_NUM_THREADS=1 python tests/check/compare_situations_report.py [--open-details]

A verdict per situation: ``right`` (status ``"agree"`` exactly when the backward matches the
reference, every ``must`` group matched, no ``never`` pattern matched), ``false`` (a ``never``
pattern matched, or the status contradicts the truth: ``"agree"`` on a wrong situation,
``"DISAGREE"`` on a right one), ``unsure`` (``"could not check"``), ``missing`` (a ``must``
group unmatched), ``error`` (compare_vjp, or the situation, raised).  Held-out situations are
printed by verdict only: whoever changes the tool reads neither their entries nor their reports.
"""

from __future__ import annotations

import re
import sys
import warnings
from collections import Counter
from pathlib import Path

HERE = Path(__file__).parent
VERDICTS = ("right", "false", "unsure", "missing", "error")


def held_out() -> set[str]:
    path = HERE / "compare_situations_held_out.txt"
    return set(path.read_text().split()) if path.exists() else set()


def judge(situation: dict, result) -> tuple[str, list]:
    """``(verdict, details)`` of one comparison."""
    text = str(result)
    false = [p for p in situation.get("never", ()) if re.search(p, text)]
    if false:
        return "false", false
    status = result.status
    if status == "could not check":
        return "unsure", [status]
    if status == "agree" and not situation["right"]:
        return "false", [status]
    if status == "DISAGREE" and situation["right"]:
        return "false", [status]
    if status not in ("agree", "DISAGREE"):
        return "false", [f"unknown status {status!r}"]
    missing = [group for group in situation.get("must", ())
               if not any(re.search(p, text) for p in group)]
    if missing:
        return "missing", missing
    return "right", []


def run(situation: dict):
    import gradarg

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fn, x, v, kwargs = situation["build"]()
        return gradarg.compare_vjp(fn, x, v, **(kwargs or {}))


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(HERE))
    import compare_situations_blind as cs

    held = held_out()
    counts = {"held-out": Counter(), "open": Counter()}
    for s in cs.SITUATIONS:
        part = "held-out" if s["name"] in held else "open"
        try:
            r = run(s)
            verdict, details = judge(s, r)
            text = str(r)
        except Exception as error:  # noqa: BLE001  (the tool, or the situation, failed)
            verdict, details, text = "error", [repr(error)], ""
        counts[part][verdict] += 1
        if part == "open":
            print(f"{part:8} {verdict:8} {s['name']}")
            if "--open-details" in argv and verdict != "right":
                print(f"         {details}\n         " + text.replace("\n", "\n         "))
        else:
            print(f"{part:8} {verdict:8} -")
    for part, c in counts.items():
        print(f"{part}: {sum(c.values())} situations: " + ", ".join(
            f"{k} {c[k]}" for k in VERDICTS))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
