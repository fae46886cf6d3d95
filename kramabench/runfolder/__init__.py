"""The run folder: its layout (the one place its file names are spelled), the readers of its manifest and
records (strict and typed, or tolerant and incremental for a run being written), the one writer of a records
line, and how records written before both golds were kept are read.

Every command that reads a run (``run --resume``, ``report``, ``view``, ``score``, ``audit``, the ``replay``
system) reads it through this package. It stands on the contracts and files floors only.
"""

from kramabench.runfolder.follow import (
    LineProblem,
    RecordLine,
    RecordsTail,
    TailRead,
    read_doc_at,
    read_docs_at,
    record_doc,
)
from kramabench.runfolder.golds import (
    GOLD_TITLES,
    GOLDS,
    OFFICIAL,
    VERIFIED,
    old_official_values,
    other_gold,
    run_gold,
    workload_gold,
)
from kramabench.runfolder.layout import CALLS, LOCK, MANIFEST, RECORDS, TORN, RunFolder, is_run_dir, torn_name
from kramabench.runfolder.manifest import ManifestWatch, parse_manifest, parse_manifest_doc, read_manifest
from kramabench.runfolder.open import NotRegular, open_nofollow, why_unreadable
from kramabench.runfolder.records import (
    MAX_RECORD_LINE,
    ReadResult,
    iter_records,
    read_records,
    record_line,
    repair_torn_tail,
)
from kramabench.runfolder.typed import SCORING_FIELDS, json_object, manifest_of, scoring_record

__all__ = [
    "CALLS", "GOLDS", "GOLD_TITLES", "LOCK", "MANIFEST", "MAX_RECORD_LINE", "OFFICIAL", "RECORDS", "SCORING_FIELDS",
    "TORN", "VERIFIED", "LineProblem", "ManifestWatch", "NotRegular", "ReadResult", "RecordLine", "RecordsTail",
    "RunFolder", "TailRead", "is_run_dir", "iter_records", "json_object", "manifest_of", "old_official_values", "open_nofollow",
    "other_gold", "parse_manifest", "parse_manifest_doc", "read_doc_at", "read_docs_at", "read_manifest",
    "read_records", "record_doc", "record_line", "repair_torn_tail", "run_gold", "scoring_record", "torn_name",
    "why_unreadable", "workload_gold",
]  # fmt: skip
