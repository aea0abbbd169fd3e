"""Docstrings and comments cite what a clone holds, and say what and why, not when.

Two rules, read from the source text (nothing is imported):

* no comment or docstring in ``shared/`` or ``functions/`` carries the project's history — a trial,
  finding or issue number — or cites ``DESIGN §``, a document outside the repository (the history is
  in the commit messages: ``git log -S``);
* every ``docs/design.md §`` section cited anywhere in the Python sources names a numbered heading that
  ``docs/design.md`` has (``## 7. Turn``), so a citation cannot point at nothing.

Source: docs/design.md (its opening paragraph: sections are cited by number).
"""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DESIGN = ROOT / "docs" / "design.md"

#: Where history and outside documents may not be cited (the acceptance's grep).
CHECKED = ("shared", "functions")
#: Where a docs/design.md citation must name an existing section.
CITING = ("shared", "functions", "tools", "tests", "bench")


HISTORY = re.compile(r"trial ?[0-9]|finding [0-9]|issue [0-9]|DESIGN §")
#: ``docs/design.md §3``, ``docs/design.md §3, §8, §11``, ``docs/design.md §4 and §10``, ``§7–§8``.
CITATION = re.compile(r"docs/design\.md\s+(§\w+(?:(?:\s*,\s*|\s*[–-]\s*|\s+and\s+)§\w+)*)")
SECTION = re.compile(r"§(\w+)")

#: The numbered sections docs/design.md must keep, in this order (their numbers are cited).
SECTIONS = ("Shape", "Identity", "Webhook", "Handoff", "Places and events", "Memory", "Turn", "Agent",
            "Operations", "Staff", "Delivery")


def _sources(roots: tuple[str, ...], glob: str = "*.py") -> list[Path]:
    """Every file matching ``glob`` under ``roots`` (relative to the repository), outside caches."""
    files = []
    for root in roots:
        for path in sorted((ROOT / root).rglob(glob)):
            if "__pycache__" in path.parts or not path.is_file():
                continue
            files.append(path)
    return files


def _hits(pattern: re.Pattern, roots: tuple[str, ...], glob: str = "*.py") -> list[tuple[str, int, re.Match]]:
    """``(path, line number, match)`` for every match of ``pattern`` in the files under ``roots``."""
    found = []
    for path in _sources(roots, glob):
        rel = path.relative_to(ROOT).as_posix()
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), start=1):
            found.extend((rel, number, match) for match in pattern.finditer(line))
    return found


def design_headings() -> dict[str, str]:
    """``{number: title}`` of the ``## n. Title`` headings of docs/design.md."""
    text = DESIGN.read_text(encoding="utf-8")
    return {m.group(1): m.group(2).strip() for m in re.finditer(r"^## (\d+)\. (.+)$", text, re.MULTILINE)}


def test_shared_and_functions_cite_no_history_or_outside_document():
    # every file, as the acceptance's ``grep -rE`` reads them, not only the Python sources
    hits = [f"{path}:{number}: {match.group()!r}" for path, number, match in _hits(HISTORY, CHECKED, "*")]
    assert hits == [], "history or DESIGN § in comments or docstrings:\n" + "\n".join(hits)


def test_design_md_has_the_numbered_sections_in_order():
    assert list(design_headings().items()) == [(str(n), title) for n, title in enumerate(SECTIONS, start=1)]


def test_design_md_citations_name_existing_sections():
    headings = design_headings()
    cited = [(path, number, SECTION.findall(match.group(1))) for path, number, match in _hits(CITATION, CITING)]
    missing = [f"{path}:{number}: §{section}" for path, number, sections in cited
               for section in sections if section not in headings]
    assert missing == [], "docs/design.md sections cited but not in docs/design.md:\n" + "\n".join(missing)
    # the scan is not vacuous: it reads citations, lists of sections included (§3, §8, §11)
    assert any(len(sections) > 1 for _, _, sections in cited)
