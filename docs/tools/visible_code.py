"""The code a reader sees on a page, in page order: what they would copy and run.

A page is a MyST Markdown notebook. Its *visible* code is every ``code-cell`` without the tags
``remove-cell`` or ``remove-input`` (a ``hide-input`` cell counts as visible: its code is one
click away). Hidden cells may glue numbers, assert and draw, but never define what a visible
cell uses; ``tests/site/test_visible_code.py`` runs every page's visible code in a fresh
interpreter to hold the pages to that.

The same visible code serves three readers:

- ``examples/NAME.py``: for each tutorial page ``docs/tutorial/NAME.md`` (dashes become
  underscores), a plain percent-format script generated from the page. The page is the one
  source; ``python docs/tools/visible_code.py --write`` regenerates the scripts and
  ``--check`` (run by the tests) fails when a script and its page differ.
- the downloadable notebook of every page (``notebook()``): the page's prose and visible code
  cells, no hidden plumbing; ``docs/conf.py`` writes it next to the page's source for the
  theme's download button.
- the tests, which run both in an empty working directory.

Only the standard library here: the tests import this module without the docs dependencies.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
EXAMPLES = ROOT / "examples"
HIDDEN = {"remove-cell", "remove-input"}

_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)
_TAGS = re.compile(r"^:tags:\s*\[([^\]]*)\]\s*$", re.MULTILINE)
_FRONT = re.compile(r"\A---\n.*?\n---\n", re.DOTALL)


def _split(body: str) -> tuple[set[str], str]:
    """A cell body -> (its tags, its code without the option lines)."""
    lines = body.split("\n")
    tags: set[str] = set()
    if lines and lines[0].strip() == "---":  # YAML option block
        end = lines.index("---", 1)
        for line in lines[1:end]:
            m = re.match(r"\s*tags:\s*\[([^\]]*)\]", line)
            if m:
                tags |= {t.strip() for t in m.group(1).split(",") if t.strip()}
        lines = lines[end + 1:]
    while lines and lines[0].startswith(":"):
        m = _TAGS.match(lines[0])
        if m:
            tags |= {t.strip() for t in m.group(1).split(",") if t.strip()}
        lines = lines[1:]
    return tags, "\n".join(lines).strip("\n")


def cells(text: str) -> list[tuple[str, set[str], str]]:
    """The page as ``("markdown", set(), text)`` and ``("code", tags, source)`` items."""
    text = _FRONT.sub("", text, count=1)
    out: list[tuple[str, set[str], str]] = []
    pos = 0
    for m in _CELL.finditer(text):
        prose = text[pos:m.start()].strip("\n")
        if prose.strip():
            out.append(("markdown", set(), prose))
        tags, source = _split(m.group(1))
        out.append(("code", tags, source))
        pos = m.end()
    prose = text[pos:].strip("\n")
    if prose.strip():
        out.append(("markdown", set(), prose))
    return out


def visible_cells(page: Path) -> list[str]:
    """The visible code cells of a page, in order."""
    return [src for kind, tags, src in cells(page.read_text(encoding="utf-8"))
            if kind == "code" and not tags & HIDDEN and src.strip()]


def _title(page: Path) -> str:
    m = re.search(r"^# (.+)$", page.read_text(encoding="utf-8"), re.MULTILINE)
    return m.group(1).strip() if m else page.stem


def script(page: Path) -> str:
    """The page's visible code as a percent-format script (``# %%`` between cells)."""
    rel = page.relative_to(ROOT).as_posix()
    head = (f'"""{_title(page)}\n\nThe code of the page {rel}, cell by cell,\n'
            "generated from that page by docs/tools/visible_code.py\n(edit the page, then "
            "run `python docs/tools/visible_code.py --write`).\n\n"
            f"Run: python examples/{page.stem.replace('-', '_')}.py\n\"\"\"\n")
    body = "\n\n".join(f"# %%\n{src}" for src in visible_cells(page))
    return f"{head}\n{body}\n"


_GLUE_ROLE = re.compile(r"\{glue(?::(?:text|md|math))?\}`([^`]+)`")
_GLUE_BLOCK = re.compile(r"^```\{glue(?::(md|math))?\} *(\S+)\n(?::[^\n]*\n)*```[ \t]*$",
                         re.MULTILINE)


def glued_values(glue_json: dict) -> dict[str, tuple[str, str]]:
    """Name -> (MIME type, value) of every value a page glued: MyST-NB writes them next to
    the executed notebook, as ``jupyter_execute/PAGE.glue.json``."""
    import ast

    values = {}
    for name, out in glue_json.items():
        data = out.get("data", {})
        for mime in ("text/latex", "text/markdown", "text/plain"):
            if mime in data:
                value = data[mime]
                value = "".join(value) if isinstance(value, list) else value
                if mime == "text/plain":
                    with contextlib.suppress(ValueError, SyntaxError):
                        value = str(ast.literal_eval(value))
                values[name] = (mime, value)
                break
    return values


