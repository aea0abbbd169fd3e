"""Operator commands for the places data; each prints exactly one JSON document on stdout.

- ``make ingest-places FILE=list.csv`` → ``python -m tools.places ingest --file list.csv``: an operator's
  curated list (CSV or JSON, schema in docs/data.md; ``data/places-template.csv`` is a template);
  every row validated, a bad row skipped and counted by reason.
- ``make ingest-places`` → ``python -m tools.places ingest --tdx``: TDX's restaurants of the county,
  live (``TDX_CLIENT_ID`` / ``TDX_CLIENT_SECRET``; never used by the tests).
- ``make ingest-places TDX_FILE=restaurants.json`` → ``python -m tools.places ingest --tdx-file …``: a file
  in TDX's own response format, without the network.
- ``make places-status`` → ``python -m tools.places status``: the current snapshot (or the shipped
  catalog), its layers with their counts, and the last attempt.

``LOCAL_STORE_URL`` names the store. Logs go to stderr. Exit status: 0 done (ingest: the data is
current); 1 the file was refused, had no valid row, the fetch failed, or the store failed (the last
good snapshot stays); 2 bad configuration or arguments.

Source: docs/design.md §5 (places snapshots), §9 (operator commands: one JSON document, logs on stderr).
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from shared import wiring
from shared.clock import Clock, utc_now
from shared.config import ConfigError, Settings
from shared.logs import log
from shared.places.ingest import ingest_curated, ingest_restaurants
from shared.places.snapshots import status, status_of
from shared.store import StoreError
from shared.store.sqlite import file_missing


def _print(document: dict[str, Any], out: TextIO) -> None:
    out.write(json.dumps(document, ensure_ascii=False, sort_keys=True) + "\n")
    out.flush()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m tools.places")
    commands = parser.add_subparsers(dest="command", required=True)
    ingest = commands.add_parser("ingest", help="import a curated list (--file) or TDX's restaurants")
    which = ingest.add_mutually_exclusive_group()
    which.add_argument("--file", default=None, help="a curated list, .csv or .json (docs/data.md)")
    which.add_argument("--tdx", action="store_true", help="fetch TDX's restaurants live (the default)")
    which.add_argument("--tdx-file", default=None, help="a JSON file in TDX's Restaurant response format")
    commands.add_parser("status", help="print the current places snapshot's status")
    return parser


def main(argv: list[str] | None = None, *, environ: dict[str, str] | None = None, out: TextIO = sys.stdout,
         clock: Clock = utc_now) -> int:
    """Run one command. Returns the exit status (see the module docstring)."""
    args = _parser().parse_args(argv)
    try:
        settings = Settings.from_env(environ, required=("LOCAL_STORE_URL",))
        if args.command == "status" and file_missing(settings.store_url):
            _print(status_of({}, now=clock()), out)  # nothing stored yet: no file is created
            return 0
        store = wiring.open_store(settings, read_only=args.command == "status")
        source = None
        if args.command == "ingest" and not args.file:
            source = wiring.restaurant_source(settings, file=args.tdx_file or None)
    except (ConfigError, ValueError) as exc:
        log("ERROR", "places command not configured", error=str(exc))
        _print({"error": "configuration", "detail": str(exc)}, out)
        return 2
    try:
        if args.command == "status":
            _print(status(store, now=clock()), out)
            return 0
        result = (ingest_curated(store, args.file, now=clock()) if args.file
                  else ingest_restaurants(store, source, now=clock()))
        _print(result.as_dict(), out)
        return 0 if result.ok else 1
    except StoreError as exc:
        log("ERROR", "places store unavailable", error=exc.__class__.__name__)
        _print({"error": "store_unavailable"}, out)
        return 1


if __name__ == "__main__":
    sys.exit(main())
