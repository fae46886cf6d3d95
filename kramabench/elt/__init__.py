"""The ELT task family (ELT-Bench and suites in its style): pipelines that extract sources, load them into a
warehouse and build data models, scored table against table.

* :mod:`kramabench.elt.suite` — the suite format, loader, validator and errata;
* :mod:`kramabench.elt.convert` — the converter of ELT-Bench's official layout (queries via :mod:`.sqlconv`).

Importing this package imports none of its parts (no side effects, no heavy imports): import the part.
"""

__all__: list[str] = []
