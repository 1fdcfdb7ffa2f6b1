"""Governance: the selective critic gate on every drafted reply (a library; the daemon's turn calls it).

Before a drafted reply is emitted, a deterministic gate (no model) decides
whether a critic (the reflector) reviews it. Usable without the daemon:

    from noemad.governance import GovernanceCapability, GovernanceSubject, TurnEvidence

    capability = GovernanceCapability.compose(reflector=my_async_critic, sensitive_terms=("clausula",))
    outcome = await capability.govern(
        GovernanceSubject("Got it, thanks!"),
        TurnEvidence(message="Thanks for the update", tool_calls=(), evidence=("...",), recalled_tags=()),
    )
    outcome.status, outcome.trigger, outcome.reflector_attempted   # "skipped", None, False

The pieces: the detectors (`claims.draft_has_claims`, `acks.draft_is_trivial_ack`,
`intent.classify_intent`, `fabrication.fabrication_findings`), the policies
(`policy.SelectiveMetacognitionPolicy`, the default, keeping every hard floor;
`policy.ConfidenceOnlyMetacognitionPolicy`, explicit, dropping them; custom
policies and adopter gates), the confidence port and the capability
(`capability.GovernanceCapability`). The invariant: in selective mode a
draft is skipped only when no hard-fire signal holds and the whole draft is a
trivial acknowledgment in a recognized language; every ambiguity fires,
because a false skip (an unreviewed fabrication reaches the user) costs far
more than a false fire (one critic call).

Recall tags are evidence: `TurnEvidence.recalled_tags` are the tags of what
was actually recalled for the turn, never a draft substring or an invented
value. This package imports nothing of the daemon but its error tree.
"""

from noemad.governance.acks import draft_is_trivial_ack
from noemad.governance.capability import GovernanceCapability, Reflector
from noemad.governance.claims import Claim, draft_claims, draft_has_claims
from noemad.governance.fabrication import Finding, fabrication_findings
from noemad.governance.intent import INTENTS, Intent, batch_intent, classify_intent
from noemad.governance.policy import (
    ConfidenceOnlyMetacognitionPolicy,
    SelectiveMetacognitionPolicy,
    TriggerPolicy,
    hard_floors,
)
from noemad.governance.subject import (
    STATUSES,
    CriticGateContext,
    GateDecision,
    GovernanceOutcome,
    GovernanceSubject,
    Status,
    TurnEvidence,
)

__all__ = [
    "INTENTS",
    "STATUSES",
    "Claim",
    "ConfidenceOnlyMetacognitionPolicy",
    "CriticGateContext",
    "Finding",
    "GateDecision",
    "GovernanceCapability",
    "GovernanceOutcome",
    "GovernanceSubject",
    "Intent",
    "Reflector",
    "SelectiveMetacognitionPolicy",
    "Status",
    "TriggerPolicy",
    "TurnEvidence",
    "batch_intent",
    "draft_claims",
    "classify_intent",
    "draft_has_claims",
    "draft_is_trivial_ack",
    "fabrication_findings",
    "hard_floors",
]
