"""The dashboard in a real browser: Chromium (Debian's package) driven by Playwright, through `noemactl ui`.

One daemon with the demo minds, one proxy and one browser serve the whole
module. Every page is opened and saved as a screenshot under
build/screenshots/ (the README shows a few); a chain is followed by clicking,
a job is run from the Background tab and watched to its end, and stored text
holding `<script>` is shown as text.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Noemad, short_dir, start_noemad
from tests.test_ui_proxy import Ui, start_ui

CHROMIUM = Path("/usr/bin/chromium")
SHOTS = Path(__file__).resolve().parents[1] / "build" / "screenshots"
HOSTILE = "<script>window.pwned = 1</script><b>bold?</b> still text"


@pytest.fixture(scope="module")
def daemon() -> Iterator[Noemad]:
    place = short_dir()
    (place / "home").mkdir()
    running = start_noemad(place / "home", place / "s.sock")
    played = running.ctl("demo")
    assert played.returncode == 0, played.stderr
    yield running
    running.stop()
    running.notify.close()
    shutil.rmtree(place, ignore_errors=True)


@pytest.fixture(scope="module")
def ui(daemon: Noemad) -> Iterator[Ui]:
    running = start_ui(daemon)
    yield running
    running.proc.terminate()
    running.proc.wait(timeout=30)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.fail(f"Chromium is not installed at {CHROMIUM}: install Debian's package with `apt-get install -y chromium` (`make test` does it)", pytrace=False)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("Playwright is not installed: install the test extra with `pip install -e '.[test]'`", pytrace=False)
    with sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=str(CHROMIUM))
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def context(browser: Any, ui: Ui) -> Iterator[Any]:
    """One browser session: the printed address opened once (its token works once) gives the cookie."""
    session = browser.new_context(viewport={"width": 1280, "height": 900})
    first = session.new_page()
    first.goto(ui.url)
    assert "token=" not in first.url  # the address loses the token
    first.close()
    yield session
    session.close()


@pytest.fixture
def page(context: Any) -> Iterator[Any]:
    opened = context.new_page()
    opened.set_default_timeout(20_000)
    errors: list[str] = []
    opened.on("pageerror", lambda exc: errors.append(str(exc)))
    yield opened
    opened.close()
    assert errors == [], errors  # no script error on any page, CSP refusals included


def shot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def consolidation_memory_event(daemon: Noemad) -> int:
    events = daemon.api("GET", "/minds/demo-go/events", params={"kind": "memory_created", "limit": 1000}).json()["events"]
    return next(e["id"] for e in reversed(events) if e["actor"] == "process:consolidation")


def test_every_page_opens_with_its_title_and_landmarks(page: Any, ui: Ui, daemon: Noemad) -> None:
    expect = _expect()
    page.goto(ui.base + "/")
    expect(page).to_have_title("Minds · noemad")
    for name in ("demo-go", "demo-prediction-miss", "demo-single-source"):
        expect(page.get_by_role("link", name=name, exact=True)).to_be_visible()
    expect(page.locator("#daemon-status")).to_contain_text("noemad")
    shot(page, "minds")
    for mind in ("demo-single-source", "demo-prediction-miss", "demo-go"):
        page.goto(f"{ui.base}/minds/{mind}")
        expect(page.get_by_role("heading", level=1)).to_have_text(mind)
        expect(page.get_by_role("main")).to_be_visible()
        for region in ("Warnings", "Beliefs", "Memories", "Predictions", "Notifications", "Usage by role", "Rules and gate", "Live events"):
            expect(page.get_by_role("region", name=region)).to_be_visible()
        shot(page, f"mind-{mind}")
    page.goto(f"{ui.base}/minds/demo-single-source")
    expect(page.get_by_role("region", name="Warnings")).to_contain_text("single_source")
    page.goto(f"{ui.base}/minds/demo-go/background")
    expect(page).to_have_title("demo-go: background · noemad")
    expect(page.get_by_role("region", name="Jobs")).to_contain_text("generalisation")
    shot(page, "background")
    page.goto(f"{ui.base}/events/{consolidation_memory_event(daemon)}/timeline")
    expect(page.locator("svg.graph")).to_be_visible()
    shot(page, "timeline")


def test_a_narrow_window_needs_no_sideways_scrolling(page: Any, ui: Ui) -> None:
    page.set_viewport_size({"width": 380, "height": 800})  # this page only
    page.goto(f"{ui.base}/minds/demo-prediction-miss")
    assert page.evaluate("document.documentElement.scrollWidth") <= 380
    shot(page, "mind-narrow")


def test_following_a_chain_by_clicking(page: Any, ui: Ui, daemon: Noemad) -> None:
    expect = _expect()
    root = consolidation_memory_event(daemon)
    chain = daemon.api("GET", f"/events/{root}/chain").json()
    page.goto(f"{ui.base}/events/{root}/timeline?back=2&forward=2&limit=50")
    drawn = page.locator("svg.graph g.node")
    expect(drawn).to_have_count(len(daemon.api("GET", f"/events/{root}/chain", params={"back": 2, "forward": 2, "limit": 50}).json()["nodes"]))
    expect(page.locator("g.node.root")).to_contain_text(f"#{root}")
    cause = min(n["id"] for n in chain["nodes"] if n["hop"] < 0)
    page.locator(f'g.node[data-event="{cause}"]').click()
    expect(page).to_have_url(f"{ui.base}/events/{cause}/timeline?back=2&forward=2&limit=50")
    expect(page.locator("g.node.root")).to_contain_text(f"#{cause}")
    expect(page.get_by_role("heading", level=1)).to_have_text(f"Timeline of event #{cause}")
    # The controls walk again within the limits; a cut says so.
    page.get_by_label("Hops forward").fill("0")
    page.get_by_label("Hops back").fill("0")
    page.get_by_role("button", name="Walk again").click()
    expect(page.locator("svg.graph g.node")).to_have_count(1)
    expect(page.locator(".cut-note")).to_contain_text("cut by hops")
    shot(page, "timeline-cut")


_SPILLS = """() => [...document.querySelectorAll('svg.graph g.node')].flatMap(g => {
    const box = g.querySelector('rect.box'), right = box.x.baseVal.value + box.width.baseVal.value;
    return [...g.querySelectorAll('text')].filter(t => { const b = t.getBBox(); return b.x + b.width > right - 4; }).map(t => t.textContent);
})"""


def test_every_line_of_a_drawn_event_stays_inside_its_box(page: Any, ui: Ui, daemon: Noemad) -> None:
    """Titles, actors and texts are cut to fit their box as the browser draws them: the root's too, and long kinds and actors."""
    root = consolidation_memory_event(daemon)
    kinds = {e["kind"]: e["id"] for e in daemon.api("GET", "/minds/demo-go/events", params={"limit": 1000}).json()["events"]}
    longest = max(kinds, key=len)
    for event in (root, kinds[longest]):
        page.goto(f"{ui.base}/events/{event}/timeline?back=3&forward=3&limit=60")
        assert page.locator("svg.graph g.node").count() > 1
        assert page.evaluate(_SPILLS) == [], f"text spills out of its box on the timeline of event #{event}"


