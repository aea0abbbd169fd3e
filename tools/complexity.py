"""The complexity check of ``make lint``: no function in the given folders and files (the Makefile's
``COMPLEXITY_PATHS``) above a cyclomatic complexity of 15 (radon's ``cc``, which counts one per
decision point: ``if``, ``elif``, loops, ``and`` / ``or``, comprehension ``if`` clauses, ``except``,
``assert``…).

    python -m tools.complexity [PATH ...]      # a folder (its .py files) or a file; default: shared/turn shared/agent

Prints nothing and exits 0 when every function is within the limit; else prints one line per
function over it (``path:line name complexity``), the worst first, and exits 1.
Source: https://radon.readthedocs.io/en/latest/intro.html#cyclomatic-complexity
"""
from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from radon.complexity import cc_visit

#: The highest cyclomatic complexity a function may have (the developers' guide: small functions).
LIMIT = 15
#: What is checked when no path is given.
DEFAULT_PATHS = ("shared/turn", "shared/agent")


@dataclass(frozen=True)
class Offender:
    """A function over ``LIMIT``: where it is, its name (``Class.method`` for a method), its complexity."""

    path: str
    line: int
    name: str
    complexity: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line} {self.name} {self.complexity}"


def _python_files(paths: Iterable[str]) -> Iterator[Path]:
    for path in map(Path, paths):
        yield from sorted(path.rglob("*.py")) if path.is_dir() else [path]


def offenders(paths: Iterable[str], limit: int = LIMIT) -> list[Offender]:
    """Every function (methods and nested functions included) in ``paths`` over ``limit``, worst first.

    Raises:
        SyntaxError: a file that does not parse.
    """
    found = {Offender(str(file), function.lineno, function.fullname, function.complexity)
             for file in _python_files(paths)
             for function in _functions(cc_visit(file.read_text(encoding="utf-8")))
             if function.complexity > limit}  # a set: radon lists a method with its class and alone
    return sorted(found, key=lambda offender: (-offender.complexity, offender.path, offender.line))


def _functions(blocks: Iterable[Any]) -> Iterator[Any]:
    """radon's functions and methods in ``blocks``, with the functions nested in them (a class is
    not one: its score is its methods')."""
    for block in blocks:
        if hasattr(block, "methods"):  # radon.visitors.Class
            yield from _functions(block.methods)
            yield from _functions(getattr(block, "inner_classes", []))
        else:
            yield block
            yield from _functions(block.closures)


def main(argv: list[str] | None = None) -> int:
    paths = (sys.argv[1:] if argv is None else argv) or list(DEFAULT_PATHS)
    found = offenders(paths)
    if not found:
        return 0
    print(f"functions over cyclomatic complexity {LIMIT} (radon cc; split them):", file=sys.stderr)
    for offender in found:
        print(f"  {offender}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
