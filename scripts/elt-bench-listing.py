#!/usr/bin/env python3
"""Write the git blob ids of ELT-Bench's task specifications at the pinned commit
(kramabench/elt/official/specs-<ref>.txt), from a copy of them laid out as upstream (../shared/elt-bench).

    python scripts/elt-bench-listing.py [--src ../shared/elt-bench] [--ref 166569c]

``kramabench fetch elt-bench`` checks every file of the downloaded repository archive that the conversion reads
(``elt-bench/<db>/config.yaml``, ``data_model.yaml``, ``schemas/*.csv``, ``evaluation/<db>/*.sql``,
``evaluation/table.json``) against this listing: a git blob id is ``sha1("blob <size>\\0" + content)``, as
``git ls-tree`` prints it."""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", type=Path, default=REPO.parent / "shared" / "elt-bench")
    ap.add_argument("--ref", default="166569c")
    args = ap.parse_args()
    rows = []
    for top in ("elt-bench", "evaluation"):
        for f in sorted((args.src / top).rglob("*")):
            if f.is_file():
                rows.append(f"{blob_id(f.read_bytes())}  {f.relative_to(args.src).as_posix()}\n")
    out = REPO / "kramabench" / "elt" / "official" / f"specs-{args.ref}.txt"
    out.write_text(
        f"# git blob ids of ELT-Bench's task specifications at {args.ref} (scripts/elt-bench-listing.py)\n"
        + "".join(rows)
    )
    print(f"wrote {out} ({len(rows)} files)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
