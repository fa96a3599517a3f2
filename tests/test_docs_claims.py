"""The prose of the README and the docs cites only what the project holds: no file kept outside the
repository (the design contract ``DESIGN.md``, the specs' sections, paths under ``../shared``)."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: what points outside the repository, with the reason shown when a page has it
OUTSIDE = {
    r"DESIGN\.md": "the design contract is not in the repository (docs/design.md is)",
    r"§": "a section of the specs (spec §N, gamma_games.md §N), which are not in the repository",
    r"\.\./shared\b": "../shared is not in the repository",
}


def prose_lines(path: Path) -> list[tuple[int, str]]:
    """The numbered lines of a Markdown file outside its fenced code blocks."""
    lines, fenced = [], False
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced:
            lines.append((number, line))
    return lines


def outside_citations(path: Path) -> list[str]:
    return [f"{path.relative_to(ROOT)}:{number}: {why}: {line.strip()}"
            for number, line in prose_lines(path) for pattern, why in OUTSIDE.items() if re.search(pattern, line)]


def test_prose_cites_nothing_outside_the_repository():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    found = [hit for page in pages for hit in outside_citations(page)]
    assert not found, "\n".join(found)


def test_the_check_finds_each_kind_of_outside_citation(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("See DESIGN.md.\nAs spec §4.2 says.\n`auction.md` §7.4\nRead ../shared/specs.\n"
                    "```\nDESIGN.md in a block\n```\n")
    hits = [line for number, line in prose_lines(page)
            for pattern in OUTSIDE if re.search(pattern, line)]
    assert hits == ["See DESIGN.md.", "As spec §4.2 says.", "`auction.md` §7.4", "Read ../shared/specs."]
