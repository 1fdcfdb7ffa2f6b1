"""`noemactl demo`: scripted scenarios played into fresh demo minds, narrated as they happen.

This module is the command, what a daemon must offer a scenario (`Daemon`)
and the loop over the chosen ones (`play`); the scenarios are
`noemactl.demo_scenarios`, played through `noemactl.demo_player`, both
imported when the demo plays. Each scenario sends ordinary stimuli over the API (what `noemactl say`,
`observe`, `predict` and `outcome` send), waits for the mind's turn to end,
reads back what the mind concluded, and says what happened with the commands
to explore it. Nothing here decides anything: every conclusion shown is the
daemon's. The background scenarios (1-3) and the gate's (4) need no model;
where a model is configured it words the reflection and the generalisation,
and the narration says which. The judge's (5) and the critic's (6) need
model calls, and play only on the scripted provider, offline and free:
`make demo` starts noemad on `demo_script.toml` (beside this module), and
the demo gives its own minds their respond and critic models.

Time: a debounce or a judge's quiet period must pass on the daemon's clock.
On a test daemon's manual clock (`NOEMA_CLOCK=manual:...`) the demo moves it;
on the system clock the looks for what follows wait for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from noemactl.errors import Refused
from noemactl.params import PlainCommand
from noemactl.shared import JsonFlag, session

if TYPE_CHECKING:
    from noemactl.demo_scenarios import Scenario
    from noemactl.session import Session

MODEL = "claude-haiku-5-5"  # the model id the demo's minds name; the scripted provider answers any
SCRIPT = Path(__file__).resolve().parent / "demo_script.toml"
# What noemad.toml needs for the scenarios that call models (scripts/demo.sh writes it, and leaves narrate and summarise
# without a model so that scenarios 1-3 read as they do with none).
NEEDED_CONFIG = f"""[models]
provider = "scripted"
[models.scripted]
file = "{SCRIPT}"
[gate.judge]
enabled = true"""


@dataclass(frozen=True)
class Daemon:
    """What the daemon offers the scenarios: its clock, its model provider, whether it accepts judge rules."""

    manual_clock: bool
    provider: str
    script: str | None  # [models.scripted] file
    judging: bool

    @classmethod
    def of(cls, s: Session) -> Daemon:
        status = s.client.status()
        values = {v["key"]: v["value"] for v in s.client.config()["values"]}
        return cls(
            status["clock"] == "manual", status["models"]["provider"], values.get("models.scripted.file"), values.get("gate.judge.enabled") is True
        )

    def lacks(self, scenario: Scenario) -> str | None:
        """Why `scenario` cannot play on this daemon, or None when it can."""
        missing: list[str] = []
        if scenario.models and self.provider != "scripted":
            missing.append(f"the scripted provider (this noemad's is {self.provider})")
        elif scenario.models and (self.script is None or Path(self.script).resolve() != SCRIPT):
            missing.append(f"the demo's script (this noemad's is {self.script})")
        if scenario.judge and not self.judging:
            missing.append("[gate.judge] enabled = true")
        if not missing:
            return None
        return (
            f"scenario {scenario.name} makes model calls, so it plays only offline, on noemad with {' and '.join(missing)}."
            f" `make demo` starts one; or put this in noemad.toml and `noemactl reload`:\n{NEEDED_CONFIG}"
        )


def play(s: Session, name: str | None, replace: bool, as_json: bool) -> None:
    """Play the chosen scenarios, each into a fresh mind `demo-<scenario>`; with all, skip (and say why) those this daemon cannot play."""
    from noemactl.demo_player import Player
    from noemactl.demo_scenarios import choose

    chosen = choose(name)
    daemon = Daemon.of(s)
    if len(chosen) == 1 and (why := daemon.lacks(chosen[0])) is not None:
        raise Refused(why)
    results: list[dict[str, Any]] = []  # a skipped scenario's entry and a played one's hold different values
    existing = {m["name"] for m in s.client.minds()["minds"]}
    for scenario in chosen:
        mind = f"demo-{scenario.name}"
        why = daemon.lacks(scenario)
        if why is not None:
            results.append({"scenario": scenario.name, "mind": None, "skipped": why})
            s.output.note(f"\n== {scenario.number}. {scenario.title}: skipped\n{why}")
            continue
        if mind in existing:
            if not replace:
                raise Refused(
                    f"mind {mind} is left from an earlier demo; pass --replace to remove it and play again, or `noemactl mind rm {mind} --yes`"
                )
            s.client.delete_mind(mind)
        settings = {"models": {role: {"model": MODEL} for role in scenario.roles}} if scenario.roles else {}
        s.client.create_mind(mind, settings)
        player = Player(s, mind, as_json, manual_clock=daemon.manual_clock, drafts="respond" in scenario.roles)
        if not as_json:
            s.output.show(f"\n== {scenario.number}. {scenario.title} (mind {mind})")
        scenario.play(player)
        results.append({"scenario": scenario.name, "mind": mind, "narration": player.said, "found": player.found})
    if as_json:
        s.output.json({"scenarios": results})


# the command ---------------------------------------------------------------------

# Added at the top level by `noemactl.app` (a Typer with no name of its own).
commands = typer.Typer()


def _scenarios(incomplete: str) -> list[str]:
    """The demo's scenario names starting with `incomplete` (shell completion)."""
    from noemactl.demo_scenarios import NAMES

    return [n for n in (*NAMES, "all") if n.startswith(incomplete)]


@commands.command(cls=PlainCommand)
def demo(
    ctx: typer.Context,
    scenario: Annotated[
        str | None,
        typer.Argument(
            metavar="SCENARIO",
            help="single-source, prediction-miss, go, gate, judge or critic (or 1-6); default: all.",
            autocompletion=lambda incomplete: _scenarios(incomplete),
            show_default=False,
        ),
    ] = None,
    replace: Annotated[bool, typer.Option("--replace", help="Remove a demo mind left by an earlier run and play it again.")] = False,
    json: JsonFlag = False,
) -> None:
    """Play scripted scenarios into fresh demo minds (demo-SCENARIO) and narrate what the minds made of them.

    \b
    1 single-source: a belief from one source draws single_source and insufficient_evidence warnings.
    2 prediction-miss: confident predictions miss, the beliefs behind them drop, a notification fires, reflection writes a lesson.
    3 go: "user repeatedly selects Go"; consolidation makes a generalisation belief and a semantic memory, and the timeline walks back to the episodes.
    4 gate: a DM wakes the mind at once, room talk is batched by a debounce, a mention cuts through the batch.
    5 judge: a judge rule's small model says WAIT to small talk and REPLY to a question, with its reasons in gate-status.
    6 critic: a draft with a claim nothing supports is reviewed, revised and sent; an acknowledgment skips the critic.

    1-4 need no model; with one configured, it words the reflection and the generalisation. 5 and 6 make model calls and play only offline, on the scripted provider with the demo's script (noemactl/demo_script.toml) and [gate.judge] enabled = true, as `make demo` runs noemad; with all, a scenario this noemad cannot play is skipped with the config it needs.
    """
    s = session(ctx)
    play(s, scenario, replace, s.wants_json(json))
