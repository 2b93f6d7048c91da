"""Print the tool's verdict on every blind scenario, and the counts on the held-out third and
on the open two thirds.

    cd /work/s8-scen && PYTHONPATH=src OMP_NUM_THREADS=1 python tests/trace/scenarios/scenario_report.py

Reading a held-out scenario's file is what the held-out third forbids to whoever changes the
diagnosis; this script prints only names and verdicts for those (``--open-details`` prints the
tool's text for the open ones only).
"""

from __future__ import annotations

import sys
import warnings
from collections import Counter
from pathlib import Path

import pytest


def main(argv: list[str]) -> int:
    here = Path(__file__).parent
    sys.path.insert(0, str(here))
    import test_scenarios as ts

    import gradarg

    held = set(ts.held_out())
    counts = {"held-out": Counter(), "open": Counter()}
    for name in ts.NAMES:
        case = ts.load(name)
        part = "held-out" if name in held else "open"
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                run = case.step(gradarg.watch)
            case.truth(run)
            text = ts.scenario_kit.tool_text(run.w, case.ASK)
            verdict, missing, found = ts.scenario_kit.judge(text, case.MUST, case.MUST_NOT)
        except pytest.skip.Exception:  # the step the case describes does not happen here
            verdict, missing, found, text = "not here", [], [], ""
        except Exception as error:  # noqa: BLE001  (the tool (or the watched step) failed)
            verdict, missing, found, text = "error", [], [repr(error)], ""
        counts[part][verdict] += 1
        if verdict == "false" and found == [ts.scenario_kit.FALSE_OK] \
                and text.startswith("summary: gradients ok"):
            # the only false claim is a "gradients ok" (scoped: it says what a watch cannot
            # see); still counted false, since the step it vouches for has a bug
            counts[part]["scoped ok"] += 1
        print(f"{part:8} {verdict:6} {name}")
        if part == "open" and "--open-details" in argv and verdict != "right":
            print(f"         missing {missing}\n         false {found}")
            print("         " + text.replace("\n", "\n         "))
    for part, c in counts.items():
        total = sum(c.values()) - c["scoped ok"]
        print(
            f"{part}: {total} scenarios: right {c['right']}, false {c['false']}, "
            f"silent {c['silent']}, error {c['error']}"
            + (f", not here {c['not here']}" if c["not here"] else "")
            + f" (false only by a 'gradients ok': {c['scoped ok']})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
