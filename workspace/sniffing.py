"""What a file is, decided from its bytes — never from its name or the type a client declared.

    sniff(fp, *, size, max_text_bytes, max_pixels) -> Sniffed
        `fp` is a readable, seekable binary file of `size` bytes. Recognised: PNG, JPEG, WebP and GIF images
        (opened and fully decoded by Pillow), MP4 and MOV (ISO base media: a well-formed box sequence starting
        with `ftyp`, a `moov` holding a video track), WebM (an EBML header whose DocType is `webm`, then a
        Segment), glTF 2 (binary `.glb` with its JSON chunk, or `.gltf` JSON with `asset.version`; every `uri`
        in it a `data:` URI, so that showing the model fetches nothing from anywhere) and UTF-8 text (a
        document). Anything else raises Unrecognised; a recognised kind over its bound raises
        TooBig (text over `max_text_bytes`, an image over `max_pixels`).

    declared_kinds(name, content_type) -> [(kind, what claims it)]
        What the file's name and declared type claim, to compare with the content: a known extension or media
        type gives the kind it names (or OTHER for formats Lomote does not take, a PDF, an MP3…); no extension,
        an unknown one and generic types (application/octet-stream) claim nothing.

This module imports nothing from Lomote: it is pure, and the upload service decides what each answer means.
"""

import json
import re
import struct
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any, BinaryIO

from PIL import Image, UnidentifiedImageError

IMAGE, VIDEO, MODEL_3D, DOCUMENT = "image", "video", "3d", "document"
OTHER = "other"

HEAD_BYTES = 64
TEXT_PROBE_BYTES = 64 * 1024
MAX_BOXES = 10_000
MAX_MOOV_BYTES = 32 * 1024 * 1024
MAX_GLB_JSON_BYTES = 32 * 1024 * 1024

PILLOW_FORMATS = {"PNG": "image/png", "JPEG": "image/jpeg", "WEBP": "image/webp", "GIF": "image/gif"}
PILLOW_EXTENSIONS = {"PNG": "png", "JPEG": "jpg", "WEBP": "webp", "GIF": "gif"}

# ISO base media brands that are not videos: HEIF/AVIF still images and audio-only files.
IMAGE_BRANDS = {b"heic", b"heix", b"heim", b"heis", b"hevc", b"hevx", b"mif1", b"msf1", b"avif", b"avis", b"avio"}
AUDIO_BRANDS = {b"M4A ", b"M4B ", b"M4P ", b"F4A ", b"F4B "}

EBML_HEADER, EBML_DOCTYPE, MATROSKA_SEGMENT = 0x1A45DFA3, 0x4282, 0x18538067
GLB_JSON_CHUNK = 0x4E4F534A

# Control characters a text document never holds (tab, newlines and form feed are fine). NUL also cannot be
# stored by PostgreSQL.
_BINARY_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")
_EXTENSION = re.compile(r"^\.[a-z0-9]{1,10}$")

EXTENSION_KINDS = {
    **dict.fromkeys(("png", "jpg", "jpeg", "jpe", "jfif", "webp", "gif"), IMAGE),
    **dict.fromkeys(("mp4", "m4v", "mov", "qt", "webm"), VIDEO),
    **dict.fromkeys(("glb", "gltf"), MODEL_3D),
    **dict.fromkeys(("txt", "text", "md", "markdown", "mdown", "mkd", "csv", "json", "log", "rst"), DOCUMENT),
    # Formats people have that Lomote does not take: a file named so is refused when its content is another.
    **dict.fromkeys(
        (
            "pdf", "svg", "svgz", "heic", "heif", "avif", "tif", "tiff", "bmp", "ico", "psd", "raw", "mp3", "wav",
            "ogg", "oga", "flac", "m4a", "aac", "mkv", "avi", "wmv", "flv", "mpg", "mpeg", "obj", "fbx", "stl",
            "usdz", "blend", "3ds", "zip", "gz", "tar", "7z", "rar", "exe", "dll", "doc", "docx", "xls", "xlsx",
            "ppt", "pptx", "odt", "rtf", "html", "htm", "js", "py",
        ),
        OTHER,
    ),
}  # fmt: skip
MEDIA_KINDS = {"image": IMAGE, "video": VIDEO, "model": MODEL_3D, "text": DOCUMENT, "audio": OTHER, "font": OTHER}
NEUTRAL_MEDIA_TYPES = {"", "application/octet-stream", "binary/octet-stream", "application/unknown"}
MEDIA_TYPE_KINDS = {
    "model/gltf-binary": MODEL_3D,
    "model/gltf+json": MODEL_3D,
    "application/json": DOCUMENT,
    "application/pdf": OTHER,
    "application/zip": OTHER,
    "image/svg+xml": OTHER,
    "image/heic": OTHER,
    "image/heif": OTHER,
    "image/avif": OTHER,
    "image/tiff": OTHER,
    "image/bmp": OTHER,
    "video/x-matroska": OTHER,
    "text/html": OTHER,
}


