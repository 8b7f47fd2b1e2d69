"""What a quote card says to a person: what the credits buy, and which limit asked and by how much, in words.

The billing layer speaks in operation names (`image.generate`), reason codes (`threshold`) and numbers (the
limits that applied, `over_by`); those stay in the card's payload for programs. Titles and bodies name the things
bought ("3 images") and the limit that asked ("40 credits is 15 over the 25-credit no-confirmation limit per
operation"). The rule they describe (DESIGN §5, billing/services/orders.py): a cost within the workspace's
no-confirmation limits never asks; a task's approved budget lets more through, never less.
"""

from typing import Any

# What one call of a paid operation makes, singular and plural.
_THINGS = {
    "image.generate": ("image", "images"),
    "video.generate": ("video", "videos"),
    "3d.generate": ("3D model", "3D models"),
    "flow.run": ("paid Flow step", "paid Flow steps"),
}

# Said when the numbers are not known (a card opened before they were kept): the limit, without the excess.
_REASONS = {
    "threshold": "it is above the workspace's limit for one request without asking",
    "daily_cap": "it would pass today's limit for spending without asking",
    "budget": "what is left of the task's approved budget does not cover it either",
    "plan_budget": "the plan's paid steps are approved together, before the first one",
    "api_request": "it was asked through the API, and only a person approves spending",
}

# The numbers a card keeps from billing's refusal (ConfirmationRequired.details) to say which limit asked.
LIMIT_KEYS = (
    "amount",
    "no_confirm_threshold",
    "daily_no_confirm_cap",
    "auto_spent_today",
    "budget_remaining",
    "over_by",
)


def things(operation: str, count: int) -> str:
    """'3 images', '1 video'; an operation we have no noun for keeps its name ('2 × custom.op')."""
    singular, plural = _THINGS.get(operation, (None, None))
    if singular is None:
        return f"{count} × {operation}"
    return f"{count} {singular if count == 1 else plural}"


def limits_of(details: dict[str, Any]) -> dict[str, Any]:
    """The part of a refusal's details a card keeps to say which limit asked and by how much."""
    return {key: details[key] for key in LIMIT_KEYS if details.get(key) is not None}


def _credits(n: int) -> str:
    return f"{n} credit" if n == 1 else f"{n} credits"


def _said(code: str, limits: dict[str, Any]) -> str:
    """One reason in words, with its numbers when the card kept them."""
    over_by = limits.get("over_by") or {}
    amount, threshold = limits.get("amount"), limits.get("no_confirm_threshold")
    if code == "threshold" and amount is not None and threshold is not None:
        over = over_by.get("threshold", amount - threshold)
        return f"{_credits(amount)} is {over} over the {threshold}-credit no-confirmation limit per operation"
    if code == "plan_budget" and amount is not None and threshold is not None:
        over = over_by.get("plan_budget", amount - threshold)
        return (
            f"the plan's {_credits(amount)} in all are {over} over the {threshold}-credit no-confirmation limit per "
            "operation, and a plan's paid steps are approved together, before the first one"
        )
    cap, spent = limits.get("daily_no_confirm_cap"), limits.get("auto_spent_today")
    if code == "daily_cap" and amount is not None and cap is not None and spent is not None:
        over = over_by.get("daily_cap", spent + amount - cap)
        return (
            f"{_credits(amount)} would pass today's {cap}-credit no-confirmation cap by {over} "
            f"({_credits(spent)} already spent without asking today)"
        )
    remaining = limits.get("budget_remaining")
    if code == "budget" and amount is not None and remaining is not None:
        over = over_by.get("budget", amount - remaining)
        return f"the task's approved budget has {_credits(remaining)} left, {over} short"
    return _REASONS.get(str(code), str(code))


def why_asked(reasons: list, limits: dict[str, Any] | None = None) -> str:
    """' A person approves it because …' from the reason codes and the numbers billing gave (`limits_of`): each
    limit that asked and by how much. Unknown codes as they are; '' for none."""
    if not reasons:
        return ""
    said = [_said(str(code), limits or {}) for code in reasons]
    return f" A person approves it because {'; and '.join(said)}."
