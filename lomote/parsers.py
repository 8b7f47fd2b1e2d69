from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from lomote.exceptions import PayloadTooLarge


class BoundedJSONParser(JSONParser):
    """JSON parser that refuses oversized bodies before reading them, and deeply nested ones.

    The size limit is also DATA_UPLOAD_MAX_MEMORY_SIZE, which DRF trips first when it reads `request.body`
    (lomote/exceptions.py turns that into the same 413); checking here keeps the limit whatever the DRF
    version reads. Nesting is bounded by the interpreter: a 100 KB body of `[[[[…` exhausts the recursion
    limit, which the stock parser lets through as a 500.
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
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - nested too deeply.") from None
