"""`noemactl connectors [MIND]` and `noemactl connectors retry MIND DELIVERY`: the rooms and webhooks minds live in.

Added at the top level by `noemactl.app`. A connector's state (connected,
syncing, backing off and why, stopped), its rooms, when it last heard from
its source, its outbox (pending, sent, given up, and how long the oldest
pending delivery has waited) and its last error; the deliveries given up,
each with the id `retry` takes.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from noemactl.params import PlainCommand, default_group
from noemactl.shared import JsonFlag, MindArg, complete_mind, session

# This module's commands, added at the top level by `noemactl.app` (a Typer with no name of its own).
commands = typer.Typer()
connectors_app = typer.Typer(
    cls=default_group("list"),
    help="The Matrix rooms and webhooks minds live in: each connector's state and outbox; retry a delivery given up.\n\n"
    "`noemactl connectors [MIND]` is `noemactl connectors list [MIND]`.",
)
commands.add_typer(connectors_app, name="connectors")


@connectors_app.command("list", cls=PlainCommand)
def connectors_list(
    ctx: typer.Context,
    mind: Annotated[
        str | None, typer.Argument(metavar="MIND", help="Only this mind's connectors.", autocompletion=complete_mind, show_default=False)
    ] = None,
    json: JsonFlag = False,
) -> None:
    """Show each connector: its state, rooms, last sync, outbox (pending, given up, lag) and last error."""
    s = session(ctx)
    data = s.client.connectors(mind)
    s.present(data, json, lambda: connectors_view(data["connectors"], mind))


@connectors_app.command("retry", cls=PlainCommand)
def connectors_retry(
    ctx: typer.Context,
    mind: MindArg,
    delivery: Annotated[int, typer.Argument(metavar="DELIVERY", min=1, help="The delivery's id (`noemactl connectors MIND` lists those given up).", show_default=False)],
    json: JsonFlag = False,
) -> None:
    """Send a delivery that was given up again: it goes back in the outbox, due now, with a new give-up time."""
    s = session(ctx)
    data = s.client.retry_delivery(mind, delivery)
    row = data["delivery"]
    s.present(data, json, lambda: Text(f"delivery {row['id']} ({row['what']} {row['event_id']} to {row['connector']}) is pending again; it is sent now"))


def connectors_view(connectors: list[dict[str, Any]], mind: str | None) -> list[Any]:
    """A table of connectors, then each one's deliveries given up and its last error."""
    from noemactl.render import duration, when

    if not connectors:
        where = f"mind {mind}" if mind else "any mind"
        return [Text(f"no connectors for {where}; add [[minds.NAME.connectors]] tables to noemad.toml and reload")]
    table = Table(box=None, pad_edge=False)
    for column in ("MIND", "CONNECTOR", "STATE", "ROOMS", "LAST SYNC", "PENDING", "GIVEN UP", "LAG"):
        table.add_column(column)
    notes: list[Any] = []
    for c in connectors:
        state = c["state"]
        phase = state["phase"].replace("_", " ")
        if state.get("why"):
            phase += f" ({state['why']})"
        out = c["outbox"]
        table.add_row(
            c["mind"], c["key"], phase, ", ".join(state.get("rooms", [])) or "-", when(state.get("last_sync")),
            str(out["pending"]), str(out["given_up"]), duration(out["lag_s"]) if out.get("lag_s") is not None else "-",
        )
        if state.get("last_error"):
            notes.append(Text(f"{c['mind']} {c['key']}: last error at {when(state.get('last_error_at'))}: {state['last_error']}"))
        for row in c["given_up"]:
            notes.append(Text(
                f"{c['mind']} {c['key']}: delivery {row['id']} ({row['what']} {row['event_id']}) given up after {row['attempts']}"
                f" attempts: {row.get('last_error', '?')}; `noemactl connectors retry {c['mind']} {row['id']}` sends it again"
            ))
    return [table, *notes]
