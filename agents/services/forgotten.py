"""Keeping what a person asked to forget out of everything a model reads (DESIGN §8, seed §7.3).

The forget itself (memory.services.forget) erases memory and records the forgotten terms as hashes. The
conversation, the agent's outputs and tool results stay in the log (other lifecycles), so every context built
afterwards — and every read-back of the log — passes through a Redactor: a message, result or field that
carries a forgotten term is shown as removed. The agent's own earlier words are no way back in.
"""

from typing import Any

from memory.redaction import REDACTED, sentences, text_terms
from memory.services.forget import forget_salt, forgotten_terms_of


class Redactor:
    """One per run (the context's History keeps it): each text's terms are hashed once, and `refresh` reads the
    workspace's forgotten terms again at every context build, so a forget applies from the next step on."""

    def __init__(self, workspace_id: int):
        self.workspace_id = workspace_id
        self.salt = forget_salt(workspace_id)
        self.terms: frozenset[str] = frozenset()
        self._terms_of: dict[str, frozenset[str]] = {}

    def refresh(self, terms: frozenset[str] | None = None) -> "Redactor":
        """Read the terms again, or take them as read by the caller's own query of this step."""
        self.terms = forgotten_terms_of(self.workspace_id) if terms is None else terms
        return self

    def __bool__(self) -> bool:
        return bool(self.terms)

    def carries(self, text: str | None) -> bool:
        if not self.terms or not text:
            return False
        found = self._terms_of.get(text)
        if found is None:
            found = self._terms_of[text] = frozenset(text_terms(text, salt=self.salt))
        return not self.terms.isdisjoint(found)

    def text(self, text: str) -> str:
        return REDACTED if self.carries(text) else text

    def message(self, message: dict[str, Any]) -> dict[str, Any]:
        """A chat message as the model may see it: its content removed if it carries a forgotten term, and so
        the arguments of any tool call it made."""
        content = message.get("content")
        calls = message.get("tool_calls") or []
        hit_content = isinstance(content, str) and self.carries(content)
        hit_calls = [c for c in calls if self.carries(c.get("function", {}).get("arguments"))]
        if not hit_content and not hit_calls:
            return message
        shown = dict(message)
        if hit_content:
            shown["content"] = REDACTED
        if hit_calls:
            shown["tool_calls"] = [
                {**c, "function": {**c["function"], "arguments": '{"removed":true}'}} if c in hit_calls else c
                for c in calls
            ]
        return shown

    def tree(self, value: Any) -> Any:
        """A JSON-like value with every string that carries a forgotten term removed (read-back tools)."""
        if not self.terms:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.tree(v) for v in value]
        if isinstance(value, dict):
            return {k: self.tree(v) for k, v in value.items()}
        return value


def without_forgotten(text: str, redact: Redactor) -> str:
    """`text` without the sentences that carry a forgotten term (for search rows, which show no marker)."""
    if not redact or not redact.carries(text):
        return text
    return " ".join(s for s in sentences(text) if not redact.carries(s))
