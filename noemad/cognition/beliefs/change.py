"""`BeliefChange`, the data of every `belief_created` and `belief_updated` event."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from noemad.events import Event, data_of


@dataclass(frozen=True)
class EvidenceBatch:
    """The items one bulk belief event records: how many, the range of their ids, and per stance."""

    count: int
    first_id: int
    last_id: int
    support: int
    contradict: int

    def to_data(self) -> dict[str, int]:
        return {"count": self.count, "first_id": self.first_id, "last_id": self.last_id, "support": self.support, "contradict": self.contradict}


@dataclass(frozen=True)
class BeliefChange:
    """The data of a `belief_created` or `belief_updated` event: the one definition of its fields.

    Every change gives the confidence and status before and after, and
    `held` when a pinned or rejected belief recorded evidence without
    moving. What brought it gives the rest: one item of evidence
    (`evidence_id`, `stance`, `weight`, `credibility`, `source`), many
    (`evidence`, `sources`, `sources_total`), an operator's correction
    (`correction`, `reason`), an outcome that rejects a hypothesis
    (`rejected_by`, `prediction`, `reason`), or a warning that lifted
    (`withdrawn`: the ids of the items it withdrew; `check`, the warning's
    check; `lifted_by`, the id of the item of support that lifted it;
    `reason`).
    """

    confidence_from: float
    confidence_to: float
    status_from: str
    status_to: str
    held: str | None = None
    evidence_id: int | None = None
    stance: str | None = None
    weight: float | None = None
    credibility: float | None = None
    source: str | None = None
    evidence: EvidenceBatch | None = None
    sources: dict[str, Any] | None = None
    sources_total: int | None = None
    correction: bool = False
    reason: str | None = None
    rejected_by: str | None = None
    prediction: int | None = None
    withdrawn: tuple[int, ...] | None = None
    check: str | None = None
    lifted_by: int | None = None

    @property
    def status_changed(self) -> bool:
        return self.status_from != self.status_to

    @property
    def by(self) -> Literal["operator", "outcome", "evidence"]:
        """Who moved the belief: an operator's correction, a prediction's outcome, or evidence."""
        if self.correction:
            return "operator"
        return "outcome" if self.rejected_by == "outcome" else "evidence"

    def to_data(self) -> dict[str, Any]:
        # Keys in the order the event has always been written (the stored JSON sorts them anyway).
        head: list[tuple[str, Any]] = [
            ("correction", True if self.correction else None),
            ("rejected_by", self.rejected_by),
            ("prediction", self.prediction),
            ("reason", self.reason),
            ("evidence_id", self.evidence_id),
            ("stance", self.stance),
            ("weight", self.weight),
            ("credibility", self.credibility),
            ("source", self.source),
            ("evidence", self.evidence.to_data() if self.evidence else None),
            ("sources", self.sources),
            ("sources_total", self.sources_total),
            ("withdrawn", list(self.withdrawn) if self.withdrawn is not None else None),
            ("check", self.check),
            ("lifted_by", self.lifted_by),
        ]
        return {
            **{k: v for k, v in head if v is not None},
            "confidence": {"from": self.confidence_from, "to": self.confidence_to},
            "status": {"from": self.status_from, "to": self.status_to},
            **({"held": self.held} if self.held is not None else {}),
        }

    @classmethod
    def of(cls, event: Event) -> BeliefChange:
        """The payload of a stored belief event."""
        return cls.from_data(data_of(event, *BELIEF_EVENTS))

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> BeliefChange:
        conf = data.get("confidence") or {}
        status = data.get("status") or {}
        batch = data.get("evidence")
        return cls(
            confidence_from=float(conf.get("from") or 0.0),
            confidence_to=float(conf.get("to") or 0.0),
            status_from=str(status.get("from")),
            status_to=str(status.get("to")),
            held=data.get("held"),
            evidence_id=data.get("evidence_id"),
            stance=data.get("stance"),
            weight=data.get("weight"),
            credibility=data.get("credibility"),
            source=data.get("source"),
            evidence=EvidenceBatch(**batch) if isinstance(batch, dict) else None,
            sources=data.get("sources"),
            sources_total=data.get("sources_total"),
            correction=bool(data.get("correction")),
            reason=data.get("reason"),
            rejected_by=data.get("rejected_by"),
            prediction=data.get("prediction"),
            withdrawn=tuple(data["withdrawn"]) if isinstance(data.get("withdrawn"), list) else None,
            check=data.get("check"),
            lifted_by=data.get("lifted_by"),
        )


BELIEF_EVENTS = ("belief_created", "belief_updated")
