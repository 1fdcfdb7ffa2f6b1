"""Who an operator is: the user on the other end of the socket, as events, jobs and model calls name them.

noemad listens on a Unix socket, so the kernel tells it who connected
(SO_PEERCRED): the peer's uid, read once per connection by the HTTP protocol
(`noemad.process.http`) and handed to the API in the request's ASGI scope.
The uid is named as the system names it (`pwd`); a uid with no entry reads
`uid:1234`. An operator's actor is then `operator:alice`. A request that
came over no socket (the in-process tier of the tests, an ASGI transport)
has no peer: its actor is the bare `operator`, as before this was recorded.
"""

from __future__ import annotations

import functools
import pwd
from dataclasses import dataclass
from typing import Any

ACTOR = "operator"  # the actor of an operator whose user is not known
SCOPE_KEY = "noemad.operator"  # where the HTTP protocol puts the `Operator` in a request's ASGI scope extensions


@dataclass(frozen=True)
class Operator:
    """The operator behind one API request: a user name, or None when the request came over no socket."""

    user: str | None = None
    uid: int | None = None

    @property
    def actor(self) -> str:
        """How events, jobs and model calls name this operator: `operator:alice`, or `operator` when unknown."""
        return f"{ACTOR}:{self.user}" if self.user else ACTOR

    @classmethod
    def of_uid(cls, uid: int) -> Operator:
        return cls(user=user_name(uid), uid=uid)


@functools.lru_cache(maxsize=256)
def user_name(uid: int) -> str:
    """The login name of `uid`, or `uid:1234` when the system has none (a container's unnamed uid)."""
    try:
        return pwd.getpwuid(uid).pw_name
    except (KeyError, OverflowError):
        return f"uid:{uid}"


def is_operator(actor: str) -> bool:
    """Whether `actor` names an operator (`operator`, `operator:alice`)."""
    return actor == ACTOR or actor.startswith(ACTOR + ":")


def of_scope(scope: Any) -> Operator:
    """The operator of a request, from its ASGI scope; the unknown operator when no socket told who it is."""
    found = (scope.get("extensions") or {}).get(SCOPE_KEY)
    return found if isinstance(found, Operator) else Operator()
