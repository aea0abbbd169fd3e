"""Operator commands for the events data; each prints exactly one JSON document on stdout.

- ``make ingest-events FILE=path.json`` → ``python -m tools.events ingest --file path.json``: load a
  file in TDX's own response format (a JSON array of activity records) through the whole ingestion
  path (validate, map, write a versioned snapshot), without the network.
- ``make ingest-events`` → ``python -m tools.events ingest``: fetch live from TDX
  (``TDX_CLIENT_ID`` / ``TDX_CLIENT_SECRET``; never used by the tests).
- ``make events-status`` → ``python -m tools.events status``: the current snapshot: source, fetched
  and confirmed times, record counts (kept, skipped by reason), age and the last attempt.

``LOCAL_STORE_URL`` names the store (the environment wins over the Makefile's default). Logs go to
stderr. Exit status: 0 done (ingest: the data is current); 1 the fetch failed or had no valid record
(the last good snapshot stays) or the store failed; 2 bad configuration or arguments.

Source: docs/design.md §5 (ingest), §9 (operator commands: one JSON document, logs on stderr).
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from shared import wiring
from shared.clock import Clock, utc_now
from shared.config import ConfigError, Settings
from shared.events.ingest import ingest_events
from shared.events.snapshots import status, status_of
from shared.logs import log
from shared.store import StoreError
from shared.store.sqlite import file_missing


def _print(document: dict[str, Any], out: TextIO) -> None:
    out.write(json.dumps(document, ensure_ascii=False, sort_keys=True) + "\n")
    out.flush()


def main(argv: list[str] | None = None, *, environ: dict[str, str] | None = None, out: TextIO = sys.stdout,
         clock: Clock = utc_now) -> int:
    """Run one command. Returns the exit status (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m tools.events")
    commands = parser.add_subparsers(dest="command", required=True)
    ingest = commands.add_parser("ingest", help="ingest activities from TDX, or from --file")
    ingest.add_argument("--file", default=None, help="a JSON file in TDX's response format")
    commands.add_parser("status", help="print the current events snapshot's status")
    args = parser.parse_args(argv)
    try:
        settings = Settings.from_env(environ, required=("LOCAL_STORE_URL",))
        if args.command == "status" and file_missing(settings.store_url):
            # nothing was ever stored: the status of an empty store, and no file is created
            _print(status_of({}, now=clock(), stale_after_seconds=settings.events_stale_after_seconds), out)
            return 0
        store = wiring.open_store(settings, read_only=args.command == "status")  # status only reads
        source = wiring.activity_source(settings, file=args.file or None) if args.command == "ingest" else None
    except (ConfigError, ValueError) as exc:
        log("ERROR", "events command not configured", error=str(exc))
        _print({"error": "configuration", "detail": str(exc)}, out)
        return 2
    try:
        if source is not None:
            result = ingest_events(store, source, now=clock())
            _print(result.as_dict(), out)
            return 0 if result.ok else 1
        _print(status(store, now=clock(), stale_after_seconds=settings.events_stale_after_seconds), out)
        return 0
    except StoreError as exc:
        log("ERROR", "events store unavailable", error=exc.__class__.__name__)
        _print({"error": "store_unavailable"}, out)
        return 1


if __name__ == "__main__":
    sys.exit(main())
