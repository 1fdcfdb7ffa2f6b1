"""Noema: a runtime for long-lived AI minds."""

__version__ = "0.1.0"
