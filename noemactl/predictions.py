"""A mind's predictions: `predict`, `outcome` (resolve one), `predictions` (list them) and `calibration`.

Added at the top level by `noemactl.app`. A prediction rests on its
proposition's belief; its outcome moves that belief, and the outcomes
together say how well the mind's stated confidence matched (calibration).
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from noemactl.errors import BadInput
from noemactl.params import PlainCommand
from noemactl.shared import JsonFlag, MindArg, mind_views, session, stored

PREDICTION_STATUSES = ("open", "hit", "miss")

# This module's commands, added at the top level by `noemactl.app` (a Typer with no name of its own).
commands = typer.Typer()


@commands.command(cls=PlainCommand)
def predict(
    ctx: typer.Context,
    mind: MindArg,
    proposition: Annotated[str, typer.Argument(metavar="PROPOSITION", help="What is expected to come true.", show_default=False)],
    subject: Annotated[str, typer.Option("--subject", metavar="SUBJECT", help="What the proposition is about.", show_default=False)],
    confidence: Annotated[
        str, typer.Option("--confidence", metavar="0..1", help="The stated confidence that it comes true.", show_default=False)
    ],
    due: Annotated[
        str,
        typer.Option(
            "--due", metavar="WHEN", help="When it is due: a span ahead of noemad's clock (30m, 2h, 3d) or an ISO time.", show_default=False
        ),
    ],
    json: JsonFlag = False,
) -> None:
    """Record a prediction for a mind: it rests on the proposition's belief, held as a hypothesis.

    Resolve it later with `noemactl outcome ID --hit|--miss`; its id is listed by `noemactl predictions MIND`.
    """
    from noemactl import inputs

    body = {
        "kind": "prediction",
        "proposition": inputs.text(proposition, "proposition"),
        "subject": inputs.name(subject, "--subject"),
        "confidence": inputs.unit(confidence, "--confidence"),
        "due": due,  # noemad reads it (a span ahead of its clock, or an ISO time) and says why when it cannot
    }
    s = session(ctx)
    stored(s, s.client.ingest(mind, body), json)


@commands.command(cls=PlainCommand)
def outcome(
    ctx: typer.Context,
    prediction: Annotated[int, typer.Argument(metavar="PREDICTION", min=1, help="The prediction's id.", show_default=False)],
    hit: Annotated[bool, typer.Option("--hit", help="It came true.")] = False,
    miss: Annotated[bool, typer.Option("--miss", help="It did not.")] = False,
    observed: Annotated[
        str | None, typer.Option("--observed", metavar="TEXT", help="What was observed, e.g. a measured value.", show_default=False)
    ] = None,
    json: JsonFlag = False,
) -> None:
    """Resolve a prediction as a hit or a miss, once and for all; the belief it rested on follows."""
    from noemactl import inputs

    if hit == miss:
        raise BadInput("say what came of it: --hit or --miss (one of them)")
    body: dict[str, Any] = {"kind": "outcome", "prediction": prediction, "result": "hit" if hit else "miss"}
    if observed is not None:
        body["observed"] = inputs.text(observed, "--observed")
    s = session(ctx)
    mind = s.client.prediction(prediction)["mind"]
    stored(s, s.client.ingest(mind, body), json)


@commands.command(cls=PlainCommand)
def predictions(
    ctx: typer.Context,
    mind: MindArg,
    open_: Annotated[bool, typer.Option("--open", help="Only open predictions (same as --status open).")] = False,
    status: Annotated[str | None, typer.Option("--status", metavar="STATUS", help="open, hit or miss.")] = None,
    limit: Annotated[int, typer.Option("--limit", metavar="N", min=1, max=1000, help="At most N predictions.")] = 100,
    json: JsonFlag = False,
) -> None:
    """List a mind's predictions, soonest due first: stated confidence, due time, outcome."""
    if status is not None and status not in PREDICTION_STATUSES:
        raise BadInput(f"--status {status!r} is not one of {', '.join(PREDICTION_STATUSES)}")
    if open_ and status not in (None, "open"):
        raise BadInput(f"--open and --status {status} contradict each other; pick one")
    s = session(ctx)
    data = s.client.predictions(mind, "open" if open_ else status, limit)
    s.present(data, json, lambda: mind_views().predictions(data["predictions"], mind))


@commands.command(cls=PlainCommand)
def calibration(ctx: typer.Context, mind: MindArg, json: JsonFlag = False) -> None:
    """Show how a mind's stated confidence matched outcomes: bins, hit rates, Brier score, overconfidence."""
    s = session(ctx)
    data = s.client.calibration(mind)
    s.present(data, json, lambda: mind_views().calibration(data))
