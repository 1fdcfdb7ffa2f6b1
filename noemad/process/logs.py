"""How noemad writes its log on stderr: plain lines for journald, or one JSON object a line for shippers.

Plain: `LEVEL logger: message` (journald stamps each line itself). JSON
(`noemad --log-format json`): `time` (UTC, ISO 8601 with milliseconds),
`level`, `logger`, `message`, then every extra field the call passed
(`log.info(..., extra={"mind": "ada"})`), and `exception` with the traceback
when there is one. Values JSON cannot hold are written as their `str()`.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import datetime, timezone
from typing import Any, Literal

from noemad.runtime.loglevel import apply_level

LogFormat = Literal["plain", "json"]
FORMATS: tuple[str, ...] = ("plain", "json")
# What every LogRecord carries: anything else on a record came from `extra=`.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime", "taskName"}


class JsonFormatter(logging.Formatter):
    """One JSON object per record, on one line."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_") and key not in entry:
                entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            entry["exception"] = record.exc_text
        return json.dumps(entry, default=str, ensure_ascii=False)


def setup_logging(level: str, fmt: LogFormat = "plain") -> None:
    """Send the log to stderr in `fmt`, at `level`."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    apply_level(level)
