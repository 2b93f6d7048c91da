"""Judge ``gradarg.check_backward`` on the blind situations of ``check_situations_blind.py`` and
print the counts on the held-out third and on the open two thirds.

    PYTHONPATH=src OMP_NUM_THREADS=1 python tests/check/check_situations_report.py [--open-details]

A verdict per situation: ``right`` (status ``"agree"`` exactly when the backward is right,
every ``must`` group matched, no ``never`` pattern matched), ``false`` (a ``never`` pattern matched,
or the status contradicts the truth: ``"agree"`` on a wrong backward, ``"wrong"`` on a right
one), ``unsure`` (``"could-not-check"`` or ``"non-deterministic"`` where the truth is known),
``missing`` (a ``must`` group unmatched), ``error`` (check_backward raised).  Held-out
situations are printed by verdict only: whoever changes the checker reads neither their
entries nor their reports.
"""

from __future__ import annotations

import re
import sys
import warnings
from collections import Counter
from pathlib import Path

HERE = Path(__file__).parent


def held_out() -> set[str]:
    path = HERE / "check_situations_held_out.txt"
    return set(path.read_text().split()) if path.exists() else set()


def judge(situation: dict, result) -> tuple[str, list]:
    """``(verdict, details)`` of one report."""
    text = str(result)
    false = [p for p in situation.get("never", ()) if re.search(p, text)]
    if false:
        return "false", false
    status = result.status
    if status in ("could-not-check", "non-deterministic"):
        return "unsure", [status]
    if (status == "agree") != bool(situation["right"]):
        return "false", [status]
    missing = [group for group in situation.get("must", ())
               if not any(re.search(p, text) for p in group)]
    if missing:
        return "missing", missing
    return "right", []


def run(situation: dict):
    import gradarg

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fn, args, kwargs = situation["build"]()
        return gradarg.check_backward(fn, *args, **(kwargs or {}))


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(HERE))
    import check_situations_blind as cs

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
        print(f"{part:8} {verdict:8} {s['name'] if part == 'open' else '-'}")
        if part == "open" and "--open-details" in argv and verdict != "right":
            print(f"         {details}\n         " + text.replace("\n", "\n         "))
    for part, c in counts.items():
        print(f"{part}: {sum(c.values())} situations: " + ", ".join(
            f"{k} {c[k]}" for k in ("right", "false", "unsure", "missing", "error")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
