from django.apps import AppConfig


class BenchConfig(AppConfig):
    """Installed by bench.settings only: registers the bench's generation provider in every process."""

    name = "bench"
    label = "lomote_bench"
    verbose_name = "Lomote benches"

    def ready(self) -> None:
        from bench.silent import NAME, SilentUpstream
        from workspace.providers import registry

        registry.register(NAME, SilentUpstream)
