"""What OPTIONS answers on the API: the endpoint's name, media types and where its schema is.

DRF's SimpleMetadata describes `serializer_class` as the PUT/POST input and calls `get_object()` for PUT.
Our views resolve objects through selectors and name their *output* serializer there, so that answer was
wrong at best and a 500 at worst. Request bodies are described once, in the OpenAPI schema.
"""

from django.urls import reverse
from rest_framework.metadata import BaseMetadata


class SchemaPointerMetadata(BaseMetadata):
    def determine_metadata(self, request, view):
        return {
            "name": view.get_view_name(),
            "description": view.get_view_description(),
            "renders": [renderer.media_type for renderer in view.renderer_classes],
            "parses": [parser.media_type for parser in view.parser_classes],
            "schema": reverse("schema"),
        }
