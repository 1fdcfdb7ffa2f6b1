"""noemactl's version: that of the installed `noema` distribution (noemad and noemactl ship together)."""

from __future__ import annotations


def cli_version() -> str:
    """The installed version of `noema`, or `unknown` when it is not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("noema")
    except PackageNotFoundError:
        return "unknown"
