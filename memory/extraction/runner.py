"""Which extractor reads a piece of evidence: the model a higher app installed, else the scripted one."""

from collections.abc import Mapping, Sequence
from typing import Any

from memory import domain_events
from memory.extraction.reading import language_guess, tokens
from memory.extraction.scripted import scripted_extract

MODEL, SCRIPTED = "model", "scripted"


def candidates_extract(
    *, workspace_id: int, task_id: int | None, text: str, existing: Sequence[Mapping]
) -> tuple[list[Any], str]:
    """(raw candidates, which extractor made them). Candidates are not validated here: memory checks them
    one by one. An installed model extractor that answers None (no model for this workspace) hands over to the
    scripted extractor; one that raises lets the error through, so the evidence is retried later."""
    model = domain_events.extractor()
    if model is not None:
        found = model(
            workspace_id=workspace_id,
            task_id=task_id,
            text=text,
            language=language_guess(tokens(text)),
            existing=[dict(m) for m in existing],
        )
        if found is not None:
            if not isinstance(found, list):
                raise TypeError(f"the model extractor returned {type(found).__name__}, not a list")
            return found, MODEL
    return scripted_extract(text, existing), SCRIPTED
