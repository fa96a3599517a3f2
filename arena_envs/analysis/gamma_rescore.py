"""``arena rescore DIR``: the γ-Bench table of every model found in a folder of published logs.

Reads every ``*.json`` under DIR (:func:`~arena_envs.analysis.gamma_importer.scan_logs`): each file
it cannot import is named on stderr with its reason, and the scan goes on. Prints the per-model
table (mean ± std over the numbered default runs, as the paper's Table 1) and a summary of how many
files were read, imported, used in the table and skipped, and why.
"""
from __future__ import annotations

import sys
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path

from arena_envs.analysis.gamma_importer import LogScan, SkippedLogWarning, in_table, rescore, scan_logs
from arena_envs.core.cli_parser import OneLineParser
from arena_envs.gamma.history import GAME_LABELS, GAMES


def table_text(rows: Mapping[str, Mapping[str, Mapping[str, float]]]) -> str:
    """One line per model: each game's and the Overall's ``mean±std`` (one decimal) and the runs."""
    columns = [*GAMES, "overall"]
    labels = {**GAME_LABELS, "overall": "Overall"}
    width = max([len("model"), *map(len, rows)])
    cells = {model: [f"{row[c]['mean']:.1f}±{row[c]['std']:.1f}" if c in row else "-" for c in columns]
             for model, row in rows.items()}
    widths = [max([len(labels[c]), *(len(cells[m][i]) for m in rows)]) for i, c in enumerate(columns)]
    head = "  ".join(["model".ljust(width), *(labels[c].rjust(w) for c, w in zip(columns, widths)), "runs"])
    lines = [head]
    for model, row in rows.items():
        runs = max(int(cell["n"]) for cell in row.values())
        lines.append("  ".join([model.ljust(width), *(x.rjust(w) for x, w in zip(cells[model], widths)), str(runs)]))
    return "\n".join(lines)


def summary_text(scan: LogScan, version: str) -> str:
    """The scan's summary plus how many imported files the table uses and how many it leaves out."""
    used = sum(in_table(info, log, version) for info, log in scan.logs)
    return (f"{scan.summary()}\n  in the table: {used} numbered default runs (prompt {version}, implicit El "
            f"Farol, first-price auction); read but not tabled: {len(scan.logs) - used} other runs and settings")


def main(argv: Sequence[str] | None = None) -> int:
    """``arena rescore DIR [--version v1]``; status 2 when DIR is not a folder or holds no log it
    can import, 0 otherwise."""
    parser = OneLineParser(prog="arena rescore", description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("dir", help="folder of γ-Bench logs (the published raw_results layout)")
    parser.add_argument("--version", default="v1", help="prompt version of the runs to table (default v1)")
    args = parser.parse_args(argv)
    root = Path(args.dir)
    if not root.is_dir():
        print(f"arena rescore: error: {str(root)!r} is not a folder; give the folder of the γ-Bench JSON logs",
              file=sys.stderr)
        return 2
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SkippedLogWarning)
        scan = scan_logs(root)
    for w in caught:
        if issubclass(w.category, SkippedLogWarning):
            print(f"warning: skipped {w.message}", file=sys.stderr)
        else:
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    if not scan.logs:
        found = f"{len(scan.problems)} .json files, none importable" if scan.problems else "no .json file"
        print(f"arena rescore: error: no γ-Bench log in {str(root)!r} ({found}); give the folder of the published "
              "raw_results logs", file=sys.stderr)
        return 2
    rows = rescore(scan, args.version)
    print(table_text(rows) if rows else f"no numbered default runs of prompt {args.version} under {root}")
    print(summary_text(scan, args.version))
    return 0


if __name__ == "__main__":
    sys.exit(main())
