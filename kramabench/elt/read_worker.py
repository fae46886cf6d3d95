"""The child process that reads one warehouse for the scorer (:func:`kramabench.elt.scoring.read_warehouse_isolated`):
a JSON request on stdin (the pipeline, the warehouse file, its schema, the row caps, a memory limit), the
:class:`~kramabench.elt.scoring.WarehouseRead` as JSON on stdout. Run as ``python -m kramabench.elt.read_worker``."""

from __future__ import annotations

import json
import resource
import sys
from pathlib import Path


def main() -> int:
    req = json.loads(sys.stdin.buffer.read())
    mb = int(req.get("memory_mb") or 0)
    if mb > 0:
        limit = mb << 20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    from kramabench.elt.scoring import read_warehouse
    from kramabench.elt.suite.models import Pipeline

    pipeline = Pipeline.model_validate(req["pipeline"])
    read = read_warehouse(
        pipeline,
        Path(req["warehouse"]),
        str(req["schema"]),
        row_caps={str(k): int(v) for k, v in (req.get("row_caps") or {}).items()},
        query_timeout_s=float(req["query_timeout_s"]) if req.get("query_timeout_s") else None,
        byte_caps={str(k): int(v) for k, v in (req.get("byte_caps") or {}).items()},
    )
    sys.stdout.buffer.write(read.model_dump_json().encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
