from django.apps import AppConfig


class SimulationConfig(AppConfig):
    """Scenario simulations of collaboration (seed 000 §11.2–11.3): a scripted person against the real runtime."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "simulation"