def _fill(prose: str, glued: dict[str, tuple[str, str]]) -> str:
    """Replace glue roles and directives by the values the build glued."""
    def block(m):
        mime, value = glued.get(m.group(2), ("", m.group(0)))
        if mime == "text/latex":
            return "$$\n" + value.strip().strip("$").strip() + "\n$$"
        return value

    def role(m):
        mime, value = glued.get(m.group(1), ("", m.group(0)))
        return value if mime != "text/latex" else "$" + value.strip().strip("$") + "$"

    prose = _GLUE_ROLE.sub(role, _GLUE_BLOCK.sub(block, prose))
    prose = re.sub(r"\{download\}`([^<`]+?)\s*<[^>]+>`", r"`\1`", prose)
    return _fences(prose)


def _fences(prose: str) -> str:
    """MyST ``:::`` blocks as Jupyter shows them: a dropdown becomes ``<details>``, any
    other block (a container) just its content."""
    out, stack = [], []
    for line in prose.split("\n"):
        m = re.match(r"^(\s*):::\{(\w[\w-]*)\}\s*(.*)$", line)
        if m:
            stack.append(m.group(2))
            if m.group(2) == "dropdown":
                out.append(f"{m.group(1)}<details><summary>{m.group(3)}</summary>\n")
            continue
        if stack and re.match(r"^\s*:[\w-]+:", line) and out and (
                out[-1].endswith("</summary>\n") or not out[-1].strip()):
            continue                                  # the block's options
        if stack and re.match(r"^\s*:::\s*$", line):
            if stack.pop() == "dropdown":
                out.append(line.replace(":::", "\n</details>"))
            continue
        out.append(line)
    return "\n".join(out)


def notebook(page: Path, glued: dict[str, tuple[str, str]] | None = None) -> dict:
    """The downloadable notebook: the page's prose and visible code, nothing hidden. With
    ``glued`` (from :func:`glued_values`), the live numbers the page shows are written into
    the prose."""
    nb_cells = []
    for kind, tags, src in cells(page.read_text(encoding="utf-8")):
        if kind == "markdown":
            text = _fill(src, glued) if glued else src
            nb_cells.append({"cell_type": "markdown", "metadata": {}, "source": text})
        elif not tags & HIDDEN and src.strip():
            nb_cells.append({"cell_type": "code", "metadata": {}, "source": src,
                             "outputs": [], "execution_count": None})
    return {
        "nbformat": 4, "nbformat_minor": 5, "cells": nb_cells,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                    "language": "python"},
                     "language_info": {"name": "python"}},
    }


def write_notebook(page: Path, target: Path, glue_json: Path | None = None) -> None:
    """Write the downloadable notebook; the values in ``glue_json`` (the build's
    ``PAGE.glue.json``) fill the prose."""
    target.parent.mkdir(parents=True, exist_ok=True)
    glued = None
    if glue_json is not None and glue_json.exists():
        glued = glued_values(json.loads(glue_json.read_text(encoding="utf-8")))
    nb = notebook(page, glued)
    for i, cell in enumerate(nb["cells"]):  # nbformat 4.5 wants cell ids
        cell["id"] = f"cell-{i}"
    target.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def pages() -> list[Path]:
    """Every page of the site (MyST notebooks), in a stable order."""
    return sorted(p for p in DOCS.rglob("*.md")
                  if "_build" not in p.parts and p.read_text(encoding="utf-8")
                  .startswith("---\nfile_format: mystnb"))


def tutorial_scripts() -> dict[Path, Path]:
    """docs/tutorial/NAME.md -> examples/NAME.py (dashes -> underscores)."""
    return {p: EXAMPLES / f"{p.stem.replace('-', '_')}.py"
            for p in sorted((DOCS / "tutorial").glob("*.md"))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", action="store_true", help="regenerate examples/*.py")
    group.add_argument("--check", action="store_true", help="fail if a script is stale")
    group.add_argument("--show", metavar="PAGE", help="print a page's visible code")
    args = parser.parse_args(argv)
    if args.show:
        print(script(Path(args.show).resolve()))
        return 0
    stale = []
    for page, target in tutorial_scripts().items():
        text = script(page)
        if args.write:
            target.write_text(text, encoding="utf-8")
        elif not target.exists() or target.read_text(encoding="utf-8") != text:
            stale.append(f"{target.relative_to(ROOT)} differs from {page.relative_to(ROOT)}")
    for line in stale:
        print(line, file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
