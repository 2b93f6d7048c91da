"""Assemble the question corpus from the collectors' parts and split off the held-out third.

    python tests/questions/assemble.py PART.json ... [--split]

Reads every part (a JSON list of records, see ``corpus.json``'s ``about``), merges records that
share an address (the first keeps the others in ``also``), numbers them within their topic, and
writes ``tests/questions/corpus.json``.  With ``--split`` (once, before any page is written) a
third of the records, drawn with ``random.Random(SPLIT_SEED)`` over the sorted ids, is marked
``held_out``: they are graded at the end by a reader who wrote nothing, and whoever writes pages
reads only the others (``python tests/questions/assemble.py --open > open.json``).  Without
``--split`` the held-out marks of an existing corpus are kept, matched by address.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

HERE = Path(__file__).parent
CORPUS = HERE / "corpus.json"
SPLIT_SEED = 20261129
ABOUT = (
    "Real questions about PyTorch autograd (backward and its gradient argument, grad / "
    "grad_outputs, VJPs and JVPs, Jacobians and Hessians, .grad None / zero / NaN, in-place and "
    "graph errors, retain_graph / create_graph / accumulation, higher order, custom "
    "autograd.Function, hooks, DDP / FSDP / AMP / torch.compile, sparse Jacobians, gradcheck), "
    "found by the fixed queries of queries.py through a search over PyTorch forum, Stack "
    "Overflow and GitHub issue threads, every in-scope result kept. Each record: source "
    "(address; also: addresses of near-duplicates merged into it), found_by (the query), "
    "topic, question (in our words), keywords (the asker's words and torch's message), answer "
    "(key facts, true on torch 2.13), error (torch 2.13's message, if any), thread_wrong (where "
    "the thread is outdated or wrong), check (Python asserting the answer; run by "
    "test_corpus.py), anchor (the site entry that answers it: page#label), held_out (the third "
    "put aside before any page was written)."
)


def _key(url: str) -> str:
    return url.strip().rstrip("/").split("#")[0].lower()


def merge(parts: list[list[dict]]) -> list[dict]:
    by_address: dict[str, dict] = {}
    merged: list[dict] = []
    for part in parts:
        for record in part:
            addresses = [record["source"], *record.get("also", [])]
            known = next((by_address[_key(a)] for a in addresses if _key(a) in by_address), None)
            if known is not None:
                for a in addresses:
                    if _key(a) not in by_address:
                        known.setdefault("also", []).append(a)
                        by_address[_key(a)] = known
                continue
            record = dict(record)
            record["part_id"] = record["id"]
            merged.append(record)
            for a in addresses:
                by_address[_key(a)] = record
    counters: dict[str, int] = {}
    for record in merged:
        topic = record["topic"]
        counters[topic] = counters.get(topic, 0) + 1
        record["id"] = f"{topic}/{counters[topic]:03d}"
    return merged


def split(records: list[dict]) -> None:
    ids = sorted(r["id"] for r in records)
    held = set(random.Random(SPLIT_SEED).sample(ids, round(len(ids) / 3)))
    for r in records:
        r["held_out"] = r["id"] in held


def main(argv: list[str]) -> int:
    if argv == ["--open"]:
        data = json.loads(CORPUS.read_text())
        print(json.dumps([r for r in data["records"] if not r["held_out"]], indent=1))
        return 0
    do_split = "--split" in argv
    files = [a for a in argv if a != "--split"]
    records = merge([json.loads(Path(f).read_text()) for f in files])
    if do_split:
        split(records)
    else:
        old = {_key(r["source"]): r for r in json.loads(CORPUS.read_text())["records"]}
        for r in records:
            before = old[_key(r["source"])]
            r["held_out"] = before["held_out"]
            r["id"] = before["id"]
            if before.get("anchor") and not r.get("anchor"):
                r["anchor"] = before["anchor"]
    fields = ("id", "topic", "source", "also", "source_kind", "found_by", "question", "keywords",
              "answer", "error", "thread_wrong", "check", "isolated", "anchor", "held_out",
              "thread_answer", "part_id")
    out = [{f: r.get(f, [] if f == "also" else None) for f in fields} for r in records]
    for r in out:
        r["isolated"] = bool(r["isolated"])
    data = {"about": ABOUT, "split_seed": SPLIT_SEED, "records": out}
    CORPUS.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(out)} records, {sum(r['held_out'] for r in out)} held out")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
