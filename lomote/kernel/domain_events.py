"""In-process domain events, so a lower app can tell higher apps what happened without importing them.

Dependencies point one way (agents → memory → billing → workspace → lomote, DESIGN §1). A lower app
`publish`es a named event inside the transaction of the change; higher apps `subscribe` in their
AppConfig.ready(). Handlers run synchronously, in registration order, in the publisher's transaction: the
reaction commits or rolls back with the change, so it happens exactly once per state transition.
Handlers must be quick database work; side effects outside the database go through on_commit.
"""

from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

Handler = Callable[..., None]
_subscribers: dict[str, list[Handler]] = defaultdict(list)


def subscribe(event: str) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        if handler not in _subscribers[event]:
            _subscribers[event].append(handler)
        return handler

    return register


def publish(event: str, **data: Any) -> None:
    for handler in list(_subscribers[event]):
        handler(**data)


def subscribers(event: str) -> list[Handler]:
    return list(_subscribers[event])


@contextmanager
def subscribed(event: str, handler: Handler) -> Iterator[Handler]:
    """Subscribe `handler` for the block only (tests): on exit it is gone again, unless it was there before."""
    added = handler not in _subscribers[event]
    subscribe(event)(handler)
    try:
        yield handler
    finally:
        if added and handler in _subscribers[event]:
            _subscribers[event].remove(handler)
            if not _subscribers[event]:
                del _subscribers[event]