@dataclass(frozen=True)
class Sniffed:
    kind: str
    media_type: str
    extension: str
    meta: dict[str, Any] = field(default_factory=dict)
    text: str | None = None  # a document's content, decoded


class Unrecognised(Exception):
    """Not a file Lomote takes, or a damaged one; the message says what was found."""

    def __init__(self, message: str, *, found: str = ""):
        super().__init__(message)
        self.message, self.found = message, found


class TooBig(Exception):
    """A recognised file over one of its kind's bounds (bytes for text, pixels for images)."""

    def __init__(self, message: str, *, kind: str, details: dict[str, Any]):
        super().__init__(message)
        self.message, self.kind, self.details = message, kind, details


# --- the name and the declared type ---------------------------------------------------------------------


def extension_of(name: str) -> str:
    """The file name's extension, lower case without the dot, or "" when it has none that looks like one."""
    suffix = PurePosixPath((name or "").replace("\\", "/")).suffix.lower()
    return suffix[1:] if _EXTENSION.match(suffix) else ""


def declared_kinds(name: str, content_type: str) -> list[tuple[str, str]]:
    """What the name and the declared type claim, as [(kind, which of them says so)] (module docstring)."""
    claims = []
    extension = extension_of(name)
    if extension in EXTENSION_KINDS:
        claims.append((EXTENSION_KINDS[extension], f"the file name (.{extension})"))
    media_type = (content_type or "").split(";", 1)[0].strip().lower()
    if media_type not in NEUTRAL_MEDIA_TYPES:
        kind = MEDIA_TYPE_KINDS.get(media_type) or MEDIA_KINDS.get(media_type.split("/", 1)[0])
        if kind is not None:
            claims.append((kind, f"the declared type ({media_type})"))
    return claims


# --- the content ------------------------------------------------------------------------------------------


def sniff(fp: BinaryIO, *, size: int, max_text_bytes: int, max_pixels: int) -> Sniffed:
    """What the file is (module docstring). Reads only what it needs; leaves `fp` at an unspecified place."""
    if size <= 0:
        raise Unrecognised("The file is empty.", found="empty")
    fp.seek(0)
    head = fp.read(HEAD_BYTES)
    if head.startswith(b"\x89PNG\r\n\x1a\n") or head.startswith(b"\xff\xd8\xff") or head[:6] in (b"GIF87a", b"GIF89a"):
        return _image(fp, max_pixels)
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return _image(fp, max_pixels)
    if head[4:8] == b"ftyp":
        return _iso_media(fp, size)
    if head[:4] == EBML_HEADER.to_bytes(4, "big"):
        return _webm(fp, size)
    if head[:4] == b"glTF":
        return _glb(fp, size)
    return _text(fp, size, max_text_bytes)


def _too_many_pixels(width: int, height: int, max_pixels: int) -> TooBig:
    return TooBig(
        f"The image is {width}×{height} pixels ({width * height:,} pixels); at most {max_pixels:,} pixels are taken.",
        kind=IMAGE,
        details={"width": width, "height": height, "pixels": width * height, "max_pixels": max_pixels},
    )


def _announced_size(fp: BinaryIO) -> tuple[int, int] | None:
    """The size an image's header announces, read by Pillow's format reader without Image.open's own guard against
    decompression bombs — which refuses such a file before saying how large it claims to be."""
    fp.seek(0)
    prefix = fp.read(16)
    for image_format in PILLOW_FORMATS:
        factory, accept = Image.OPEN.get(image_format, (None, None))
        if factory is not None and (accept is None or accept(prefix)):
            fp.seek(0)
            try:
                return factory(fp, None).size
            except (UnidentifiedImageError, OSError, SyntaxError, ValueError, EOFError, struct.error):
                return None
    return None


