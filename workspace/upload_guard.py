"""Uploads refused while they are read, not after: a request announcing more than any upload may be is answered
413 before its body is read, and one sending more than it announced is cut off at the limit.

Installed first among the request's upload handlers (UploadParsing, below) before anything parses the body —
with a session, the CSRF check reads `request.POST`, which parses a multipart body during authentication. Only
one file is taken per request. Django's own handlers then spool the file to memory or a temporary file; the
content checks (workspace/services/uploads.py) run on that, with the kind's own limit.

Under ASGI, the server and Django read the whole request body before any view or handler runs. So under daphne
a request whose Content-Length exceeds `request_body_limit()` is answered 413 from its headers, before its body
is read (lomote/asgi.py); this guard bounds what is parsed and kept of the rest.
"""

from django.conf import settings
from django.core.files.uploadhandler import FileUploadHandler
from rest_framework.parsers import MultiPartParser

from lomote.kernel.exceptions import InvalidInput
from workspace.services.uploads import UploadTooLarge, upload_request_limit

# Room for the form's other fields and the multipart boundaries around the file.
FORM_ALLOWANCE = 64 * 1024


def request_body_limit() -> int:
    """The largest body any request may announce: the largest upload, its form's other fields and boundaries."""
    return upload_request_limit() + settings.DATA_UPLOAD_MAX_MEMORY_SIZE + FORM_ALLOWANCE


def _too_large(limit: int, announced: int | None = None) -> UploadTooLarge:
    details = {"max_bytes": limit}
    if announced is not None:
        details["content_length"] = announced
    return UploadTooLarge(f"Uploads are at most {limit:,} bytes.", details=details)


class UploadGuard(FileUploadHandler):
    def __init__(self, request=None, *, limit: int):
        super().__init__(request)
        self.limit = limit
        self.files = 0

    def handle_raw_input(self, input_data, META, content_length, boundary, encoding=None):
        if content_length > request_body_limit():
            raise _too_large(self.limit, content_length)
        return None

    def new_file(self, field_name, file_name, content_type, content_length, charset=None, content_type_extra=None):
        self.files += 1
        if self.files > 1:
            raise InvalidInput("Upload one file per request.", code="one_file", details={"field": field_name})

    def receive_data_chunk(self, raw_data, start):
        if start + len(raw_data) > self.limit:
            raise _too_large(self.limit)
        return raw_data

    def file_complete(self, file_size):
        return None


class UploadParsing:
    """Mixin for multipart upload views: the guard goes in before authentication can parse the body."""

    parser_classes = [MultiPartParser]

    def initialize_request(self, request, *args, **kwargs):
        request.upload_handlers.insert(0, UploadGuard(request, limit=upload_request_limit()))
        return super().initialize_request(request, *args, **kwargs)
