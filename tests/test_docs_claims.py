"""The prose of the README and the docs, and the Python source's docstrings, comments and messages,
cite only what the project holds: no file kept outside the repository (the design contract
``DESIGN.md``, the interface notes ``INTERFACE18.md``, the specs and their sections, paths under
``../shared``)."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: what points outside the repository, with the reason shown when a page has it
OUTSIDE = {
    r"DESIGN\.md": "the design contract is not in the repository (docs/design.md is)",
    r"INTERFACE18\.md": "the interface notes are not in the repository",
    r"§": "a section of the specs (spec §N, gamma_games.md §N), which are not in the repository",
    r"\.\./shared\b|\bshared/specs\b": "../shared is not in the repository",
}
#: the folders of Python source whose texts users read (tests may cite the specs they check against)
SOURCE_FOLDERS = ("arena_envs", "llm_policies", "baselines", "agent_service", "scripts", "benchmarks", "examples")


def prose_lines(path: Path) -> list[tuple[int, str]]:
    """The numbered lines of a Markdown file outside its fenced code blocks."""
    lines, fenced = [], False
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced:
            lines.append((number, line))
    return lines


def source_lines(path: Path) -> list[tuple[int, str]]:
    """Every numbered line of a Python file: docstrings, comments and messages alike."""
    return list(enumerate(path.read_text("utf-8").splitlines(), 1))


def outside_citations(path: Path, lines: list[tuple[int, str]] | None = None) -> list[str]:
    """``file:line: why: text`` for each line of ``path`` (default: its prose lines) citing outside."""
    return [f"{path.relative_to(ROOT)}:{number}: {why}: {line.strip()}"
            for number, line in (prose_lines(path) if lines is None else lines)
            for pattern, why in OUTSIDE.items() if re.search(pattern, line)]


def cited(lines: list[tuple[int, str]]) -> list[str]:
    return [line for _, line in lines if any(re.search(pattern, line) for pattern in OUTSIDE)]


def test_prose_cites_nothing_outside_the_repository():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    found = [hit for page in pages for hit in outside_citations(page)]
    assert not found, "\n".join(found)


def test_the_check_finds_each_kind_of_outside_citation(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("See DESIGN.md.\nAs spec §4.2 says.\n`auction.md` §7.4\nRead ../shared/specs.\n"
                    "See INTERFACE18.md.\n```\nDESIGN.md in a block\n```\n")
    assert cited(prose_lines(page)) == ["See DESIGN.md.", "As spec §4.2 says.", "`auction.md` §7.4",
                                        "Read ../shared/specs.", "See INTERFACE18.md."]


def test_source_cites_nothing_outside_the_repository():
    files = sorted(path for folder in SOURCE_FOLDERS for path in (ROOT / folder).rglob("*.py"))
    assert len(files) > 100
    found = [hit for path in files for hit in outside_citations(path, source_lines(path))]
    assert not found, f"{len(found)} lines:\n" + "\n".join(found)


def test_the_source_check_finds_each_kind_of_outside_citation(tmp_path):
    module = tmp_path / "module.py"
    module.write_text('"""The rules (spec §3.1.3).\n\nThe contract of DESIGN.md."""\n'
                      "# as gamma_games.md §14.1 says\n"
                      "LIMIT = 5  # INTERFACE18.md\n"
                      'raise ValueError("see ../shared/specs/auction.md")\n'
                      "PATH = 'shared/specs/trading.md'\n"
                      "def f(x):  # the paper's Table 1, docs/design.md\n"
                      "    return x\n")
    assert cited(source_lines(module)) == [
        '"""The rules (spec §3.1.3).', 'The contract of DESIGN.md."""', "# as gamma_games.md §14.1 says",
        "LIMIT = 5  # INTERFACE18.md", 'raise ValueError("see ../shared/specs/auction.md")',
        "PATH = 'shared/specs/trading.md'"]