def test_a_job_runs_from_the_background_tab_and_its_progress_shows(page: Any, ui: Ui, daemon: Noemad) -> None:
    expect = _expect()
    before = {j["id"] for j in daemon.api("GET", "/jobs", params={"mind": "demo-prediction-miss"}).json()["jobs"]}
    page.goto(f"{ui.base}/minds/demo-prediction-miss/background")
    page.get_by_role("button", name="Run reflection now").click()
    expect(page.locator("progress")).to_have_count(len(before) + 1)
    (job,) = [j for j in daemon.api("GET", "/jobs", params={"mind": "demo-prediction-miss"}).json()["jobs"] if j["id"] not in before]
    row = page.get_by_role("row").filter(has=page.get_by_role("cell", name=str(job["id"]), exact=True))
    expect(row).to_contain_text("succeeded · done · 100%")
    assert daemon.api("GET", f"/jobs/{job['id']}").json()["status"] == "succeeded"
    assert daemon.api("GET", f"/jobs/{job['id']}").json()["trigger"] == "operator"
    shot(page, "background-after-run")
    # Pause and resume the schedules, as `noemactl reflect --pause` does.
    page.get_by_role("row").filter(has_text="reflection").get_by_role("button", name="Pause").click()
    expect(page.get_by_role("region", name="Schedules")).to_contain_text("paused")
    assert any(s["paused"] for s in daemon.api("GET", "/schedules").json()["schedules"] if s["kind"] == "reflection")
    page.get_by_role("row").filter(has_text="reflection").get_by_role("button", name="Resume").click()
    expect(page.get_by_role("row").filter(has_text="reflection").get_by_role("button", name="Pause")).to_be_visible()


