"""The ELT suite format: typed models, the loader, the validator and errata."""

from kramabench.elt.suite.errata import EltErratum, ErrataSet, apply_errata, available_errata, load_errata_set
from kramabench.elt.suite.errors import SuiteError
from kramabench.elt.suite.loader import FAMILY, is_suite, load_suite
from kramabench.elt.suite.models import (
    DATA_FORMATS,
    SOURCE_KINDS,
    DataModel,
    ErratumApplied,
    ModelColumn,
    Pipeline,
    SourceTable,
    Suite,
)
from kramabench.elt.suite.validate import is_failing, validate_suite

__all__ = [
    "DATA_FORMATS",
    "FAMILY",
    "SOURCE_KINDS",
    "DataModel",
    "EltErratum",
    "ErrataSet",
    "ErratumApplied",
    "ModelColumn",
    "Pipeline",
    "SourceTable",
    "Suite",
    "SuiteError",
    "apply_errata",
    "available_errata",
    "is_failing",
    "is_suite",
    "load_errata_set",
    "load_suite",
    "validate_suite",
]
