"""What a call costs, from a per-model price table.

Prices are US dollars per million tokens. A cache write costs 1.25x the input
price with a 5-minute TTL and 2x with a 1-hour TTL; a cache read costs 0.1x.
A model may have a long-context tier: when a request's whole input (uncached,
cache read and cache write) exceeds `tier_threshold` tokens, every token of
that request, output included, is priced at `tier_multiplier` times the base
rates — as the provider bills long-context requests.
"""

from __future__ import annotations

from dataclasses import dataclass

from noemad.models.types import Usage

CACHE_WRITE_5M = 1.25
CACHE_WRITE_1H = 2.0
CACHE_READ = 0.1


@dataclass(frozen=True)
class Price:
    """Per-million-token prices of one model."""

    input: float
    output: float
    tier_threshold: int | None = None
    tier_multiplier: float = 1.0


PRICES: dict[str, Price] = {
    "claude-haiku-5-5": Price(input=0.10, output=0.50, tier_threshold=100_000, tier_multiplier=5.0),
}


def cost(price: Price, usage: Usage) -> float:
    """The estimated cost in dollars of one call's usage."""
    scale = 1.0
    if price.tier_threshold is not None and usage.total_input > price.tier_threshold:
        scale = price.tier_multiplier
    write_5m = usage.cache_write_tokens - usage.cache_write_1h_tokens
    dollars = (
        usage.input_tokens * price.input
        + usage.cache_read_tokens * price.input * CACHE_READ
        + write_5m * price.input * CACHE_WRITE_5M
        + usage.cache_write_1h_tokens * price.input * CACHE_WRITE_1H
        + usage.output_tokens * price.output
    )
    return dollars * scale / 1_000_000
