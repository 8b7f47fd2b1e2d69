"""Settings for `bench.generation_bench` and the qcluster it starts: Lomote's own, plus the bench app.

The app (bench/apps.py) registers the `bench_silent` generation provider when Django starts, in the bench
process and in the cluster's processes alike; it has no models and changes nothing else.
"""

from lomote.settings import *  # noqa: F403
from lomote.settings import INSTALLED_APPS

INSTALLED_APPS = [*INSTALLED_APPS, "bench.apps.BenchConfig"]
