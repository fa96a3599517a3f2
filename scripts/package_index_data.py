"""Writes ``arena_envs/trading/data/us_indices.csv.gz``, the daily bars that ``trading_v0``'s default
``data="arch"`` replays: the S&P 500 (``SPX``) and NASDAQ Composite (``NDX``) indices, 1999-01-04 ..
2018-12-31, as the ``arch`` package distributes them (its ``arch.data.sp500`` and ``arch.data.nasdaq``
example data sets: open, high, low, close, adjusted close, volume). Shipping them lets the base install
play the game on real prices without arch and its scientific stack.

Usage (needs ``pip install arch``): ``python scripts/package_index_data.py``. The values are copied
exactly (``repr`` of each float); tests/test_trading_data.py checks the file against arch's loader.
"""
from __future__ import annotations

import csv
import gzip
import importlib.util
import io
from pathlib import Path

from arena_envs.trading.data import INDEX_FILE, read_csv_series

ARCH_FILES = {"SPX": "sp500", "NDX": "nasdaq"}
COLUMNS = ("date", "symbol", "asset_class", "open", "high", "low", "close", "volume", "adj_close")


def main() -> None:
    spec = importlib.util.find_spec("arch")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("this script reads the arch package's data files: pip install arch")
    root = Path(next(iter(spec.submodule_search_locations))) / "data"
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(COLUMNS)
    for symbol, stem in ARCH_FILES.items():
        path = root / stem / f"{stem}.csv.gz"
        with gzip.open(path, "rt", newline="") as f:
            (series,), _ = read_csv_series(f, str(path), symbol, "stock")
        for i, day in enumerate(series.dates):
            writer.writerow([day, symbol, "stock", *(repr(float(getattr(series, c)[i])) for c in COLUMNS[3:])])
    out = Path(__file__).resolve().parents[1] / "arena_envs" / "trading" / INDEX_FILE
    out.write_bytes(gzip.compress(text.getvalue().encode("utf-8"), mtime=0))
    print(f"wrote {out} ({out.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
