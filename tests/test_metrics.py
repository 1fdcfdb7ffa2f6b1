"""`GET /api/v1/metrics`: Prometheus text (0.0.4) a strict parser reads, with the values a user's actions produce."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from inprocess import InProcess, start_app
from noemad.api.metrics import escape_label, exposition, number
from noemad.runtime.metrics import Family

SCRIPT = '[respond]\ndefault = "Noted."\n'
CONFIG = '[models]\nprovider = "scripted"\n\n[models.scripted]\nfile = "{script}"\n\n[models.respond]\nmodel = "claude-haiku-5-5"\n'

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL_VALUE = r'"(?:[^"\\\n]|\\\\|\\"|\\n)*"'
SAMPLE = re.compile(rf"^({NAME})(?:\{{((?:[a-zA-Z_][a-zA-Z0-9_]*={LABEL_VALUE})(?:,[a-zA-Z_][a-zA-Z0-9_]*={LABEL_VALUE})*)?\}})? (\S+)$")
PAIR = re.compile(rf'([a-zA-Z_][a-zA-Z0-9_]*)=({LABEL_VALUE})')
VALUE = re.compile(r"^(?:[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|[+-]Inf|NaN)$")


@dataclass
class Parsed:
    types: dict[str, str] = field(default_factory=dict)
    helps: dict[str, str] = field(default_factory=dict)
    samples: dict[tuple[str, frozenset[tuple[str, str]]], float] = field(default_factory=dict)

    def value(self, name: str, **labels: str) -> float:
        return self.samples[name, frozenset(labels.items())]

    def total(self, name: str, **labels: str) -> float:
        """The sum of `name`'s samples whose labels include `labels`."""
        return sum(v for (n, ls), v in self.samples.items() if n == name and set(labels.items()) <= ls)


def _unescape(quoted: str) -> str:
    return re.sub(r'\\(\\|"|n)', lambda m: {"\\": "\\", '"': '"', "n": "\n"}[m.group(1)], quoted[1:-1])


def parse(text: str) -> Parsed:
    """The text exposition format 0.0.4, strictly: HELP and TYPE before a family's samples, each family once,
    counters ending in _total, histogram buckets cumulative with a +Inf bucket equal to _count."""
    assert text.endswith("\n"), "the exposition ends with a newline"
    out = Parsed()
    current: str | None = None
    seen: set[str] = set()
    for line in text[:-1].split("\n"):
        if line.startswith("# HELP "):
            name, _, help_text = line[7:].partition(" ")
            assert re.fullmatch(NAME, name) and name not in seen and help_text, line
            out.helps[name] = help_text
            seen.add(name)
            current = name
            continue
        if line.startswith("# TYPE "):
            name, _, kind = line[7:].partition(" ")
            assert name == current and kind in ("counter", "gauge", "histogram", "summary", "untyped"), line
            assert kind != "counter" or name.endswith("_total"), f"counter {name} does not end in _total"
            out.types[name] = kind
            continue
        assert not line.startswith("#") and line.strip(), f"unexpected line {line!r}"
        match = SAMPLE.match(line)
        assert match, f"not a sample line: {line!r}"
        name, labels, value = match.groups()
        assert current is not None and current in out.types, f"{name} before its TYPE"
        allowed = {current} if out.types[current] != "histogram" else {current + s for s in ("_bucket", "_sum", "_count")}
        assert name in allowed, f"{name} is not of family {current}"
        assert VALUE.match(value), f"bad value in {line!r}"
        pairs = frozenset((k, _unescape(v)) for k, v in PAIR.findall(labels or ""))
        assert (name, pairs) not in out.samples, f"duplicate sample {line!r}"
        out.samples[name, pairs] = float(value)
    for name, kind in out.types.items():
        if kind != "histogram":
            continue
        series: dict[frozenset[tuple[str, str]], list[tuple[float, float]]] = {}
        for (n, ls), v in out.samples.items():
            if n == name + "_bucket":
                le = dict(ls)["le"]
                series.setdefault(frozenset(p for p in ls if p[0] != "le"), []).append((float(le), v))
        for base, buckets in series.items():
            buckets.sort()
            assert buckets[-1][0] == float("inf"), f"{name} has no +Inf bucket"
            assert all(a[1] <= b[1] for a, b in zip(buckets, buckets[1:])), f"{name} buckets are not cumulative"
            assert buckets[-1][1] == out.samples[name + "_count", base]
    return out


