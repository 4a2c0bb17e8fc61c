"""The documentation points at things that exist.

* every relative link of README.md and docs/*.md (``[text](path)``, ``[text](path#anchor)``,
  ``[text](#anchor)``) names a file that exists, and its anchor is a heading of that file
  (GitHub's slugs: lowercase, punctuation other than '-' and '_' dropped, spaces to '-',
  a repeated heading gets -1, -2, ...);
* every file and folder README's map of the code names exists;
* no absolute path of a machine (``/root/``, ``/work/``, ``/home/``) is left in the docs,
  the experiments, the benchmarks or the package's sources.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = sorted([README, *(ROOT / "docs").glob("*.md")])

FENCE = re.compile(r"^(```|~~~)")
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
INLINE_CODE = re.compile(r"`+[^`]*`+")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def prose_lines(text: str) -> list[str]:
    """The lines of a markdown file outside fenced code blocks."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line.lstrip()):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(line)
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
    # inline HTML tags go, but a code span's text stays as written (`<default>`)
    parts = re.split(r"(`+[^`]*`+)", text)
    text = "".join(p if p.startswith("`") else re.sub(r"<[^>]+>", "", p) for p in parts)
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for line in prose_lines(path.read_text(encoding="utf-8")):
        m = HEADING.match(line)
        if not m:
            continue
        base = slug(m.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def links(path: Path) -> list[str]:
    found = []
    for line in prose_lines(path.read_text(encoding="utf-8")):
        for m in LINK.finditer(INLINE_CODE.sub("", line)):
            found.append(m.group(1))
    return found


def test_slug_follows_github():
    assert slug("Time management: adaptive against classic, the match") == \
        "time-management-adaptive-against-classic-the-match"
    assert slug("Inference runtimes (UCI `Backend`, `zerochess bench --runtime`)") == \
        "inference-runtimes-uci-backend-zerochess-bench---runtime"
    assert slug("r13's ladder: 51.2% at 2000") == "r13s-ladder-512-at-2000"
    assert slug("snake_case and [a link](x.md)") == "snake_case-and-a-link"
    assert slug("`<default>`: r13, taught by <em>Stockfish</em>") == "default-r13-taught-by-stockfish"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_and_anchors_exist(doc):
    broken = []
    for target in links(doc):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:
            continue
        path_part, _, anchor = target.partition("#")
        dest = doc if not path_part else (doc.parent / path_part).resolve()
        if not dest.exists():
            broken.append(f"{target}: no such file")
            continue
        if anchor:
            if dest.suffix != ".md":
                broken.append(f"{target}: an anchor into a file that is not markdown")
            elif anchor not in anchors(dest):
                broken.append(f"{target}: no heading #{anchor} in {dest.relative_to(ROOT)}")
    assert broken == []


# The map of the code: a fenced block under "## Map of the code". An entry is a line at an
# indentation of 0, 2, 4, ... whose first column (up to two spaces) lists names separated by
# ", ": `folder/`, `file.py`, or `board.pyx/.pxd` (board.pyx and board.pxd); a name is
# relative to the folder above it. Any other line continues the description above it.
NAME = re.compile(r"^[\w.-]+(?:/|(?:/\.\w+)*)$")


def map_block() -> list[str]:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Map of the code"):]
    block = section.split("```", 2)[1]
    return block.splitlines()[1:]  # after the fence's own line


def map_entries() -> list[str]:
    paths: list[str] = []
    stack: list[tuple[int, str]] = []  # (indent, folder path)
    for line in map_block():
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip(" "))
        first = re.split(r"\s{2,}", line.strip(), maxsplit=1)[0]
        names = first.split(", ")
        if indent % 2 or not all(NAME.match(n) for n in names):
            continue  # a description's continuation
        while stack and stack[-1][0] >= indent:
            stack.pop()
        if stack and indent != stack[-1][0] + 2:
            continue  # deeper than one level below a folder: a continuation
        if not stack and indent:
            continue
        parent = stack[-1][1] if stack else ""
        for name in names:
            if name.endswith("/"):
                paths.append(parent + name)
                if len(names) == 1:
                    stack.append((indent, parent + name))
                continue
            stem, *exts = name.split("/")
            paths.append(parent + stem)
            base = stem.rsplit(".", 1)[0]
            paths.extend(parent + base + ext for ext in exts)
    return paths


def test_the_map_parser_reads_the_map():
    entries = map_entries()
    assert "zerochess/" in entries and "tests/" in entries
    assert any(p.endswith(".pyx") for p in entries)
    assert len(entries) > 40


def test_every_path_in_the_map_of_the_code_exists():
    missing = [p for p in map_entries() if not (ROOT / p).exists()]
    assert missing == []


SCANNED = {
    "docs": (".md", ".toml", ".json", ".txt"),
    "experiments": (".py", ".md", ".sh", ".txt"),
    "benchmarks": (".py", ".md", ".sh", ".txt"),
    "zerochess": (".py", ".pyx", ".pxd", ".md"),
}
MACHINE_PATH = re.compile(r"/(?:root|work|home)/")


def test_no_absolute_machine_paths():
    found = []
    for folder, suffixes in SCANNED.items():
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix not in suffixes or not path.is_file():
                continue
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if MACHINE_PATH.search(line):
                    found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:100]}")
    for n, line in enumerate(README.read_text(encoding="utf-8").splitlines(), 1):
        if MACHINE_PATH.search(line):
            found.append(f"README.md:{n}: {line.strip()[:100]}")
    assert found == []
