"""Every relative link, anchor and repo path named in README.md, docs/**/*.md and the READMEs of
infra/ and tests/ resolves.

Read as text, no network: a Markdown link ``[text](target)`` whose target is not a URL must name a
file or directory of the checkout (relative to the document), and its ``#anchor`` a heading of that
file under GitHub's slug rules (lower case; punctuation other than ``-`` and ``_`` dropped; spaces
become ``-``; a repeated heading gets ``-1``, ``-2`` …). A code span that looks like a repo path
(``shared/…``, ``tools/…``, ``tests/…`` …; ``<placeholders>`` and ``*`` match any name) must exist,
and a dotted name under ``shared`` (``shared.outbox.AnswerCarries``) must name a module, or a name
that module defines at its top level (read with ``ast``, nothing imported).
Fenced code blocks are not read. Files under ``docs/results/`` are written by their commands
(``make bench``, ``make eval``) and may be absent from a fresh checkout. A link into ``docs/design.md``
is checked like any other (``design.md#8-agent``); its citations in prose (``docs/design.md §8``) by
section number.
"""
from __future__ import annotations

import ast
import json
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: Top-level directories whose names in a code span are read as repo paths.
PATH_ROOTS = ("shared", "functions", "tools", "tests", "bench", "infra", "data", "docs", ".ci")
#: Written by a command, not kept by hand: may be absent (docs/benchmarks.md, docs/evaluation.md).
GENERATED = ("docs/results/",)
DESIGN = "docs/design.md"

