"""What a quote card says to a person: what the credits buy, and which limit asked and by how much, in words.

The billing layer speaks in operation names (`image.generate`), reason codes (`threshold`) and numbers (the
limits that applied, `over_by`); those stay in the card's payload for programs. Titles and bodies name the things
bought ("3 images") and the limit that asked ("40 credits is 15 over the 25-credit no-confirmation limit per
operation"). The rule they describe (DESIGN §5, billing/services/orders.py): a cost within the workspace's
no-confirmation limits never asks; a task's approved budget lets more through, never less.

Every phrase is translated (Django's gettext, in the language the caller activated: the task's, see
agents/services/cards.py); counts go through ngettext, so each language makes its own plurals.
"""

from collections.abc import Callable
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

# What one call of a paid operation makes, singular and plural, with its count.
_THINGS: dict[str, Callable[[int], str]] = {
    "image.generate": lambda n: ngettext("%(n)d image", "%(n)d images", n) % {"n": n},
    "video.generate": lambda n: ngettext("%(n)d video", "%(n)d videos", n) % {"n": n},
    "3d.generate": lambda n: ngettext("%(n)d 3D model", "%(n)d 3D models", n) % {"n": n},
    "flow.run": lambda n: ngettext("%(n)d paid Flow step", "%(n)d paid Flow steps", n) % {"n": n},
}

# Said when the numbers are not known (a card opened before they were kept): the limit, without the excess.
_REASONS = {
    "threshold": gettext_lazy("it is above the workspace's limit for one request without asking"),
    "daily_cap": gettext_lazy("it would pass today's limit for spending without asking"),
    "budget": gettext_lazy("what is left of the task's approved budget does not cover it either"),
    "plan_budget": gettext_lazy("the plan's paid steps are approved together, before the first one"),
    "api_request": gettext_lazy("it was asked through the API, and only a person approves spending"),
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
    said = _THINGS.get(operation)
    return said(count) if said is not None else f"{count} × {operation}"


def limits_of(details: dict[str, Any]) -> dict[str, Any]:
    """The part of a refusal's details a card keeps to say which limit asked and by how much."""
    return {key: details[key] for key in LIMIT_KEYS if details.get(key) is not None}


def _credits(n: int) -> str:
    return ngettext("%(n)d credit", "%(n)d credits", n) % {"n": n}


def _said(code: str, limits: dict[str, Any]) -> str:
    """One reason in words, with its numbers when the card kept them."""
    over_by = limits.get("over_by") or {}
    amount, threshold = limits.get("amount"), limits.get("no_confirm_threshold")
    if code == "threshold" and amount is not None and threshold is not None:
        over = over_by.get("threshold", amount - threshold)
        return _("%(amount)s is %(over)s over the %(threshold)s-credit no-confirmation limit per operation") % {
            "amount": _credits(amount),
            "over": over,
            "threshold": threshold,
        }
    if code == "plan_budget" and amount is not None and threshold is not None:
        over = over_by.get("plan_budget", amount - threshold)
        return _(
            "the plan's %(amount)s in all are %(over)s over the %(threshold)s-credit no-confirmation limit per "
            "operation, and a plan's paid steps are approved together, before the first one"
        ) % {"amount": _credits(amount), "over": over, "threshold": threshold}
    cap, spent = limits.get("daily_no_confirm_cap"), limits.get("auto_spent_today")
    if code == "daily_cap" and amount is not None and cap is not None and spent is not None:
        over = over_by.get("daily_cap", spent + amount - cap)
        return _(
            "%(amount)s would pass today's %(cap)s-credit no-confirmation cap by %(over)s "
            "(%(spent)s already spent without asking today)"
        ) % {"amount": _credits(amount), "cap": cap, "over": over, "spent": _credits(spent)}
    remaining = limits.get("budget_remaining")
    if code == "budget" and amount is not None and remaining is not None:
        over = over_by.get("budget", amount - remaining)
        return _("the task's approved budget has %(remaining)s left, %(over)s short") % {
            "remaining": _credits(remaining),
            "over": over,
        }
    return str(_REASONS.get(str(code), str(code)))


def why_asked(reasons: list, limits: dict[str, Any] | None = None) -> str:
    """' A person approves it because …' from the reason codes and the numbers billing gave (`limits_of`): each
    limit that asked and by how much. Unknown codes as they are; '' for none."""
    if not reasons:
        return ""
    said = [_said(str(code), limits or {}) for code in reasons]
    return " " + _("A person approves it because %(reasons)s.") % {"reasons": _("; and ").join(said)}