@pytest.fixture
def talker(tmp_path: Path) -> Iterator[InProcess]:
    (tmp_path / "script.toml").write_text(SCRIPT)
    engine = start_app(tmp_path, CONFIG.format(script=tmp_path / "script.toml"))
    yield engine
    engine.stop()


def scrape(engine: InProcess) -> Parsed:
    resp = engine.api("GET", "/metrics")
    assert resp.status_code == 200
    assert resp.headers["content-type"].startswith("text/plain; version=0.0.4")
    return parse(resp.text)


def test_metrics_count_what_a_user_did(talker: InProcess) -> None:
    for name in ("ada", "bob"):
        assert talker.api("POST", "/minds", json={"name": name}).status_code == 201
    for text in ("hello", "are you there?"):
        assert talker.api("POST", "/minds/ada/events", json={"kind": "message", "author": "alice", "text": text}).status_code == 201
        talker.wait_for("ada", "reply", since=talker.sup.counts.last_event_id)
    assert talker.api("POST", "/minds/bob/events", json={"kind": "observation", "source": "sensor", "text": "21C"}).status_code == 201
    talker.wait_for("bob", "cycle_completed")
    for name in ("ada", "bob"):
        talker.settle(name)  # a turn is counted once it has ended, which can be after its last event is committed

    m = scrape(talker)
    assert m.value("noemad_stimuli_total", mind="ada", kind="message") == 2
    assert m.value("noemad_stimuli_total", mind="bob", kind="observation") == 1
    assert ("noemad_stimuli_total", frozenset({("mind", "bob"), ("kind", "message")})) not in m.samples
    assert m.value("noemad_events_total", kind="reply") == 2
    assert m.value("noemad_events_total", kind="message") == 2
    assert m.value("noemad_minds", state="running") == 2
    assert m.value("noemad_turns_total", mind="ada", outcome="ok") == 2
    assert m.value("noemad_turn_duration_seconds_count", mind="ada") == 2
    assert m.value("noemad_gate_wakes_total", mind="bob") == 1
    assert m.value("noemad_gate_decisions_total", mind="ada", verdict="wake") == 2
    assert m.value("noemad_model_calls_total", role="respond", outcome="ok") == 2
    assert m.value("noemad_model_calls_total", role="respond", outcome="failed") == 0
    assert m.total("noemad_model_tokens_total", role="respond", type="output") > 0
    assert m.value("noemad_writer_queue_depth") >= 0
    assert m.value("noemad_writer_commits_total") == m.value("noemad_writer_commit_duration_seconds_count") > 0
    assert m.types["noemad_turn_duration_seconds"] == "histogram"


def test_jobs_and_pause_show_in_the_metrics(app: InProcess, mind: str) -> None:
    assert app.api("POST", f"/minds/{mind}/events", json={"kind": "message", "author": "alice", "text": "hi"}).status_code == 201
    job = app.api("POST", f"/minds/{mind}/jobs", json={"kind": "reflection"}).json()
    app.run(app.sup.jobs.wait(job["id"]))
    assert app.api("POST", f"/minds/{mind}/pause").status_code == 200
    m = scrape(app)
    assert m.value("noemad_jobs", kind="reflection", status="succeeded") == 1
    assert m.value("noemad_minds", state="paused") == 1 and m.value("noemad_minds", state="running") == 0
    assert m.value("noemad_events_total", kind="mode_changed") >= 1


def test_label_values_are_escaped_and_parse_back() -> None:
    family = Family("noemad_x_total", "counter", "A help line with a \\ backslash.")
    family.add(3, mind='a "quoted"\\name\nnext')
    family.add(0.25, mind="plain")
    text = exposition([family])
    assert '\\"quoted\\"\\\\name\\nnext' in text and escape_label("\n") == "\\n"
    parsed = parse(text)
    assert parsed.value("noemad_x_total", mind='a "quoted"\\name\nnext') == 3
    assert parsed.value("noemad_x_total", mind="plain") == 0.25
    assert [number(v) for v in (2, 2.0, 0.5, float("inf"), float("nan"))] == ["2", "2", "0.5", "+Inf", "NaN"]


def test_the_parser_refuses_what_the_format_does_not_allow() -> None:
    for bad in (
        "# HELP x_total h\n# TYPE x_total counter\nx_total{a=\"b\"} 1",  # no final newline
        "# HELP x h\n# TYPE x counter\nx 1\n",  # a counter not ending in _total
        "# HELP x_total h\n# TYPE x_total counter\nx_total{a=\"b\nc\"} 1\n",  # a raw newline in a label value
        "x_total 1\n",  # a sample before its TYPE
    ):
        with pytest.raises(AssertionError):
            parse(bad)