_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_LINK = re.compile(r"(?<!!)\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_CODE = re.compile(r"(`+)(.+?)\1")
_INLINE_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_DESIGN_CITE = re.compile(r"docs/design\.md §(\d+)")


@dataclass(frozen=True)
class Problem:
    """One thing a document names that does not resolve: the document, its line (1-based), what."""

    doc: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.doc}:{self.line}: {self.what}"


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a heading's text (github-slugger's rules), before de-duplication."""
    text = _INLINE_LINK.sub(r"\1", heading).replace("`", "").lower()
    kept = "".join(c for c in text if c in " -" or unicodedata.category(c)[0] in "LNM" or unicodedata.category(c) == "Pc")
    return kept.replace(" ", "-")


def _prose_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) outside fenced code blocks."""
    lines, fenced = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            lines.append((number, line))
    return lines


def anchors(text: str) -> set[str]:
    """Every heading anchor of a Markdown text, repeated headings numbered as GitHub does."""
    seen: dict[str, int] = {}
    found = set()
    for _, line in _prose_lines(text):
        match = _HEADING.match(line)
        if not match:
            continue
        slug = github_slug(match.group(2))
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def _generated(path: Path, root: Path) -> bool:
    relative = path.resolve().relative_to(root.resolve()).as_posix() if path.resolve().is_relative_to(root.resolve()) else ""
    return relative.startswith(GENERATED)


def _link_problem(doc: Path, target: str, root: Path) -> str | None:
    if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto: … (no network)
        return None
    file_part, _, anchor = target.partition("#")
    path = (doc.parent / file_part) if file_part else doc
    if not path.exists():
        return None if _generated(path, root) else f"link to a missing file: {target}"
    if anchor and (path.is_dir() or anchor not in anchors(path.read_text(encoding="utf-8"))):
        return f"link to a missing anchor: {target}"
    return None


def _path_problem(span: str, root: Path) -> str | None:
    span = span.strip()
    if " " in span or not span.startswith(tuple(f"{r}/" for r in PATH_ROOTS)):
        return None
    if span.startswith(GENERATED) or span == DESIGN:
        return None
    pattern = re.sub(r"<[^>]*>", "*", span).rstrip("/")
    if any(ch in pattern for ch in "*?["):
        return None if any(root.glob(pattern)) else f"no file matches `{span}`"
    return None if (root / pattern).exists() else f"missing path `{span}`"


def _top_level_names(module: Path) -> set[str]:
    names = set()
    for node in ast.parse(module.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for target in targets for n in ast.walk(target) if isinstance(n, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    return names


def _dotted_problem(span: str, root: Path) -> str | None:
    if not re.fullmatch(r"shared(\.[A-Za-z_]\w*)+", span):
        return None
    parts = span.split(".")
    for end in range(len(parts), 0, -1):  # the longest prefix that is a module or package
        base = root.joinpath(*parts[:end])
        module = base / "__init__.py" if base.is_dir() else base.with_suffix(".py")
        if module.exists():
            if end == len(parts) or parts[end] in _top_level_names(module):
                return None
            return f"`{span}`: {'.'.join(parts[:end])} defines no {parts[end]}"
    return f"`{span}`: no such module"


def problems(doc: Path, root: Path = ROOT) -> list[Problem]:
    """What ``doc`` links to or names as a repo path that does not resolve."""
    name = doc.relative_to(root).as_posix()
    found = []
    for number, line in _prose_lines(doc.read_text(encoding="utf-8")):
        for target in _LINK.findall(line):
            if (what := _link_problem(doc, target, root)) is not None:
                found.append(Problem(name, number, what))
        for _, span in _CODE.findall(line):
            if (what := _path_problem(span, root) or _dotted_problem(span.strip(), root)) is not None:
                found.append(Problem(name, number, what))
    return found


def documents(root: Path = ROOT) -> list[Path]:
    """The checkout's documentation: the README, docs/, and the READMEs of infra/ and tests/."""
    others = [root / p for p in ("infra/README.md", "tests/README.md", "tests/eval/README.md")]
    return [root / "README.md", *sorted((root / "docs").rglob("*.md")), *(p for p in others if p.exists())]


def test_readme_and_docs_links_anchors_and_paths_resolve():
    found = [str(p) for doc in documents() for p in problems(doc)]
    assert found == [], "\n".join(found)


def test_design_citations_name_its_sections():
    cited = {(doc.relative_to(ROOT).as_posix(), int(n))
             for doc in documents() for n in _DESIGN_CITE.findall(doc.read_text(encoding="utf-8"))}
    design = ROOT / DESIGN
    if not design.exists():
        pytest.skip(f"{DESIGN} is not in this checkout; {len(cited)} citations wait for it")
    numbered = {int(m.group(1)) for _, line in _prose_lines(design.read_text(encoding="utf-8"))
                if (h := _HEADING.match(line)) and (m := re.match(r"§?(\d+)\b", h.group(2)))}
    missing = sorted((doc, n) for doc, n in cited if n not in numbered)
    assert missing == [], f"cited sections that {DESIGN} does not have: {missing}"


@pytest.mark.parametrize(("heading", "slug"), [
    ("How a message flows", "how-a-message-flows"),
    ("`make demo`", "make-demo"),
    ("Configuration and running locally (`make run`)", "configuration-and-running-locally-make-run"),
    ("Delivery: nothing lost, nothing said twice", "delivery-nothing-lost-nothing-said-twice"),
    ("7. Turn", "7-turn"),
    ("Events from TDX (TDX_CLIENT_ID)", "events-from-tdx-tdx_client_id"),
    ("Webhook 5xx rate", "webhook-5xx-rate"),
    ("查活動 and [a link](x.md)", "查活動-and-a-link"),
])
def test_github_slug_follows_githubs_rules(heading, slug):
    assert github_slug(heading) == slug


def test_problems_reports_each_kind_of_broken_reference(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "real.py").write_text("from x import y as z\nLIMIT: int = 3\nclass Real:\n    pass\n")
    (tmp_path / "docs" / "other.md").write_text("# Other\n## Results\n## Results\n")
    (tmp_path / "docs" / "design.md").write_text("# Design\n## 7. Turn\n")
    doc = tmp_path / "docs" / "page.md"
    doc.write_text("\n".join([
        "# Page",
        "[ok](other.md#results-1) [ok](#page) [ok](https://example.com/x#y) `shared/real.py` `shared/*.py`",
        "[gone](missing.md) [ok](design.md#7-turn) [no anchor](design.md#99-nothing)",
        "[no anchor](other.md#results-2)",
        "[no local anchor](#nowhere)",
        "`shared/gone.py` and `shared/*.txt`",
        "```",
        "[in a fence](missing.md) `shared/also-gone.py`",
        "```",
        "`docs/results/bench.md` [generated](results/eval.md)",
        "`shared.real` `shared.real.Real` `shared.real.LIMIT` `shared.real.z` `shared.real.gone` `shared.nowhere.x`",
    ]))
    found = problems(doc, tmp_path)
    assert [(p.line, p.what) for p in found] == [
        (3, "link to a missing file: missing.md"),
        (3, "link to a missing anchor: design.md#99-nothing"),
        (4, "link to a missing anchor: other.md#results-2"),
        (5, "link to a missing anchor: #nowhere"),
        (6, "missing path `shared/gone.py`"),
        (6, "no file matches `shared/*.txt`"),
        (11, "`shared.real.gone`: shared.real defines no gone"),
        (11, "`shared.nowhere.x`: no such module"),
    ]


def test_readme_stays_short_and_its_make_commands_and_data_counts_are_true():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200  # the newcomer's page; the rest lives in docs/
    targets = set(re.findall(r"^([a-z][a-z-]*):", (ROOT / "Makefile").read_text(encoding="utf-8"), re.MULTILINE))
    named = set(re.findall(r"`(?:[A-Z_]+=\S+ )*make ([a-z][a-z-]*)", readme))
    assert {"run", "ingest-places", "ingest-events"} <= named and named <= targets, named - targets
    # "the shipped data is small: N shops in M townships": what data/places-catalog.json holds
    shops, towns = map(int, re.search(r"(\d+) shops in (\d+) townships", readme).groups())
    places = json.loads((ROOT / "data" / "places-catalog.json").read_text(encoding="utf-8"))["places"]
    assert (shops, towns) == (len(places), len({place["area"] for place in places}))
