"""Scenario fixtures: models, loading and validation."""

from harness.scenarios.models import (
    AnswerCheck,
    Canary,
    Category,
    Expect,
    ItemSpec,
    KeySpec,
    Policy,
    Probe,
    Revision,
    Scenario,
    Session,
    SourceRef,
    Turn,
)

__all__ = [
    "AnswerCheck",
    "Canary",
    "Category",
    "Expect",
    "ItemSpec",
    "KeySpec",
    "Policy",
    "Probe",
    "Revision",
    "Scenario",
    "Session",
    "SourceRef",
    "Turn",
]
