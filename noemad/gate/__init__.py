"""The event gate: whether a stored stimulus wakes its mind."""

from noemad.gate.decision import Action, Decision, decide

__all__ = ["Action", "Decision", "decide"]
