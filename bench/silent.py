"""A generation upstream that accepts every job and never reports back (the generation bench's provider).

`submit` returns a fresh upstream id at once and starts nothing; `poll` has no news. Jobs therefore stay
`submitted` until the bench delivers their callbacks itself, which is what lets it count the workers held
while jobs wait. Registered as `bench_silent` by `bench.apps.BenchConfig.ready()`, so every process started
with `bench.settings` (the bench itself and the qcluster it starts) knows it.
"""

import uuid

from workspace.providers.base import GenerationProvider, Report

NAME = "bench_silent"


class SilentUpstream(GenerationProvider):
    name = NAME
    kinds = frozenset({"image", "video", "3d"})
    cost_hints = {"image": 40, "video": 10, "3d": 5}
    max_duration = 24 * 3600.0  # no sweeper runs during the bench; never time the jobs out anyway

    def submit(self, job) -> str:
        return f"silent_{uuid.uuid4().hex}"

    def poll(self, upstream_id: str) -> Report | None:
        return None


def ping() -> str:
    """A q task that does nothing: the bench waits for it to know the cluster's workers are up."""
    return "pong"
