"""The price table: what each paid operation costs, in integer credits.

Prices depend only on the parameters that change the work done (how many images, how many seconds);
everything else in `params` (prompt, style, ...) is ignored here.
"""

from dataclasses import dataclass
from typing import Any

from lomote.kernel.exceptions import InvalidInput


@dataclass(frozen=True)
class Price:
    base: int  # credits per unit
    unit_param: str | None = None  # the parameter counting units, if the price scales
    unit_default: int = 1
    unit_min: int = 1
    unit_max: int = 1
    unit_label: str = "request"


PRICES: dict[str, Price] = {
    "image.generate": Price(base=40, unit_param="count", unit_default=1, unit_max=8, unit_label="image"),
    "video.generate": Price(base=20, unit_param="seconds", unit_default=5, unit_max=60, unit_label="second"),
    "3d.generate": Price(base=150),
}

OPERATIONS: list[tuple[str, str]] = [
    ("image.generate", "Generate images (per image)"),
    ("video.generate", "Generate a video (per second)"),
    ("3d.generate", "Generate a 3D asset"),
]

# A request made of several paid operations, priced and approved as one (a Flow run's paid nodes). Its
# params are {"items": [{"operation": ..., "params": {...}}, ...]}; each item becomes an order of its own.
COMPOSITE = "flow.run"
MAX_COMPOSITE_ITEMS = 100
# The paid operation of each generation kind, for callers that hold a kind (Flow nodes) rather than a tool.
GENERATION_OPERATIONS = {"image": "image.generate", "video": "video.generate", "3d": "3d.generate"}

# Largest amount any single order may carry: far below BigIntegerField's range, so sums never overflow.
MAX_ORDER_AMOUNT = 10**9


def _invalid(field: str, message: str) -> InvalidInput:
    return InvalidInput(message, details={"fields": {field: [message]}})


def price_of(operation: str, params: dict[str, Any] | None = None) -> int:
    """The price of `operation` with `params`, in credits. Unknown operations and bad units → InvalidInput."""
    if operation == COMPOSITE:
        return sum(price_of(item["operation"], item["params"]) for item in composite_items(params))
    price = PRICES.get(operation)
    if price is None:
        raise _invalid("operation", f"Unknown operation {operation!r}; known: {', '.join(PRICES)}.")
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise _invalid("params", "Parameters must be a JSON object.")
    if price.unit_param is None:
        return price.base
    units = params.get(price.unit_param, price.unit_default)
    # bool is an int in Python; `true` seconds is a client bug, not one second.
    if isinstance(units, bool) or not isinstance(units, int) or not price.unit_min <= units <= price.unit_max:
        raise _invalid(
            "params",
            f"`{price.unit_param}` must be a whole number from {price.unit_min} to {price.unit_max}.",
        )
    return price.base * units


def price_describe(operation: str) -> dict[str, Any]:
    """The price of an operation as a form shows it: credits per unit, which parameter counts the units and its
    limits, and what the default parameters cost."""
    price = PRICES[operation]
    return {
        "operation": operation,
        "credits_per_unit": price.base,
        "unit": price.unit_label,
        "unit_param": price.unit_param,
        "unit_default": price.unit_default,
        "unit_min": price.unit_min,
        "unit_max": price.unit_max,
        "credits_default": price_of(operation),
    }


def composite_items(params: Any) -> list[dict[str, Any]]:
    """The validated items of a composite request: each a single priced operation with its params."""
    items = params.get("items") if isinstance(params, dict) else None
    if not isinstance(items, list) or not 0 < len(items) <= MAX_COMPOSITE_ITEMS:
        raise _invalid("params", f"`items` must list 1 to {MAX_COMPOSITE_ITEMS} operations.")
    checked = []
    for item in items:
        if not isinstance(item, dict) or item.get("operation") not in PRICES:
            raise _invalid("params", f"Each item needs an `operation` among {', '.join(PRICES)}.")
        checked.append({"operation": item["operation"], "params": item.get("params") or {}})
    return checked