def test_a_generalisation_is_rejected_from_the_background_tab(page: Any, ui: Ui, daemon: Noemad) -> None:
    expect = _expect()
    (semantic,) = [m for m in daemon.api("GET", "/minds/demo-go/memories", params={"kind": "semantic"}).json()["memories"] if m["status"] == "active"]
    page.goto(f"{ui.base}/minds/demo-go/background")
    page.once("dialog", lambda dialog: dialog.accept())  # the button asks first
    page.get_by_role("button", name=f"Reject memory #{semantic['id']}").click()
    expect(page.get_by_text(f"memory #{semantic['id']} retracted")).to_be_visible()
    expect(page.get_by_role("button", name=f"Reject memory #{semantic['id']}")).to_have_count(0)
    assert daemon.api("GET", f"/memories/{semantic['id']}").json()["status"] == "retracted"


def test_a_notification_is_acknowledged_from_the_mind_page(page: Any, ui: Ui, daemon: Noemad) -> None:
    expect = _expect()
    open_before = daemon.api("GET", "/minds/demo-prediction-miss/notifications", params={"status": "open"}).json()["notifications"]
    page.goto(f"{ui.base}/minds/demo-prediction-miss")
    buttons = page.get_by_role("button", name="Acknowledge")
    expect(buttons).to_have_count(len(open_before))
    buttons.first.click()
    expect(page.get_by_role("button", name="Acknowledge")).to_have_count(len(open_before) - 1)
    assert len(daemon.api("GET", "/minds/demo-prediction-miss/notifications", params={"status": "open"}).json()["notifications"]) == len(open_before) - 1


def test_script_in_stored_text_shows_as_text(page: Any, ui: Ui, daemon: Noemad) -> None:
    expect = _expect()
    stored = daemon.api("POST", "/minds/demo-single-source/events", json={"kind": "message", "text": HOSTILE, "author": "eve"}).json()
    page.goto(f"{ui.base}/minds/demo-single-source")
    stream = page.locator("ol.stream")
    expect(stream).to_contain_text("<script>window.pwned = 1</script><b>bold?</b>")
    # Live, over the event stream through the proxy: a new one arrives as text too.
    later = daemon.api("POST", "/minds/demo-single-source/events", json={"kind": "message", "text": HOSTILE + " (live)", "author": "eve"}).json()
    expect(stream.get_by_role("link", name=f"#{later['id']}", exact=True)).to_be_visible()
    expect(stream).to_contain_text("<b>bold?</b> still text (live)")
    page.goto(f"{ui.base}/events/{stored['id']}/timeline")
    expect(page.locator(".lead q")).to_have_text(HOSTILE)
    assert page.evaluate("window.pwned") is None
    assert page.locator("main b").count() == 0