def _image(fp: BinaryIO, max_pixels: int) -> Sniffed:
    fp.seek(0)
    try:
        with Image.open(fp) as image:
            image_format = image.format or ""
            if image_format not in PILLOW_FORMATS:
                raise Unrecognised(f"A {image_format or 'unknown'} image is not taken here.", found=image_format)
            width, height = image.size
            if width * height > max_pixels:
                raise _too_many_pixels(width, height, max_pixels)
            frames = int(getattr(image, "n_frames", 1) or 1)
            mode = image.mode
            image.verify()
        # verify() checks the structure (PNG checksums…); decoding finds truncated or corrupt pixel data.
        fp.seek(0)
        with Image.open(fp) as image:
            image.load()
    except (TooBig, Unrecognised):
        raise
    except Image.DecompressionBombError:
        # Over Pillow's own bound (twice Image.MAX_IMAGE_PIXELS): a file small on disk announcing a huge image.
        size = _announced_size(fp)
        if size is not None and size[0] * size[1] > max_pixels:
            raise _too_many_pixels(*size, max_pixels) from None
        raise Unrecognised(
            "The image announces more pixels than any image taken here.", found="too_many_pixels"
        ) from None
    except (
        UnidentifiedImageError,
        OSError,
        SyntaxError,
        ValueError,
        EOFError,
        struct.error,
    ):
        raise Unrecognised(
            "It starts like an image, but Pillow cannot read it: the file is damaged or truncated."
        ) from None
    meta: dict[str, Any] = {"width": width, "height": height, "format": image_format.lower(), "mode": mode}
    if frames > 1:
        meta["frames"] = frames
    return Sniffed(IMAGE, PILLOW_FORMATS[image_format], PILLOW_EXTENSIONS[image_format], meta)


# --- ISO base media (MP4, MOV) ----------------------------------------------------------------------------

DAMAGED_VIDEO = "The video's structure is damaged: a box is cut short or runs past the end of the file."


def _box(header: bytes, room: int) -> tuple[bytes, int, int]:
    """(type, header length, box length) of the box whose first bytes are `header`, with `room` bytes left
    from its start to the end of its parent (or of the file)."""
    if len(header) < 8 or room < 8:
        raise Unrecognised(DAMAGED_VIDEO)
    length, kind = struct.unpack(">I4s", header[:8])
    header_length = 8
    if length == 1:
        if len(header) < 16:
            raise Unrecognised(DAMAGED_VIDEO)
        (length,) = struct.unpack(">Q", header[8:16])
        header_length = 16
    elif length == 0:  # "to the end"
        length = room
    if length < header_length or length > room or not all(32 <= c < 127 for c in kind):
        raise Unrecognised(DAMAGED_VIDEO)
    return kind, header_length, length


def _top_level_boxes(fp: BinaryIO, size: int) -> list[tuple[bytes, int, int]]:
    """The file's top-level boxes as (type, payload offset, end offset), reading 16 bytes per box."""
    boxes, offset = [], 0
    while offset < size:
        if len(boxes) >= MAX_BOXES:
            raise Unrecognised("The file has too many top-level boxes to be a video.")
        fp.seek(offset)
        kind, header_length, length = _box(fp.read(16), size - offset)
        boxes.append((kind, offset + header_length, offset + length))
        offset += length
    return boxes


def _children(data: bytes, start: int, end: int) -> list[tuple[bytes, int, int]]:
    boxes = []
    while start < end:
        kind, header_length, length = _box(data[start : start + 16], end - start)
        boxes.append((kind, start + header_length, start + length))
        start += length
    return boxes


def _tracks(moov: bytes) -> tuple[bytes, list[tuple[bytes, bytes]]]:
    """The movie header's payload and each track's (tkhd payload, media handler type) in a moov payload."""
    mvhd, tracks = b"", []
    for kind, payload, end in _children(moov, 0, len(moov)):
        if kind == b"mvhd":
            mvhd = moov[payload:end]
        elif kind == b"trak":
            tkhd, handler = b"", b""
            for inner, inner_payload, inner_end in _children(moov, payload, end):
                if inner == b"tkhd":
                    tkhd = moov[inner_payload:inner_end]
                elif inner == b"mdia":
                    for media, media_payload, media_end in _children(moov, inner_payload, inner_end):
                        if media == b"hdlr":
                            handler = moov[media_payload + 8 : min(media_payload + 12, media_end)]
            tracks.append((tkhd, handler))
    return mvhd, tracks


