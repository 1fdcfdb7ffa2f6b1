"""A judge rule through the running actor, in process on the manual clock, with a judge given by the test.

`[gate.judge] enabled = true` with the scripted provider (so the judge role
has its default model); the judge call itself is a fake behind the
`noemad.gate.judge.port.Judge` seam that records each request and answers what
the test says, or hangs until it is stopped. What is asserted is what a
user sees: which turns run and what woke them, the `judge_verdict` events
on the timeline, what gate-status says, and what the judge was asked.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from inprocess import InProcess, fail_first_turn, hold_turns, start_app
from noemad.gate.judge.port import JudgeOutcome, JudgeRequest
from noemad.rules.shape import read_rule
from noemad.runtime.supervisor import Supervisor
from noemad.turn.tools import JUDGE_MIND_TOOLS, MIND_TOOLS, MindTools

MIND = "ada"
CONFIG = """
[models]
provider = "scripted"
[models.scripted]
file = "{script}"
{models}
[gate.judge]
enabled = {enabled}
on_error = "{on_error}"
{judge}
"""
ROOM = {"name": "room", "match": {"kinds": ["message"], "channel": "cli"}, "behaviour": {"judge": {"debounce_ms": 2000}}}


class FakeJudge:
    """A judge that records what it is asked; answers from `answers` (default REPLY), or hangs while `hang` is set."""

    def __init__(self) -> None:
        self.requests: list[JudgeRequest] = []
        self.answers: list[JudgeOutcome] = []
        self.hang = False
        self.stopped = 0
        self.held: asyncio.Event | None = None  # set: the call waits for it, then answers

    async def decide(self, request: JudgeRequest) -> JudgeOutcome:
        self.requests.append(request)
        if self.held is not None:
            try:
                await self.held.wait()
            except asyncio.CancelledError:
                self.stopped += 1
                raise
        if self.hang:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                self.stopped += 1
                raise
        return self.answers.pop(0) if self.answers else JudgeOutcome("reply", "asked directly", call_id=None, input_tokens=900, cache_read=100)


@pytest.fixture
def judge(monkeypatch: pytest.MonkeyPatch) -> FakeJudge:
    fake = FakeJudge()
    monkeypatch.setattr(Supervisor, "judge_for", lambda self, mind: fake)
    return fake


def start(
    tmp_path: Path, *, script: str = "", models: str = "", enabled: bool = True, on_error: str = "wake", judge: str = ""
) -> InProcess:
    (tmp_path / "script.toml").write_text(script)
    config = CONFIG.format(
        script=tmp_path / "script.toml", models=models, enabled=str(enabled).lower(), on_error=on_error, judge=judge
    )
    app = start_app(tmp_path, config)
    assert app.api("POST", "/minds", json={"name": MIND}).status_code == 201
    app.settle(MIND)
    return app


@pytest.fixture
def ada(tmp_path: Path, judge: FakeJudge) -> Iterator[InProcess]:
    app = start(tmp_path)
    yield app
    app.stop()


def add(app: InProcess, body: dict[str, Any]) -> dict[str, Any]:
    resp = app.api("POST", f"/minds/{MIND}/rules", json={"rule": body})
    assert resp.status_code == 201, resp.text
    return dict(resp.json())


def say(app: InProcess, text: str, author: str = "alice", **extra: Any) -> int:
    resp = app.api("POST", f"/minds/{MIND}/events", json={"kind": "message", "author": author, "text": text, **extra})
    assert resp.status_code == 201, resp.text
    return int(resp.json()["id"])


def events(app: InProcess, kind: str) -> list[dict[str, Any]]:
    return [e for e in app.api("GET", f"/minds/{MIND}/events", params={"limit": 1000}).json()["events"] if e["kind"] == kind]


def judge_status(app: InProcess, rule: str = "room") -> dict[str, Any]:
    status = app.api("GET", f"/minds/{MIND}/gate").json()
    return dict(next(r for r in status["rules"] if r["name"] == rule)["judge"])


def until(app: InProcess, condition: Callable[[], bool]) -> None:
    async def wait() -> None:
        while not condition():
            await asyncio.sleep(0)

    app.run(wait())


async def _call(fn: Callable[[], Any]) -> Any:
    return fn()


def test_reply_wakes_the_mind_for_the_batch_and_the_verdict_is_on_the_timeline_without_its_reason(
    ada: InProcess, judge: FakeJudge
) -> None:
    add(ada, {**ROOM, "behaviour": {"judge": {"debounce_ms": 2000, "instructions": "wake me when asked"}}})
    first, second = say(ada, "lunch?", channel="cli"), say(ada, "ada, can you check the build?", channel="cli")
    ada.settle(MIND)
    assert events(ada, "cycle_started") == [] and judge.requests == []
    ada.advance(2)
    ada.settle(MIND)
    [request] = judge.requests
    assert (request.batch, request.instructions, request.rule) == ((first, second), "wake me when asked", "room")
    [started] = events(ada, "cycle_started")
    assert started["parents"] == [first, second] and "the judge said REPLY" in started["data"]["wake"]
    [verdict] = events(ada, "judge_verdict")
    assert verdict["parents"] == [first, second]
    assert verdict["data"]["verdict"] == "reply" and verdict["data"]["woke"] is True and verdict["data"]["rule"] == "room"
    assert "asked directly" not in json.dumps(verdict)  # the reason is in gate-status, not the timeline
    status = judge_status(ada)
    assert status["verdicts"]["reply"] == 1 and status["last"]["reason"] == "asked directly"
    assert status["input_tokens"] == 1000 and status["cache_share"] == 0.1


def test_wait_wakes_nothing_and_the_stimuli_are_taken_by_the_next_turn(ada: InProcess, judge: FakeJudge) -> None:
    add(ada, ROOM)
    judge.answers = [JudgeOutcome("wait", "banter between others")]
    banter = say(ada, "lol", channel="cli")
    ada.advance(2)
    ada.settle(MIND)
    assert events(ada, "cycle_started") == []
    [verdict] = events(ada, "judge_verdict")
    assert (verdict["data"]["verdict"], verdict["data"]["woke"]) == ("wait", False)
    direct = say(ada, "hello?", channel="dm")  # the default (always) wakes the mind
    ada.settle(MIND)
    [started] = events(ada, "cycle_started")
    assert started["data"]["stimuli"] == 2 and started["parents"] == [direct] and banter < direct


def test_a_batch_due_during_a_turn_is_held_and_judged_once_the_turn_ends(
    ada: InProcess, judge: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    add(ada, ROOM)
    held = hold_turns(monkeypatch)
    say(ada, "a direct question", channel="dm")
    until(ada, lambda: held.started)
    ambient = say(ada, "anyone?", channel="cli")
    ada.advance(2)
    assert judge.requests == [] and judge_status(ada)["held"] == 1
    ada.run(_call(held.release.set))
    ada.settle(MIND)
    [request] = judge.requests
    assert request.batch == (ambient,)
    assert len(events(ada, "cycle_started")) == 2  # the judge's REPLY woke a second turn


def test_a_turn_starting_while_the_judge_decides_stops_the_call_and_the_batch_is_judged_once_after(
    ada: InProcess, judge: FakeJudge
) -> None:
    add(ada, ROOM)
    judge.hang = True
    ambient = say(ada, "anyone around?", channel="cli")
    ada.advance(2)
    actor = ada.sup.actors[MIND]
    until(ada, lambda: len(judge.requests) == 1)
    judge.hang = False
    judge.answers = [JudgeOutcome("wait", "the mind answered already")]
    direct = say(ada, "are you there?", channel="dm")  # the default wakes the mind: its turn stops the judge
    ada.settle(MIND)
    assert judge.stopped == 1
    assert [r.batch for r in judge.requests] == [(ambient,), (ambient,)]  # judged once, after the turn
    [started] = events(ada, "cycle_started")
    assert started["parents"] == [direct]
    [verdict] = events(ada, "judge_verdict")  # the stopped call left no verdict and no failure
    assert verdict["data"]["verdict"] == "wait"
    assert judge_status(ada)["verdicts"] == {"reply": 0, "wait": 1, "failed": 0, "refused": 0, "superseded": 0}
    assert not actor.turn_running


def test_a_pause_stops_the_judge_and_resume_judges_the_batch(ada: InProcess, judge: FakeJudge) -> None:
    add(ada, ROOM)
    judge.hang = True
    ambient = say(ada, "anyone?", channel="cli")
    ada.advance(2)
    until(ada, lambda: len(judge.requests) == 1)
    ada.api("POST", f"/minds/{MIND}/pause")
    ada.settle(MIND)
    assert judge.stopped == 1 and judge_status(ada)["held"] == 1
    judge.hang = False
    ada.api("POST", f"/minds/{MIND}/resume")
    ada.settle(MIND)
    assert [r.batch for r in judge.requests] == [(ambient,), (ambient,)]
    assert len(events(ada, "cycle_started")) == 1


def gate_of(app: InProcess) -> dict[str, Any]:
    return dict(app.api("GET", f"/minds/{MIND}/gate").json())


def test_a_verdict_that_comes_after_the_mind_went_to_sleep_does_not_wake_it(ada: InProcess, judge: FakeJudge) -> None:
    add(ada, ROOM)
    judge.held = answer = asyncio.Event()
    ambient = say(ada, "ada, are you around?", channel="cli")
    ada.advance(2)
    until(ada, lambda: len(judge.requests) == 1)
    assert ada.api("POST", f"/minds/{MIND}/sleep", json={"for": "1h"}).status_code == 200
    ada.run(_call(answer.set))  # the judge's REPLY would come now
    ada.settle(MIND)
    assert events(ada, "cycle_started") == [] and events(ada, "judge_verdict") == []
    status = gate_of(ada)
    assert status["sleeping"] is not None and judge_status(ada)["held"] == 1
    judge.held = None
    judge.answers = [JudgeOutcome("wait", "the mind answered it on waking")]
    assert ada.api("POST", f"/minds/{MIND}/wake").status_code == 200
    ada.settle(MIND)
    assert judge.stopped == 1  # the call in flight stopped at the sleep: no verdict, no failure
    [woke] = events(ada, "cycle_started")  # waking, the mind takes what waited; the batch is judged once after
    assert woke["data"]["wake"] == "the operator ended its sleep" and woke["data"]["stimuli"] == 1
    assert [r.batch for r in judge.requests] == [(ambient,), (ambient,)]
    assert ada.api("GET", f"/events/{ambient}/turn").json()["waiting"] is False
    assert ada.api("GET", f"/events/{ambient}/turn").json()["waiting"] is False


def test_deliveries_held_for_a_turn_that_runs_into_a_sleep_wait_for_its_end(
    ada: InProcess, judge: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = hold_turns(monkeypatch)
    say(ada, "a direct question", channel="dm")
    until(ada, lambda: held.started)
    second = say(ada, "and another", channel="dm")  # the default wakes the mind: held for the running turn
    assert ada.api("POST", f"/minds/{MIND}/sleep", json={"for": "1h"}).status_code == 200
    ada.run(_call(held.release.set))
    ada.settle(MIND)
    assert len(events(ada, "cycle_started")) == 1  # the held delivery did not start a turn in the sleep
    status = gate_of(ada)
    assert status["sleeping"] is not None and status["held"] == 1
    assert any(w["what"] == "1 stimulus waiting to wake it when its sleep ends" for w in status["upcoming"])
    assert ada.api("POST", f"/minds/{MIND}/wake").status_code == 200
    ada.settle(MIND)
    [_, woke] = events(ada, "cycle_started")
    assert woke["parents"] == [second] and "the operator ended its sleep" in woke["data"]["wake"]


def test_a_refused_call_under_skip_holds_the_batch_and_the_hold_lifting_judges_it(
    tmp_path: Path, judge: FakeJudge
) -> None:
    app = start(tmp_path, on_error="skip")
    try:
        add(app, ROOM)
        until_t = app.clock.now() + 2 + 300
        judge.answers = [JudgeOutcome(None, "refused", refused_until=until_t, refusal="the judge model is held after a 429")]
        asked = say(app, "ada, what time is the meeting?", channel="cli")
        app.advance(2)
        app.settle(MIND)
        assert events(app, "cycle_started") == []
        [refused] = events(app, "judge_verdict")
        assert (refused["data"]["verdict"], refused["data"]["woke"]) == ("refused", False)
        status = judge_status(app)
        assert status["verdicts"]["refused"] == 1 and status["held"] == 1
        assert any(n.startswith("judge calls refused until ") and "held after a 429" in n for n in status["notices"])
        app.advance(299)
        app.settle(MIND)
        assert len(judge.requests) == 1  # not before the stated time
        app.advance(1)
        app.settle(MIND)
        assert [r.batch for r in judge.requests] == [(asked,), (asked,)]
        [started] = events(app, "cycle_started")
        assert started["parents"] == [asked]
    finally:
        app.stop()


def test_a_failed_call_wakes_the_mind_and_under_skip_does_not(tmp_path: Path, judge: FakeJudge) -> None:
    app = start(tmp_path, on_error="skip")
    try:
        add(app, ROOM)
        judge.answers = [JudgeOutcome(None, "timed out after 20 s", failed=True)]
        say(app, "anyone?", channel="cli")
        app.advance(2)
        app.settle(MIND)
        assert events(app, "cycle_started") == []
        [failed] = events(app, "judge_verdict")
        assert (failed["data"]["verdict"], failed["data"]["woke"]) == ("failed", False)
    finally:
        app.stop()


def test_fail_open_by_default(ada: InProcess, judge: FakeJudge) -> None:
    add(ada, ROOM)
    judge.answers = [JudgeOutcome(None, "no verdict in the answer", failed=True)]
    asked = say(ada, "anyone?", channel="cli")
    ada.advance(2)
    ada.settle(MIND)
    [started] = events(ada, "cycle_started")
    assert started["parents"] == [asked] and "the judge failed (no verdict in the answer); on_error = wake" in started["data"]["wake"]


def test_a_reply_whose_turn_fails_is_folded_into_the_next_judged_batch_as_unanswered(
    tmp_path: Path, judge: FakeJudge
) -> None:
    script = '[respond]\nreplies = [{ fault = "unavailable" }, "Here."]\n'
    app = start(tmp_path, script=script, models='[models.respond]\nmodel = "claude-haiku-5-5"')
    try:
        add(app, ROOM)
        question = say(app, "ada, can you check X?", channel="cli")
        app.advance(2)
        app.settle(MIND)
        assert len(events(app, "reply_failed")) == 1
        judge.answers = [JudgeOutcome("wait", "only banter")]
        lol = say(app, "lol", author="bob", channel="cli")
        app.advance(2)
        app.settle(MIND)
        second = judge.requests[1]
        assert second.batch == (question, lol) and second.unanswered == (question,) and second.last_turn_failed
        assert judge_status(app)["unanswered"] == 1
    finally:
        app.stop()


def test_max_wait_judges_a_batch_while_the_talk_keeps_going(ada: InProcess, judge: FakeJudge) -> None:
    add(ada, {**ROOM, "behaviour": {"judge": {"debounce_ms": 2000, "max_wait_ms": 5000}}})
    judge.answers = [JudgeOutcome("wait", "banter")] * 3
    ids = []
    for _ in range(5):
        ids.append(say(ada, "chatter", channel="cli"))
        ada.advance(1)
        ada.settle(MIND)
    assert [r.batch for r in judge.requests] == [tuple(ids)]


def test_a_rule_edited_while_its_batch_waits_is_judged_by_the_new_instructions(ada: InProcess, judge: FakeJudge) -> None:
    add(ada, {**ROOM, "behaviour": {"judge": {"debounce_ms": 2000, "instructions": "old"}}})
    say(ada, "chatter", channel="cli")
    assert ada.api("DELETE", f"/minds/{MIND}/rules/room").status_code == 200
    add(ada, {**ROOM, "behaviour": {"judge": {"debounce_ms": 2000, "instructions": "new"}}})
    ada.advance(2)
    ada.settle(MIND)
    assert [r.instructions for r in judge.requests] == ["new"]


def test_the_judge_is_told_of_another_rules_call_in_flight(ada: InProcess, judge: FakeJudge) -> None:
    add(ada, ROOM)
    add(ada, {**ROOM, "name": "ops", "match": {"channel": "irc:*"}})
    judge.hang = True
    say(ada, "chatter", channel="cli")
    ada.advance(1)
    say(ada, "deploy?", channel="irc:#ops")
    ada.advance(1)
    until(ada, lambda: len(judge.requests) == 1)
    ada.advance(1)
    until(ada, lambda: len(judge.requests) == 2)
    ops = judge.requests[1]
    assert ops.rule == "ops" and [(w.rule, w.maybe) for w in ops.upcoming] == [("room", True)]
    assert "is deciding on now" in ops.upcoming[0].what


def test_the_judge_is_told_of_a_failed_turns_retry(ada: InProcess, judge: FakeJudge, monkeypatch: pytest.MonkeyPatch) -> None:
    add(ada, ROOM)
    fail_first_turn(monkeypatch)
    say(ada, "are you there?", channel="dm")  # the default wakes the mind; its turn fails, retried in 5 s
    ada.settle(MIND)
    judge.answers = [JudgeOutcome("wait", "the retry will answer")]
    say(ada, "chatter", channel="cli")
    ada.advance(2)
    ada.settle(MIND)
    [request] = judge.requests
    assert [(w.what, w.at - ada.clock.now()) for w in request.upcoming] == [("the retry of a turn that failed (1 stimulus)", 3.0)]
    retry = [w for w in gate_of(ada)["upcoming"] if w["what"].startswith("the retry")]
    assert len(retry) == 1
    ada.advance(3)
    ada.settle(MIND)
    assert [w for w in gate_of(ada)["upcoming"] if w["what"].startswith("the retry")] == []


def test_without_a_judge_a_judge_rule_runs_as_a_debounce_and_gate_status_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Supervisor, "judge_for", lambda self, mind: None)
    app = start(tmp_path)
    try:
        add(app, ROOM)
        asked = say(app, "anyone?", channel="cli")
        app.advance(2)
        app.settle(MIND)
        [started] = events(app, "cycle_started")
        assert started["parents"] == [asked] and "run as a debounce of 2000 ms" in started["data"]["wake"]
        assert judge_status(app)["notices"] == [
            "runs as a debounce of its quiet period: no judge model is configured (the judge role in [models] has none)"
        ]
    finally:
        app.stop()


def test_turning_judging_off_and_reloading_shows_the_debounce_notice_at_once(tmp_path: Path, judge: FakeJudge) -> None:
    from noemad.config.files import load_config

    app = start(tmp_path)
    try:
        add(app, ROOM)
        assert not any("runs as a debounce" in n for n in judge_status(app)["notices"])
        config = app.paths.config_file
        config.write_text(config.read_text().replace("enabled = true", "enabled = false"))

        async def reload() -> None:
            app.sup.apply_config(load_config(config))

        app.run(reload())
        notices = judge_status(app)["notices"]
        assert "runs as a debounce of its quiet period: judging is off on this host ([gate.judge] enabled = false)" in notices
    finally:
        app.stop()


def test_judging_off_leaves_the_validator_and_the_tools_as_they_were(tmp_path: Path, judge: FakeJudge) -> None:
    app = start(tmp_path, enabled=False)
    try:
        resp = app.api("POST", f"/minds/{MIND}/rules", json={"rule": ROOM})
        assert resp.status_code == 422
        assert "set [gate.judge] enabled = true in noemad.toml" in resp.json()["detail"]
    finally:
        app.stop()
    # The tool definitions a host without judging sends are the gate issue's, and name no judge.
    assert "judge" not in json.dumps([t.__dict__ for t in MIND_TOOLS])
    assert "judge" in json.dumps([t.__dict__ for t in JUDGE_MIND_TOOLS])
    for refusal in ({"name": "x", "behaviour": "nope"}, {"name": "x"}, {"name": "x", "behaviour": {"debounce": {}}}):
        with pytest.raises(Exception) as off:
            read_rule(refusal)
        assert "judge" not in str(off.value)


def test_the_minds_tools_name_the_judge_only_when_judging_is_on() -> None:
    off = MindTools.__new__(MindTools)
    MindTools.__init__(off, None, None, MIND, None, "ada/1")  # type: ignore[arg-type]
    on = MindTools.__new__(MindTools)
    MindTools.__init__(on, None, None, MIND, None, "ada/1", judge=True)  # type: ignore[arg-type]
    assert off.definitions is MIND_TOOLS and on.definitions is JUDGE_MIND_TOOLS
    add_rule = on.definitions[1]
    assert "Keep your rules for direct messages and mentions ahead of it" in add_rule.description
    assert '"judge": {"debounce_ms": 5000' in add_rule.description


def test_gate_status_shows_each_judge_rule_with_its_counts_newest_verdict_and_notices(ada: InProcess, judge: FakeJudge) -> None:
    from noemactl.gate_view import gate
    from noemactl.watch import plain_lines

    add(ada, {**ROOM, "behaviour": {"judge": {"debounce_ms": 2000, "max_wait_ms": 9000, "instructions": "x"}}})
    judge.answers = [JudgeOutcome("wait", "banter between others", input_tokens=100, cache_read=900, output_tokens=40)]
    say(ada, "lol", channel="cli")
    ada.advance(2)
    ada.settle(MIND)
    lines = plain_lines(gate(ada.api("GET", f"/minds/{MIND}/gate").json()))
    text = "\n".join(lines)
    assert "judge after 2000 ms, at most 9000 ms with instructions" in text
    assert "judge room: reply 0, wait 1, failed 0, refused 0, superseded 0; 1000 tokens in (90% from cache), 40 out" in text
    assert any(line.strip().endswith("WAIT (did not wake it): banter between others") for line in lines)


def test_a_judge_verdict_event_reads_back_as_its_payload(ada: InProcess, judge: FakeJudge) -> None:
    from noemad.events import get_event
    from noemad.gate.judge.verdicts import JudgeVerdict

    add(ada, ROOM)
    say(ada, "ada?", channel="cli")
    ada.advance(2)
    ada.settle(MIND)
    [stored] = events(ada, "judge_verdict")
    verdict = JudgeVerdict.of(get_event(ada.sup.store.reader(), stored["id"]))
    assert verdict == JudgeVerdict("room", "reply", True, 1, input_tokens=900, cache_read=100)
    assert stored["text"] == "rule room: the judge said REPLY to 1 stimulus; it woke the mind"


def test_the_mind_adds_a_judge_rule_with_its_own_tool_when_judging_is_on(tmp_path: Path, judge: FakeJudge) -> None:
    script = (
        '[respond]\nreplies = [{ tool = "wake_add_rule", input = { name = "room", match = { channel = "irc:*" },'
        ' behaviour = { judge = { debounce_ms = 3000, instructions = "only when asked" } } } }, "Noted.", "Hi."]\n'
    )
    app = start(tmp_path, script=script, models='[models.respond]\nmodel = "claude-haiku-5-5"')
    try:
        say(app, "please only answer in irc when asked")
        app.settle(MIND)
        [called] = events(app, "tool_called")
        assert called["data"]["is_error"] is False and "added rule 'room'" in called["data"]["result"]
        chatter = say(app, "chatter", channel="irc:#lobby")
        app.advance(3)
        app.settle(MIND)
        [request] = judge.requests
        assert (request.batch, request.instructions) == ((chatter,), "only when asked")
    finally:
        app.stop()


def test_the_probe_table_says_what_a_judge_rule_does(ada: InProcess) -> None:
    change = add(ada, {**ROOM, "match": {}})
    ambient = next(p for p in change["probes"] if p["probe"] == "ambient human talk")
    assert ambient["after"] == "judged after 2000 ms quiet: wake only if the judge says REPLY (rule room)"
    later = add(ada, {"name": "mentions", "match": {"flags": ["mention"]}, "behaviour": "always"})
    assert any(w.startswith("rule 'room' (judge) comes before rule 'mentions'") for w in later["warnings"])


def test_a_budget_under_the_least_is_read_as_4000_and_gate_status_says_so(tmp_path: Path, judge: FakeJudge) -> None:
    app = start(tmp_path, judge="max_input_tokens = 1000")
    try:
        add(app, ROOM)
        assert judge_status(app)["notices"] == ["[gate.judge] max_input_tokens 1000 is under 4000: read as 4000"]
    finally:
        app.stop()


def test_an_edit_of_a_judge_rule_keeps_its_verdict_counters(ada: InProcess, judge: FakeJudge) -> None:
    add(ada, ROOM)
    judge.answers = [JudgeOutcome("wait", "banter"), JudgeOutcome(None, "no verdict in the answer", failed=True)]
    for text in ("lol", "heh"):
        say(ada, text, channel="cli")
        ada.advance(2)
        ada.settle(MIND)
    before = judge_status(ada)
    assert (before["verdicts"]["wait"], before["verdicts"]["failed"]) == (1, 1)
    slower = {**ROOM, "behaviour": {"judge": {"debounce_ms": 5000, "instructions": "only questions"}}}
    resp = ada.api("PUT", f"/minds/{MIND}/rules/room", json={"rule": slower})
    assert resp.status_code == 200 and resp.json()["action"] == "edit"
    after = judge_status(ada)
    assert after["verdicts"] == before["verdicts"] and after["last"] == before["last"]
    rule = next(r for r in ada.api("GET", f"/minds/{MIND}/gate").json()["rules"] if r["name"] == "room")
    assert rule["matches"] == 2  # counted before the edit, still counted
