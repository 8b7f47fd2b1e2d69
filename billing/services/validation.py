"""Input checks shared by billing's services, so every caller (REST, tools, commands) gets the same 400s."""

import json
from typing import Any

from lomote.kernel.exceptions import InvalidInput

MAX_ID = 2**63 - 1


def _invalid(field: str, message: str) -> InvalidInput:
    return InvalidInput(message, details={"fields": {field: [message]}})


def _is_int(value) -> bool:
    # bool is an int in Python; `true` credits is a client bug, not one credit.
    return isinstance(value, int) and not isinstance(value, bool)


def check_credits(value, *, field: str, minimum: int = 1, maximum: int) -> int:
    if not _is_int(value) or not minimum <= value <= maximum:
        raise _invalid(field, f"Must be a whole number of credits from {minimum} to {maximum}.")
    return value


def check_id(value, *, field: str) -> int | None:
    """A positive 64-bit id, or None. Task ids cannot be looked up here (agents sits above billing)."""
    if value is None:
        return None
    if not _is_int(value) or not 1 <= value <= MAX_ID:
        raise _invalid(field, "Must be an id (a positive whole number).")
    return value


def check_json_object(value, *, field: str, max_bytes: int) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _invalid(field, "Must be a JSON object.")
    try:
        size = len(json.dumps(value, separators=(",", ":"), allow_nan=False).encode())
    except (TypeError, ValueError):
        raise _invalid(field, "Must be plain JSON.") from None
    if size > max_bytes:
        raise _invalid(field, f"At most {max_bytes} bytes of JSON.")
    return value


def check_text(value, *, field: str, max_length: int, allow_blank: bool = False) -> str:
    if not isinstance(value, str) or len(value) > max_length or (not allow_blank and not value.strip()):
        raise _invalid(
            field, f"Must be {'a' if allow_blank else 'a non-blank'} string of at most {max_length} characters."
        )
    return value