def _iso_media(fp: BinaryIO, size: int) -> Sniffed:
    boxes = _top_level_boxes(fp, size)
    fp.seek(boxes[0][1])
    brand = fp.read(4)
    if brand in IMAGE_BRANDS:
        raise Unrecognised("This is a HEIF or AVIF still image, which is not taken here.", found="heif")
    if brand in AUDIO_BRANDS:
        raise Unrecognised("This is an audio file (M4A), which is not taken here.", found="audio")
    moov = next(((payload, end) for kind, payload, end in boxes if kind == b"moov"), None)
    if moov is None:
        raise Unrecognised("The video has no movie header (moov): it is incomplete or was never finished.")
    if moov[1] - moov[0] > MAX_MOOV_BYTES:
        raise Unrecognised("The video's movie header is implausibly large.")
    fp.seek(moov[0])
    mvhd, tracks = _tracks(fp.read(moov[1] - moov[0]))
    video = [tkhd for tkhd, handler in tracks if handler == b"vide"]
    if not video:
        raise Unrecognised("The file holds no video track.", found="no_video_track")
    meta: dict[str, Any] = {"brand": brand.decode("ascii", "replace").strip(), "tracks": len(tracks)}
    meta.update(_movie_duration(mvhd))
    meta.update(_track_size(video[0]))
    if brand == b"qt  ":
        return Sniffed(VIDEO, "video/quicktime", "mov", meta)
    return Sniffed(VIDEO, "video/mp4", "mp4", meta)


def _movie_duration(mvhd: bytes) -> dict[str, Any]:
    try:
        if mvhd[:1] == b"\x01":
            timescale, duration = struct.unpack(">IQ", mvhd[20:32])
        else:
            timescale, duration = struct.unpack(">II", mvhd[12:20])
    except struct.error:
        return {}
    return {"duration_seconds": round(duration / timescale, 3)} if timescale else {}


def _track_size(tkhd: bytes) -> dict[str, Any]:
    """A video track's display size: tkhd's last two fields, 16.16 fixed point."""
    if len(tkhd) < 84:
        return {}
    width, height = struct.unpack(">II", tkhd[-8:])
    return {"width": width >> 16, "height": height >> 16} if width and height else {}


# --- WebM (EBML) --------------------------------------------------------------------------------------------


def _vint(data: bytes, at: int, *, keep_marker: bool) -> tuple[int, int]:
    """An EBML variable-length integer at `at`: (value, its length). IDs keep their marker bit, sizes do not."""
    if at >= len(data) or data[at] == 0:
        raise Unrecognised("The WebM header is damaged.")
    first = data[at]
    length = 8 - first.bit_length() + 1
    if at + length > len(data):
        raise Unrecognised("The WebM header is cut short.")
    value = first if keep_marker else first & (0xFF >> length)
    for byte in data[at + 1 : at + length]:
        value = (value << 8) | byte
    return value, length


def _webm(fp: BinaryIO, size: int) -> Sniffed:
    fp.seek(0)
    data = fp.read(4096)
    _, id_length = _vint(data, 0, keep_marker=True)
    header_size, size_length = _vint(data, id_length, keep_marker=False)
    start = id_length + size_length
    end = start + header_size
    if end > len(data):
        raise Unrecognised("The WebM header is cut short or implausibly large.")
    doctype = ""
    at = start
    while at < end:
        element, length = _vint(data, at, keep_marker=True)
        value_size, value_length = _vint(data, at + length, keep_marker=False)
        value_at = at + length + value_length
        if value_at + value_size > end:
            raise Unrecognised("The WebM header is damaged.")
        if element == EBML_DOCTYPE:
            doctype = data[value_at : value_at + value_size].rstrip(b"\0").decode("ascii", "replace")
        at = value_at + value_size
    if doctype == "matroska":
        raise Unrecognised("This is a Matroska (.mkv) file; only WebM video is taken.", found="matroska")
    if doctype != "webm":
        raise Unrecognised(f"An EBML file of type {doctype or 'unknown'!r} is not a WebM video.", found=doctype)
    segment, _ = _vint(data, end, keep_marker=True) if end < len(data) else (0, 0)
    if segment != MATROSKA_SEGMENT:
        raise Unrecognised("The WebM file has no segment after its header: it holds no video.")
    return Sniffed(VIDEO, "video/webm", "webm", {"container": "webm"})


# --- glTF -----------------------------------------------------------------------------------------------------


