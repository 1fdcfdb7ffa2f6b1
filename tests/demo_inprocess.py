"""The demo's scenarios (`noemactl demo`) played into an in-process engine.

noemactl's `Client` talks httpx; here its transport (`inprocess.Bridge`) hands
each request to the in-process app instead of a Unix socket, so the demo's own
code plays the scenarios and the test reads what the minds then say.
"""

from __future__ import annotations

from pathlib import Path

import httpx

from inprocess import Bridge, InProcess
from noemactl.client import Client
from noemactl.demo_player import Player
from noemactl.demo_scenarios import SCENARIOS
from noemactl.output import Output
from noemactl.session import Session


def session(app: InProcess) -> Session:
    """A noemactl session whose client talks to `app`."""
    client = Client(Path("in-process"))
    client._http = httpx.Client(transport=Bridge(app), base_url="http://noemad", headers={"accept": "application/json"})
    s = Session(json=True)
    s._client = client
    s._output = Output()
    return s


def play_demo(app: InProcess) -> list[str]:
    """Play every demo scenario that makes no model call into its own mind `demo-<name>`; the minds' names.

    The engine's clock is manual, so the player moves it past each quiet period as the demo does on a test daemon.
    """
    s = session(app)
    minds = []
    for scenario in SCENARIOS:
        if scenario.models:
            continue
        mind = f"demo-{scenario.name}"
        s.client.create_mind(mind, {})
        scenario.play(Player(s, mind, as_json=True, manual_clock=True))
        minds.append(mind)
    return minds
