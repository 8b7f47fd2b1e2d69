"""A hosted image API through the `openai` SDK (`images.generate`, base64 result): the `openai_images` provider.

The upstream answers synchronously (the image comes back in the HTTP response), so the call runs in one of
our django-q workers (`WorkerProvider`), never in the request that submitted it, and reports through
`job_event_apply` like any provider.

It is a paid call that carries no idempotency key, so it must not run twice (DESIGN §14):
- the SDK's own retries are off (`max_retries=0`) and the timeout is explicit (LOMOTE_OPENAI_IMAGES_TIMEOUT,
  kept below the generation q timeout), never the SDK's 600 s default;
- `rerun_safe = False`: the worker claims the job (→ `running`) before calling, so a redelivered q job finds
  it claimed and does nothing; a worker that died mid-call leaves the job to the sweeper's timeout;
- a timeout or a dropped connection may have produced (and billed) an image we never saw: the job fails
  with `submission_uncertain` and is not retried. HTTP errors are definite and fail with their own code.

The key comes from settings (LOMOTE_OPENAI_IMAGES_KEY, read from the environment) and lives only inside the
SDK client. Error messages are our own; a server message is kept only for a 400 and after redaction, and the
SDK exception is never chained into what we store.
"""

import base64
import binascii
import io
import logging
from typing import Any
from urllib.parse import urlsplit

import openai
from django.conf import settings
from PIL import Image, UnidentifiedImageError

from lomote.kernel.endpoints import EndpointRefused, endpoint_check
from lomote.kernel.exceptions import InvalidInput
from workspace.providers.base import Output, ReportFn, WorkerProvider

logger = logging.getLogger(__name__)

SIZES = ("auto", "1024x1024", "1536x1024", "1024x1536", "256x256", "512x512", "1792x1024", "1024x1792")
QUALITIES = ("auto", "low", "medium", "high", "standard", "hd")
FORMATS = {"png": "image/png", "jpeg": "image/jpeg", "webp": "image/webp"}
ALLOWED_PARAMS = {
    "size": SIZES,
    "quality": QUALITIES,
    "output_format": tuple(FORMATS),
    "background": ("auto", "transparent", "opaque"),
}
MAX_SERVER_MESSAGE = 300


class OpenAIImagesProvider(WorkerProvider):
    name = "openai_images"
    kinds = frozenset({"image"})
    cost_hints = {"image": 8}
    rerun_safe = False

    def __init__(self, *, api_key: str, base_url: str, model: str, timeout: float):
        self._api_key = api_key
        self.base_url = base_url
        self.model = model
        self.timeout = timeout

    @classmethod
    def from_settings(cls) -> "OpenAIImagesProvider":
        return cls(
            api_key=settings.LOMOTE_OPENAI_IMAGES_KEY,
            base_url=settings.LOMOTE_OPENAI_IMAGES_BASE_URL,
            model=settings.LOMOTE_OPENAI_IMAGES_MODEL,
            timeout=settings.LOMOTE_OPENAI_IMAGES_TIMEOUT,
        )

    def __repr__(self) -> str:
        return f"<OpenAIImagesProvider {self.model} @ {urlsplit(self.base_url).hostname}>"

    def check(self, kind: str, params: dict[str, Any]) -> None:
        super().check(kind, params)
        if not self._api_key:
            raise InvalidInput(
                "The hosted image provider has no API key (set LOMOTE_OPENAI_IMAGES_KEY).",
                code="provider_not_configured",
            )
        errors = {
            name: [f"One of {', '.join(ALLOWED_PARAMS[name])}." if name in ALLOWED_PARAMS else "Unknown parameter."]
            for name, value in params.items()
            if name not in ALLOWED_PARAMS or value not in ALLOWED_PARAMS[name]
        }
        if errors:
            raise InvalidInput("Some generation parameters are invalid.", details={"fields": {"params": errors}})

    def work(self, job, report: ReportFn) -> None:
        kwargs: dict[str, Any] = {"model": self.model, "prompt": job.prompt, "n": 1, **job.params}
        if self.model.startswith("dall-e"):
            kwargs["response_format"] = "b64_json"  # the older models answer with a URL unless asked
        try:
            endpoint_check(self.base_url)  # an operator's LOMOTE_OPENAI_IMAGES_BASE_URL gets the models' check
        except EndpointRefused as refused:
            report("failed", error={"code": refused.code, "message": refused.message})
            return
        client = openai.OpenAI(api_key=self._api_key, base_url=self.base_url, timeout=self.timeout, max_retries=0)
        error: dict[str, str] | None = None
        try:
            response = client.images.generate(**kwargs, timeout=self.timeout)
        except openai.OpenAIError as exc:
            error = self._map_error(exc)
        finally:
            client.close()
        # Reported outside the except block so the SDK exception is not even attached as context.
        if error is not None:
            logger.warning("openai images job %s failed: %s", job.pk, error["code"])
            report("failed", error=error)
            return
        output = self._output(response, job.params)
        if output is None:
            report("failed", error={"code": "upstream_bad_response", "message": "The image API sent no usable image."})
            return
        report("succeeded", output=output)

    def _output(self, response: Any, params: dict[str, Any]) -> Output | None:
        data = getattr(response, "data", None) or []
        b64 = getattr(data[0], "b64_json", None) if data else None
        if not b64:
            return None
        try:
            content = base64.b64decode(b64, validate=True)
            with Image.open(io.BytesIO(content)) as image:
                width, height, fmt = image.width, image.height, (image.format or "").lower()
        except (binascii.Error, ValueError, UnidentifiedImageError):
            return None
        fmt = {"jpg": "jpeg"}.get(fmt, fmt)
        media_type = FORMATS.get(fmt) or FORMATS.get(params.get("output_format", "png"), "image/png")
        meta: dict[str, Any] = {"width": width, "height": height, "model": self.model}
        revised = getattr(data[0], "revised_prompt", None)
        if isinstance(revised, str) and revised:
            meta["revised_prompt"] = revised[:1000]
        extension = {"image/jpeg": "jpg", "image/webp": "webp"}.get(media_type, "png")
        return Output(content=content, media_type=media_type, filename=f"image.{extension}", meta=meta)

    def _map_error(self, exc: openai.OpenAIError) -> dict[str, str]:
        if isinstance(exc, openai.APITimeoutError | openai.APIConnectionError):
            return {
                "code": "submission_uncertain",
                "message": "The image API did not answer in time; the image may exist upstream. Not retried.",
            }
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            if status in (401, 403):
                return {"code": "upstream_auth", "message": f"The image API refused the credentials (HTTP {status})."}
            if status == 429:
                return {"code": "upstream_rate_limited", "message": "The image API is rate limiting (HTTP 429)."}
            if status >= 500:
                return {"code": "upstream_failed", "message": f"The image API failed (HTTP {status})."}
            message = f"The image API rejected the request (HTTP {status})"
            server = _server_message(exc.body)
            if server:
                message += ": " + self._redact(server)[:MAX_SERVER_MESSAGE]
            return {"code": "upstream_rejected", "message": message + "."}
        return {"code": "upstream_bad_response", "message": "The image API sent a malformed answer."}

    def _redact(self, text: str) -> str:
        return text.replace(self._api_key, "[redacted]") if len(self._api_key) >= 4 else text


def _server_message(body: object) -> str:
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return error["message"]
        if isinstance(error, str):
            return error
    return ""
