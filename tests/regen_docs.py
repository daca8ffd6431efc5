"""Regenerate the example outputs quoted in the docs from the runs themselves.

    python tests/regen_docs.py

Each example sits between ``<!-- generated: NAME -->`` and ``<!-- end generated -->`` in
its file; tests/test_shipped.py::test_docs_examples_are_current fails when one differs
from what the code now produces, so the docs cannot drift. Review ``git diff docs``.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Callable, Dict

import dcnsim

ROOT = Path(__file__).resolve().parents[1]


def _compare_roce() -> str:
    return dcnsim.compare("roce_incast_pfc", jobs=1).to_markdown()


#: (file, example name) -> generator of the text between the markers
EXAMPLES: Dict[tuple, Callable[[], str]] = {
    ("docs/compare.md", "compare roce_incast_pfc"): _compare_roce,
}


def block(name: str) -> re.Pattern:
    return re.compile(rf"(<!-- generated: {re.escape(name)} -->\n)(.*?)(<!-- end generated -->)", re.S)


def current(path: str, name: str) -> str:
    m = block(name).search((ROOT / path).read_text(encoding="utf-8"))
    assert m, f"{path}: no generated block {name!r}"
    return m.group(2)


def main() -> int:
    for (path, name), gen in EXAMPLES.items():
        p = ROOT / path
        text = p.read_text(encoding="utf-8")
        new = block(name).sub(lambda m: m.group(1) + gen() + m.group(3), text)
        p.write_text(new, encoding="utf-8")
        print(f"wrote {path}: {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
