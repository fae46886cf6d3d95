"""The ELT task family (ELT-Bench and suites in its style): pipelines that extract sources, load them into a
warehouse and build data models, scored table against table.

* :mod:`kramabench.elt.suite` — the suite format, loader, validator and errata;
* :mod:`kramabench.elt.convert` — the converter of ELT-Bench's official layout (queries via :mod:`.sqlconv`);
* :mod:`kramabench.elt.compare` — the ``elt-bench`` and ``verified`` comparators, per-column diagnostics;
* :mod:`kramabench.elt.scoring` — stage 1, stage 2, SRDEL and SRDT of DuckDB warehouses;
* :mod:`kramabench.elt.sources` — the sources of one task (PostgreSQL, REST API, files, S3, MongoDB).

docs/elt.md describes the format, the rules and what a local run keeps and loses against the original.

Importing this package imports none of its parts (no side effects, no heavy imports): import the part.
"""

__all__: list[str] = []
