"""Faults the harness survives, one test per fault (see each docstring)."""