def _external_uris(document: Any) -> list[str]:
    """Every `uri` in the glTF JSON that is not a `data:` URI — a buffer's, an image's or an extension's: each
    would be fetched from wherever it names by whoever opens the model. A GLB's own buffer has no uri."""
    found, pending = [], [document]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            uri = node.get("uri")
            if uri is not None and not (isinstance(uri, str) and uri.lstrip()[:5].lower() == "data:"):
                found.append(uri if isinstance(uri, str) else repr(uri))
            pending.extend(value for value in node.values() if isinstance(value, dict | list))
        elif isinstance(node, list):
            pending.extend(value for value in node if isinstance(value, dict | list))
    return found


def _gltf_meta(document: Any) -> dict[str, Any]:
    """The glTF JSON's description, or Unrecognised when it is not glTF 2 (`asset.version` "2.x") or refers to
    files outside itself."""
    asset = document.get("asset") if isinstance(document, dict) else None
    version = asset.get("version") if isinstance(asset, dict) else None
    if not isinstance(version, str) or not version.startswith("2."):
        raise Unrecognised("A glTF file needs an asset.version of 2.x.", found="gltf")
    external = _external_uris(document)
    if external:
        shown = external[0] if len(external[0]) <= 80 else f"{external[0][:77]}..."
        raise Unrecognised(
            f"The glTF model refers to {len(external)} file(s) outside itself (such as {shown!r}); only buffers "
            "and images embedded in it (data: URIs, or a .glb's own binary chunk) are taken. Export it as a "
            "single .glb, or with embedded resources.",
            found="external_uri",
        )
    meta: dict[str, Any] = {"gltf_version": version}
    if isinstance(asset.get("generator"), str):
        meta["generator"] = asset["generator"][:200]
    for key in ("scenes", "nodes", "meshes", "materials", "animations"):
        if isinstance(document.get(key), list):
            meta[key] = len(document[key])
    return meta


def _glb(fp: BinaryIO, size: int) -> Sniffed:
    fp.seek(0)
    header = fp.read(20)
    if len(header) < 20:
        raise Unrecognised("The glTF binary is cut short.")
    _, version, length, chunk_length, chunk_type = struct.unpack("<4sIIII", header)
    if version != 2:
        raise Unrecognised(f"glTF binary version {version} is not taken; version 2 is.", found="glb")
    if length != size:
        raise Unrecognised(f"The glTF binary says it is {length} bytes long but the file has {size}.")
    if chunk_type != GLB_JSON_CHUNK or chunk_length > min(size - 20, MAX_GLB_JSON_BYTES):
        raise Unrecognised("The glTF binary's first chunk is not its JSON description.")
    try:
        document = json.loads(fp.read(chunk_length).decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise Unrecognised("The glTF binary's JSON description is not valid JSON.") from None
    return Sniffed(MODEL_3D, "model/gltf-binary", "glb", _gltf_meta(document))


# --- text -----------------------------------------------------------------------------------------------------


def _decode_text(raw: bytes, *, partial: bool) -> str | None:
    """The UTF-8 text, without a byte-order mark; None when these bytes are not text."""
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        # A probe may end in the middle of a character: that alone does not make it binary.
        if not (partial and error.start >= len(raw) - 3 and error.reason == "unexpected end of data"):
            return None
        text = raw[: error.start].decode("utf-8")
    return None if _BINARY_CONTROLS.search(text) else text


def _text(fp: BinaryIO, size: int, max_text_bytes: int) -> Sniffed:
    fp.seek(0)
    probe = fp.read(TEXT_PROBE_BYTES)
    if _decode_text(probe, partial=size > len(probe)) is None:
        raise Unrecognised(
            "The content is not an image (PNG, JPEG, WebP, GIF), a video (MP4, MOV, WebM), a glTF 3D model or "
            "UTF-8 text.",
            found="unknown",
        )
    if size > max_text_bytes:
        raise TooBig(
            f"A text document is at most {max_text_bytes:,} bytes; this one has {size:,}.",
            kind=DOCUMENT,
            details={"max_bytes": max_text_bytes},
        )
    fp.seek(0)
    text = _decode_text(fp.read(size), partial=False)
    if text is None:
        raise Unrecognised("The text is not valid UTF-8 throughout, or holds binary control characters.")
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            document = json.loads(text)
        except ValueError:
            document = None
        asset = document.get("asset") if isinstance(document, dict) else None
        if isinstance(asset, dict) and "version" in asset:
            return Sniffed(MODEL_3D, "model/gltf+json", "gltf", _gltf_meta(document))
    return Sniffed(DOCUMENT, "text/plain", "txt", {"characters": len(text), "lines": text.count("\n") + 1}, text=text)
