"""Small real files of every kind a person can upload, built byte by byte (no fixtures on disk).

The images are encoded by Pillow; the videos are valid container structures (an MP4/MOV with its ftyp, a
moov holding a movie header and one video track, and an mdat; a WebM EBML header and its Segment), the glTF
files carry a real asset description. They are what the sniffer must recognise, not what a player needs.
"""

import io
import json
import struct
import zlib

from PIL import Image


def image_bytes(fmt: str = "PNG", size: tuple[int, int] = (32, 24), colour=(200, 80, 40), frames: int = 1) -> bytes:
    buffer = io.BytesIO()
    first = Image.new("RGB", size, colour)
    if frames > 1:
        others = [Image.new("RGB", size, (colour[0], colour[1], (colour[2] + 40 * n) % 256)) for n in range(1, frames)]
        first.save(buffer, format=fmt, save_all=True, append_images=others, duration=100, loop=0)
    else:
        first.save(buffer, format=fmt)
    return buffer.getvalue()


def png_bytes(**kwargs) -> bytes:
    return image_bytes("PNG", **kwargs)


def _png_chunk(kind: bytes, payload: bytes) -> bytes:
    return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))


def png_bomb_bytes(width: int, height: int) -> bytes:
    """A PNG of a few hundred bytes whose header announces width × height RGB pixels (one deflated row of them):
    decoding it whole would take width × height × 3 bytes."""
    row = zlib.compress(b"\0" * (1 + 3 * width), 9)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", header) + _png_chunk(b"IDAT", row) + _png_chunk(b"IEND", b"")


def _box(kind: bytes, payload: bytes) -> bytes:
    return struct.pack(">I4s", 8 + len(payload), kind) + payload


def iso_video_bytes(
    brand: bytes = b"isom", *, handler: bytes = b"vide", seconds: int = 5, size=(640, 360), mdat: bytes = b"\0" * 64
) -> bytes:
    """An MP4 (or, with brand b"qt  ", a MOV): ftyp, moov (mvhd, one track of `handler`), mdat."""
    ftyp = _box(b"ftyp", brand + struct.pack(">I", 512) + brand + b"mp41")
    timescale = 1000
    matrix = struct.pack(">9I", 0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000)
    mvhd = _box(
        b"mvhd",
        struct.pack(">I4I", 0, 0, 0, timescale, seconds * timescale)
        + struct.pack(">IH10x", 0x10000, 0x100)
        + matrix
        + b"\0" * 24
        + struct.pack(">I", 2),
    )
    tkhd = _box(
        b"tkhd",
        struct.pack(">I5I", 3, 0, 0, 1, 0, seconds * timescale)
        + b"\0" * 8
        + struct.pack(">hhh2x", 0, 0, 0)
        + matrix
        + struct.pack(">II", size[0] << 16, size[1] << 16),
    )
    hdlr = _box(b"hdlr", struct.pack(">II", 0, 0) + handler + b"\0" * 12 + b"VideoHandler\0")
    trak = _box(b"trak", tkhd + _box(b"mdia", hdlr))
    return ftyp + _box(b"moov", mvhd + trak) + _box(b"mdat", mdat)


def mp4_bytes(**kwargs) -> bytes:
    return iso_video_bytes(b"isom", **kwargs)


def mov_bytes(**kwargs) -> bytes:
    return iso_video_bytes(b"qt  ", **kwargs)


def _ebml(element_id: int, payload: bytes) -> bytes:
    id_bytes = element_id.to_bytes((element_id.bit_length() + 7) // 8, "big")
    return id_bytes + bytes([0x80 | len(payload)]) + payload  # a one-byte size: payloads under 127 bytes


def webm_bytes(doctype: bytes = b"webm") -> bytes:
    header = _ebml(
        0x1A45DFA3,
        _ebml(0x4286, b"\x01") + _ebml(0x42F7, b"\x01") + _ebml(0x42F2, b"\x04") + _ebml(0x42F3, b"\x08")
        + _ebml(0x4282, doctype) + _ebml(0x4287, b"\x04") + _ebml(0x4285, b"\x02"),
    )  # fmt: skip
    info = _ebml(0x1549A966, _ebml(0x2AD7B1, b"\x0f\x42\x40"))
    segment = bytes.fromhex("18538067") + bytes([0x80 | len(info)]) + info
    return header + segment


GLTF_DOCUMENT = {
    "asset": {"version": "2.0", "generator": "Lomote tests"},
    "scenes": [{"nodes": [0]}],
    "nodes": [{"name": "Cube"}],
}


def gltf_text(document: dict | None = None) -> bytes:
    return json.dumps(document or GLTF_DOCUMENT).encode()


def glb_bytes(document: dict | None = None, *, version: int = 2) -> bytes:
    payload = json.dumps(document or GLTF_DOCUMENT).encode()
    payload += b" " * (-len(payload) % 4)
    chunk = struct.pack("<II", len(payload), 0x4E4F534A) + payload
    return struct.pack("<4sII", b"glTF", version, 12 + len(chunk)) + chunk
