"""Billing's errors. Insufficient balance is lomote's PaymentRequired with code `insufficient_balance`."""

from django.utils.translation import gettext_noop

from lomote.kernel.exceptions import DomainError


class ConfirmationRequired(DomainError):
    """A person must approve this spending first (DESIGN §5). Nothing was held or changed.

    `details`: amount, operation, reasons (some of threshold, daily_cap, budget, api_request), over_by (for each
    of threshold, daily_cap and budget that asked, how many credits the cost is beyond it), quote (the quote to
    approve, when the caller named one), and the limits that applied. `budget` never asks alone: it comes with
    threshold or daily_cap (a cost within the workspace's limits never asks, budget or not).
    """

    status, code, default_message = (
        402,
        "confirmation_required",
        gettext_noop("A person must approve this spending first."),
    )
