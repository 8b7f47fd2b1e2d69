import re

from django.conf import settings
from rest_framework.exceptions import ParseError, ValidationError
from rest_framework.parsers import JSONParser

from lomote.kernel.exceptions import PayloadTooLarge


class BoundedJSONParser(JSONParser):
    """JSON parser that refuses oversized bodies before reading them, and deeply nested ones.

    The size limit is also DATA_UPLOAD_MAX_MEMORY_SIZE, which DRF trips first when it reads `request.body`
    (lomote/kernel/exceptions.py turns that into the same 413); checking here keeps the limit whatever the DRF
    version reads. Nesting is bounded by the interpreter: a 100 KB body of `[[[[…` exhausts the recursion
    limit, which the stock parser lets through as a 500.

    Text anywhere in the body (keys too) may not hold NUL or an unpaired surrogate: PostgreSQL stores
    neither, in text or in jsonb. CharFields refuse them one by one; free-form JSON fields (a Flow's graph,
    run inputs, quote params...) would otherwise reach the database and fail there as a 500.
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
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - nested too deeply.") from None
        _check_storable(data)
        return data


_UNSTORABLE = re.compile(r"[\x00\ud800-\udfff]")
UNSTORABLE_MESSAGE = "Text may not contain NUL characters or unpaired surrogates."


def _check_storable(data) -> None:
    """Refuse text PostgreSQL cannot store, naming the top-level field that carries it."""
    top = data.items() if isinstance(data, dict) else [("non_field_errors", data)]
    for field, value in top:
        name = field if isinstance(field, str) and not _UNSTORABLE.search(field) else "non_field_errors"
        stack = [field, value]
        while stack:  # iterative: the body may be nested up to the interpreter's recursion limit
            item = stack.pop()
            if isinstance(item, str):
                if _UNSTORABLE.search(item):
                    raise ValidationError({name: [UNSTORABLE_MESSAGE]})
            elif isinstance(item, dict):
                stack.extend(item.keys())
                stack.extend(item.values())
            elif isinstance(item, list):
                stack.extend(item)
