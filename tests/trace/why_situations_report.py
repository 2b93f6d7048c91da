"""Judge ``gradarg.why_no_grad`` on the blind situations of ``why_situations_blind.py`` and print
the counts on the held-out third and on the open two thirds.

    PYTHONPATH=src OMP_NUM_THREADS=1 python tests/trace/why_situations_report.py [--open-details]

A verdict per (situation, moment): ``right`` (a case the situation accepts, every ``must``
group matched, no ``never`` pattern matched), ``false`` (a ``never`` pattern matched: the answer
states something the situation's truth contradicts), ``wrong case`` (a case it does not
accept, nothing false said), ``missing`` (the right case, a ``must`` group unmatched), or
``error`` (why_no_grad raised).  Held-out situations are printed by verdict only: whoever
changes the diagnosis reads neither their file entries nor their answers.
"""

from __future__ import annotations

import re
import sys
import warnings
from collections import Counter
from pathlib import Path

HERE = Path(__file__).parent


def held_out() -> set[str]:
    path = HERE / "why_situations_held_out.txt"
    return set(path.read_text().split()) if path.exists() else set()


def judge(situation: dict, diagnosis) -> tuple[str, list]:
    """``(verdict, details)`` of one answer."""
    text = diagnosis.message
    false = [p for p in situation.get("never", ()) if re.search(p, text)]
    if false:
        return "false", false
    if diagnosis.case not in situation["cases"]:
        return "wrong case", [diagnosis.case]
    missing = [group for group in situation.get("must", ())
               if not any(re.search(p, text) for p in group)]
    if missing:
        return "missing", missing
    return "right", []


def run(situation: dict, after: bool):
    import gradarg

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        built = situation["build"](after)
        return gradarg.why_no_grad(built["output"], built["tensor"],
                                   names=built.get("names"), module=built.get("module"))


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(HERE))
    import why_situations_blind as ws

    held = held_out()
    counts = {"held-out": Counter(), "open": Counter()}
    for s in ws.SITUATIONS:
        part = "held-out" if s["name"] in held else "open"
        for after in s["moments"]:
            try:
                d = run(s, after)
                verdict, details = judge(s, d)
                text = d.message
            except Exception as error:  # noqa: BLE001  (the tool, or the situation, failed)
                verdict, details, text = "error", [repr(error)], ""
            counts[part][verdict] += 1
            moment = "after" if after else "before"
            print(f"{part:8} {verdict:10} {s['name'] if part == 'open' else '-'} ({moment})")
            if part == "open" and "--open-details" in argv and verdict != "right":
                print(f"           {details}\n           {text}")
    for part, c in counts.items():
        print(f"{part}: {sum(c.values())} answers: " + ", ".join(
            f"{k} {c[k]}" for k in ("right", "false", "wrong case", "missing", "error")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
