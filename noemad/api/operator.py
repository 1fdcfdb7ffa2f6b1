"""The operator behind a request, as routes take it (`op: Op`)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from noemad.operator import Operator, of_scope


def request_operator(request: Request) -> Operator:
    """Who sent the request: the socket peer's user (set by the HTTP protocol), else the unknown operator."""
    return of_scope(request.scope)


Op = Annotated[Operator, Depends(request_operator)]
