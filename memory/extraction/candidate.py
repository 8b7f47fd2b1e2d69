"""The contract of an extractor's output: one candidate memory, validated on its own.

A model may return anything; each item is checked here separately, so one malformed candidate is reported
with its reason while the others go on (seed §7.4).
"""

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from memory.text import normalise

MAX_CONTENT_CHARS = 2000
MAX_SUBJECT_CHARS = 200


class Candidate(BaseModel):
    """`content`: the statement to remember, as it should read; `subject`: what it is about (a short noun
    phrase; statements with the same subject refine each other); `kind`: preference (durable), instruction
    (one-off), fact (stated by the person) or hypothesis (inferred); `scope`: the workspace or the person who
    stated it; `adds`: the statement builds on the memory of that subject rather than replacing it."""

    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True, frozen=True)

    content: str = Field(min_length=1, max_length=MAX_CONTENT_CHARS)
    subject: str = Field(min_length=1, max_length=MAX_SUBJECT_CHARS)
    kind: Literal["preference", "instruction", "fact", "hypothesis"]
    scope: Literal["workspace", "person"] = "workspace"
    adds: bool = False

    @field_validator("kind", "scope", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("subject")
    @classmethod
    def _normal_subject(cls, value: str) -> str:
        subject = normalise(value)
        if not subject:
            raise ValueError("the subject has no words")
        return subject


def candidate_check(raw: Any) -> tuple[Candidate | None, str]:
    """(the candidate, "") or (None, why it was refused)."""
    try:
        return Candidate.model_validate(raw), ""
    except ValidationError as exc:
        reasons = [f"{'.'.join(str(p) for p in error['loc']) or 'candidate'}: {error['msg']}" for error in exc.errors()]
        return None, "; ".join(reasons)[:500]
