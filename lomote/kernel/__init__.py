"""The shared kernel: errors, the event log push, domain events, API plumbing, registries, move tables and
subject words. Every app may import it; it imports no app (import-linter checks it, pyproject.toml)."""
