"""One name → entry registry, shared by the model providers, the generation providers and the agent tools.

    factories = Registry[Factory]("generation provider")
    factories.register("procedural", _procedural)        # explicit, one line per entry
    factories.get("procedural")                          # the entry, or None
    with factories.override("simulated", lambda: fake):  # tests: this entry until the block exits
        ...

Registering a name twice with another entry is a ValueError (two plugins cannot silently share a name).
Overrides are process-wide, so workers in other threads see them, and they nest: leaving a block restores
exactly what was there before it, even if an inner override leaked.
"""

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Generic, TypeVar

T = TypeVar("T")


class Registry(Generic[T]):
    def __init__(self, what: str):
        self.what = what  # names the entries in errors: "tool 'x' registered twice"
        self._entries: dict[str, T] = {}
        self._overrides: dict[str, list[T]] = {}
        self._lock = threading.Lock()

    def register(self, name: str, entry: T) -> T:
        with self._lock:
            if name in self._entries and self._entries[name] is not entry:
                raise ValueError(f"{self.what} {name!r} registered twice")
            self._entries[name] = entry
        return entry

    def get(self, name: str) -> T | None:
        """The entry for `name`: the innermost override, else the registered one, else None."""
        with self._lock:
            stack = self._overrides.get(name)
            return stack[-1] if stack else self._entries.get(name)

    def registered_names(self) -> list[str]:
        with self._lock:
            return sorted(self._entries)

    def names(self) -> list[str]:
        """Every name `get` answers for, overrides included."""
        with self._lock:
            return sorted(set(self._entries) | set(self._overrides))

    def entries(self) -> dict[str, T]:
        """What `get` answers for each name, as one consistent snapshot."""
        with self._lock:
            current = dict(self._entries)
            current.update((name, stack[-1]) for name, stack in self._overrides.items())
            return current

    @contextmanager
    def override(self, name: str, entry: T) -> Iterator[T]:
        """Make `get(name)` answer `entry` until the block exits (tests, or one run's plugins)."""
        with self._lock:
            self._overrides.setdefault(name, []).append(entry)
        try:
            yield entry
        finally:
            with self._lock:
                stack = self._overrides[name]
                for i in range(len(stack) - 1, -1, -1):
                    if stack[i] is entry:
                        del stack[i]
                        break
                if not stack:
                    del self._overrides[name]
