"""Escaped HTML: every value from the store goes through `esc`, so no stored text becomes markup.

Pages are built by small functions returning strings; `Markup` marks a string
already built from escaped parts, and `h` escapes anything else. The page
shell carries the landmarks (header, nav, main) and loads only files served
by noemad itself; the Content-Security-Policy forbids inline script and style.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote, urlencode

# No inline script or style, nothing from elsewhere, no framing, forms only to noemad.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}


class Markup(str):
    """HTML built from escaped parts: passed through `h` unchanged."""


def h(value: Any) -> Markup:
    """`value` as HTML: Markup as it is, anything else escaped (quotes too, for attributes)."""
    if isinstance(value, Markup):
        return value
    return Markup(html.escape("" if value is None else str(value), quote=True))


def join(parts: Iterable[Any], sep: str = "") -> Markup:
    return Markup(sep.join(h(p) for p in parts))


def tag(element: str, /, *children: Any, **attrs: Any) -> Markup:
    """`<element attrs>children</element>`; attribute names take `_` for `-` and a trailing `_` is dropped (class_)."""
    return Markup(f"<{element}{attributes(attrs)}>{join(children)}</{element}>")


def attributes(attrs: dict[str, Any]) -> str:
    out = []
    for key, value in attrs.items():
        if value is None or value is False:
            continue
        name = key.rstrip("_").replace("_", "-")
        out.append(f" {name}" if value is True else f' {name}="{h(value)}"')
    return "".join(out)


def href(path: str, **query: Any) -> str:
    """A link within the dashboard; query values that are None are left out."""
    given = {k: v for k, v in query.items() if v is not None and v != ""}
    return path + ("?" + urlencode(given) if given else "")


def seg(value: str) -> str:
    """One path segment (a mind's name) quoted for a URL."""
    return quote(value, safe="")


def short(text: str | None, size: int) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= size else text[: size - 1] + "…"


def table(headers: list[str], rows: list[list[Any]], caption: str, empty: str) -> Markup:
    """A table with a caption and header cells (scope=col), or a sentence when there are no rows."""
    if not rows:
        return tag("p", empty, class_="empty")
    head = tag("tr", *(tag("th", name, scope="col") for name in headers))
    # Each cell names its column, so a narrow window can show a row as a list of "column: value".
    body = join(tag("tr", *(tag("td", cell, data_label=name) for name, cell in zip(headers, row))) for row in rows)
    return tag("div", tag("table", tag("caption", caption), tag("thead", head), tag("tbody", body)), class_="scroll")


def page(title: str, body: Any, crumbs: list[tuple[str, str | None]], status: Any = "") -> str:
    """A whole page: title, landmarks, the breadcrumb nav, the status line, `body` in main."""
    nav = join(
        tag("li", tag("a", text, href=link) if link else tag("span", text, aria_current="page")) for text, link in crumbs
    )
    return (
        "<!DOCTYPE html>\n"
        + tag(
            "html",
            tag(
                "head",
                Markup('<meta charset="utf-8">'),
                Markup('<meta name="viewport" content="width=device-width, initial-scale=1">'),
                tag("title", f"{title} · noemad"),
                Markup('<link rel="stylesheet" href="/static/dashboard.css">'),
                Markup('<script src="/static/dashboard.js" defer></script>'),
            ),
            tag(
                "body",
                tag("a", "Skip to content", href="#main", class_="skip"),
                tag("header", tag("p", tag("a", "noemad", href="/"), class_="brand"), tag("nav", tag("ol", nav), aria_label="Breadcrumb"), status),
                tag("main", tag("h1", title), body, id="main"),
                tag("div", "", id="announce", role="status", aria_live="polite", class_="announce"),
            ),
            lang="en",
        )
    )


def section(title: str, anchor: str, *children: Any) -> Markup:
    """A titled region a screen reader lists (section with aria-labelledby)."""
    return tag("section", tag("h2", title, id=anchor), *children, aria_labelledby=anchor)


def when(at: str | None, empty: str = "–") -> Markup:
    """A stored time as a person reads it: a `<time>` the script shows in local time (relative when recent), the exact time on hover.

    Without the script it reads `2026-01-01 00:00 UTC`, and the title holds the
    exact stored time to the second.
    """
    if not at:
        return h(empty)
    plain = f"{at[:10]} {at[11:16]} UTC" if len(at) >= 16 and at[10] == "T" else at
    exact = f"{at[:10]} {at[11:19]} UTC" if len(at) >= 19 and at[10] == "T" else at
    return tag("time", plain, datetime=at, title=exact)


def pct(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.0f}%"
