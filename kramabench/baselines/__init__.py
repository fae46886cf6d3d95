"""Baseline systems shipped with kramabench."""
