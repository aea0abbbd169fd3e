"""``make requests``: the open handoff requests as JSON lines on stdout, by state and age.

Reads ``LOCAL_STORE_URL`` and ``LOCAL_TENANT_ID`` (the environment wins over the Makefile's
defaults) read-only, and prints one JSON object per line (``shared.staff.report``): follow-ups that
need a person, then requests awaiting acceptance, then accepted ones, oldest first. No LINE user
ids; staff appear as hashed labels. Logs go to stderr. A SQLite file that does not exist yet prints
nothing and is not created.

Exit status: 0 printed (perhaps nothing); 2 configuration; 1 store unreadable.
Source: docs/design.md §9 (operator commands), §10.
"""
from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from typing import TextIO

from shared.clock import utc_now
from shared.config import ConfigError, Settings
from shared.logs import log
from shared.staff.report import open_rows
from shared.store import StoreError


def main(environ: Mapping[str, str] | None = None, stdout: TextIO | None = None,
         stderr: TextIO | None = None) -> int:
    """Print the open requests. Returns the exit status (0, 1 or 2)."""
    env = os.environ if environ is None else environ
    out, err = stdout or sys.stdout, stderr or sys.stderr
    try:
        settings = Settings.from_env(env, required=("LOCAL_STORE_URL",))
    except ConfigError as exc:
        print(f"requests: {exc}", file=err)
        return 2
    from shared.store.sqlite import file_missing

    if file_missing(settings.store_url):
        log("INFO", "open requests: store file does not exist yet")
        return 0
    from shared.wiring import open_store

    try:
        rows = open_rows(settings, open_store(settings, read_only=True), now=utc_now())
    except (StoreError, ValueError) as exc:
        print(f"requests: cannot read the store: {exc}", file=err)
        return 1
    for row in rows:
        out.write(json.dumps(row, ensure_ascii=False) + "\n")
    out.flush()
    log("INFO", "open requests listed", rows=len(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