def test_the_mind_page_reads_as_a_person_would(browser: Any, context: Any, ui: Ui, daemon: Noemad) -> None:
    """Issue 22, item 11: real goals with their titles, times in local words with the exact time on hover,
    "Minds" said once, and the rules box worded as `noemactl rules list` words it."""
    expect = _expect()
    for body in ({"title": "ship the parser in Go"}, {"title": "write the release notes"}, {"goal": 1, "progress": 0.4}):
        sent = daemon.api("POST", "/minds/demo-go/events", json={"kind": "goal", **body}).json()
        daemon.wait_for("demo-go", "cycle_completed", since=sent["id"])
    rule = {"name": "ambient", "match": {"kinds": ["message"], "channel": "discord:*"}, "behaviour": {"debounce": {"ms": 2000}}}
    assert daemon.api("POST", "/minds/demo-go/rules", json={"rule": rule}).status_code == 201
    # A reader in Berlin, with the same session.
    berlin = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-GB", timezone_id="Europe/Berlin")
    berlin.add_cookies(context.cookies())
    page = berlin.new_page()
    try:
        page.goto(f"{ui.base}/minds/demo-go")
        goals = page.get_by_role("region", name="Goals")
        rows = goals.get_by_role("row")
        expect(rows).to_have_count(3)  # the header and two goals
        expect(rows.nth(1)).to_contain_text("ship the parser in Go")
        expect(rows.nth(1)).to_contain_text("40%")
        expect(rows.nth(2)).to_contain_text("write the release notes")
        updated = rows.nth(1).locator("time")
        expect(updated).to_have_text(re.compile(r"^(just now|\d+ minutes? ago|\d+ hours? ago)$"))
        expect(updated).to_have_attribute("title", re.compile(r"2026 at \d\d:\d\d:\d\d CET$"))  # the exact local time on hover
        assert page.locator("main").inner_text().count("2026-01-01T") == 0  # no raw stored time anywhere
        gate = page.get_by_role("region", name="Rules and gate")
        expect(gate).to_contain_text("default: always (for stimuli no rule matches)")
        expect(gate.get_by_role("row").nth(1)).to_contain_text("kinds message; channel discord:*")
        expect(gate.get_by_role("row").nth(1)).to_contain_text("debounce 2000 ms")
        assert "{" not in gate.inner_text()
        shot(page, "mind-demo-go-read")
        page.goto(ui.base + "/")
        assert page.locator("main").inner_text().split().count("Minds") == 1
        expect(page.get_by_role("row").nth(1).locator("time")).to_have_text(re.compile(r"ago|just now"))
        shot(page, "minds-read")
    finally:
        berlin.close()


def _expect() -> Any:
    from playwright.sync_api import expect

    return expect


def test_a_belief_shows_its_confidence_over_time_and_each_step_walks_its_event(page: Any, ui: Ui, daemon: Noemad) -> None:
    expect = _expect()
    listed = daemon.api("GET", "/minds/demo-prediction-miss/beliefs", params={"status": "rejected"}).json()["beliefs"]
    belief = listed[0]["id"]
    steps = daemon.api("GET", f"/beliefs/{belief}/history").json()["steps"]
    assert len(steps) >= 2 and steps[-1]["status_to"] == "rejected"
    page.goto(f"{ui.base}/minds/demo-prediction-miss")
    page.get_by_role("link", name=f"belief #{belief}: its history").click()
    expect(page).to_have_url(f"{ui.base}/beliefs/{belief}")
    expect(page.get_by_role("heading", level=1)).to_have_text(f"Belief #{belief}")
    chart = page.locator("svg.chart.confidence")
    expect(chart).to_be_visible()
    expect(chart.locator("a.step-link")).to_have_count(len(steps))
    expect(page.get_by_role("region", name="Confidence over time")).to_contain_text("rejected")
    shot(page, "belief")
    last = steps[-1]["event_id"]
    chart.locator(f'a.step-link[data-event="{last}"]').click()
    expect(page).to_have_url(f"{ui.base}/events/{last}/timeline")
    expect(page.locator("g.node.root")).to_contain_text(f"#{last}")
