from django.apps import AppConfig
from django.urls import register_converter


class LomoteConfig(AppConfig):
    name = "lomote"
    verbose_name = "Lomote"

    def ready(self):
        from lomote.kernel.converters import IdConverter

        register_converter(IdConverter, "id")
