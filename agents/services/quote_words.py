"""What a quote card says to a person: what the credits buy and why a person is asked, in words.

The billing layer speaks in operation names (`image.generate`) and reason codes (`threshold`); those stay in the
card's payload for programs. Titles and bodies name the things bought ("3 images") and the rule that asked.
"""

# What one call of a paid operation makes, singular and plural.
_THINGS = {
    "image.generate": ("image", "images"),
    "video.generate": ("video", "videos"),
    "3d.generate": ("3D model", "3D models"),
    "flow.run": ("paid Flow step", "paid Flow steps"),
}

_REASONS = {
    "threshold": "it is above the workspace's limit for one request without asking",
    "daily_cap": "it would pass today's limit for spending without asking",
    "budget": "it is more than what is left of the task's approved budget",
    "plan_budget": "the plan's paid steps are approved together, before the first one",
    "api_request": "it was asked through the API, and only a person approves spending",
}


def things(operation: str, count: int) -> str:
    """'3 images', '1 video'; an operation we have no noun for keeps its name ('2 × custom.op')."""
    singular, plural = _THINGS.get(operation, (None, None))
    if singular is None:
        return f"{count} × {operation}"
    return f"{count} {singular if count == 1 else plural}"


def why_asked(reasons: list) -> str:
    """' A person approves it because …' from the reason codes (unknown codes as they are), or ''."""
    if not reasons:
        return ""
    said = [_REASONS.get(str(code), str(code)) for code in reasons]
    return f" A person approves it because {'; and '.join(said)}."
