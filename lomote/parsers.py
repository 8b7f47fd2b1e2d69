from django.conf import settings
from rest_framework.parsers import JSONParser

from lomote.exceptions import PayloadTooLarge


class BoundedJSONParser(JSONParser):
    """JSON parser that refuses oversized bodies before reading them.

    DRF reads the raw stream, bypassing DATA_UPLOAD_MAX_MEMORY_SIZE, so the limit is enforced here.
    """

    def parse(self, stream, media_type=None, parser_context=None):
        request = (parser_context or {}).get("request")
        if request is not None:
            try:
                length = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                length = 0
            if length > settings.LOMOTE_MAX_JSON_BODY:
                raise PayloadTooLarge()
        return super().parse(stream, media_type, parser_context)
