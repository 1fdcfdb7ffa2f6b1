"""Outbound webhooks (`kind = "webhook"`): each reply (and, if asked, each notification) POSTed as signed JSON.

The body is JSON (`type`, `mind`, `event`, `delivery`, `text`, `at`,
`channel`, `answers`, `attempt`). Headers:

- `Noema-Signature: t=TIMESTAMP,v1=HEX`: HMAC-SHA256, keyed with the
  webhook's secret, over `"{TIMESTAMP}.{BODY}"` (the body's bytes as sent);
  TIMESTAMP is whole seconds since the epoch on the daemon's clock. A
  receiver recomputes it, compares in constant time, and refuses an old
  timestamp (a replay).
- `Idempotency-Key: noema-MIND-EVENT`: the same on every attempt, across
  restarts: a receiver that saw it already answers 2xx and does nothing.

A 2xx is delivered. A 408, a 429, a 5xx, a timeout or a connection error is
retried by the outbox (after `Retry-After`, in seconds or as an HTTP date, or
a JSON body's `retry_after_ms`, when the answer gives one); any other answer
(a 4xx: the receiver refuses it) is given up at once.
"""

from __future__ import annotations

import asyncio
import email.utils
import hashlib
import hmac
import json
from typing import Any

import httpx

from noemad import __version__
from noemad.clock import iso
from noemad.config.connectors import WebhookConnector
from noemad.connectors.port import ConnectorContext, ConnectorSettings, ConnectorState, Delivery, DeliveryFailed, Sent

SIGNATURE = "Noema-Signature"
IDEMPOTENCY = "Idempotency-Key"
_TRANSIENT = {408, 425, 429}


def signature(secret: str, timestamp: int, body: bytes) -> str:
    """The `Noema-Signature` header's value for `body` sent at `timestamp`."""
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={mac}"


def body_of(delivery: Delivery) -> bytes:
    """What is POSTed for `delivery`: compact JSON, keys sorted."""
    data: dict[str, Any] = {
        "type": delivery.what,
        "mind": delivery.mind,
        "event": delivery.event_id,
        "delivery": delivery.id,
        "text": delivery.text,
        "at": iso(delivery.at),
        "channel": delivery.channel,
        "answers": delivery.answers,
        "attempt": delivery.attempt,
    }
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def retry_after(response: httpx.Response, now: float) -> float | None:
    """Seconds the answer asks to wait: its Retry-After (seconds or an HTTP date), or its JSON `retry_after_ms`."""
    header = response.headers.get("retry-after")
    if header:
        header = header.strip()
        if header.isdigit():
            return float(header)
        try:
            when = email.utils.parsedate_to_datetime(header)
        except (TypeError, ValueError):
            when = None
        if when is not None:
            return max(0.0, when.timestamp() - now)
    try:
        ms = response.json().get("retry_after_ms")
    except (ValueError, AttributeError):
        return None
    return ms / 1000 if isinstance(ms, (int, float)) and not isinstance(ms, bool) and ms >= 0 else None


class Webhook:
    """One webhook: nothing comes in; `send` POSTs."""

    def __init__(self, settings: WebhookConnector, context: ConnectorContext) -> None:
        self.key = settings.key
        self.settings = settings
        self.context = context
        self._secret = context.secret("secret")  # read once, now: a missing file stops the connector with why
        self._client = httpx.AsyncClient(timeout=settings.timeout, headers={"user-agent": f"noemad/{__version__}"})
        self._state = ConnectorState(phase="connected")

    async def run(self) -> None:
        """Nothing to listen to: wait until stopped, then close the HTTP client."""
        try:
            await asyncio.Event().wait()
        finally:
            await self._client.aclose()

    async def send(self, delivery: Delivery) -> Sent:
        now = self.context.clock.now()
        body = body_of(delivery)
        headers = {
            "content-type": "application/json",
            SIGNATURE: signature(self._secret, int(now), body),
            IDEMPOTENCY: delivery.idempotency_key,
        }
        try:
            response = await self._client.post(self.settings.url, content=body, headers=headers)
        except httpx.TimeoutException:
            raise self._failed(f"no answer within {self.settings.timeout:g} s", True, None) from None
        except httpx.HTTPError as exc:
            raise self._failed(f"could not reach the webhook ({type(exc).__name__})", True, None) from None
        status = response.status_code
        if 200 <= status < 300:
            self._state.last_sync = self.context.clock.now()
            self._state.phase, self._state.why = "connected", None
            return Sent(detail=f"HTTP {status}")
        transient = status in _TRANSIENT or status >= 500
        raise self._failed(f"HTTP {status}", transient, retry_after(response, now) if transient else None)

    def _failed(self, reason: str, transient: bool, wait: float | None) -> DeliveryFailed:
        # Not up until a POST is accepted again: `connectors` and status say so, and why.
        self._state.last_error, self._state.last_error_at = reason, self.context.clock.now()
        self._state.phase, self._state.why = "backing_off", f"its last POST failed: {reason}"
        return DeliveryFailed(reason, transient=transient, retry_after=wait)

    def state(self) -> ConnectorState:
        return self._state


def build(settings: ConnectorSettings, context: ConnectorContext) -> Webhook:
    """The factory `noemad.connectors.kinds` calls for `kind = "webhook"`."""
    assert isinstance(settings, WebhookConnector)
    return Webhook(settings, context)
