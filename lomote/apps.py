from django.apps import AppConfig


class LomoteConfig(AppConfig):
    name = "lomote"
    verbose_name = "Lomote"
