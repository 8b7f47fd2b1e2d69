"""The content sniffer on its own (workspace/sniffing.py): what each file is, from its bytes only."""

import io
import json
import struct

import pytest

from tests.support import media_samples as media
from workspace.sniffing import DOCUMENT, IMAGE, MODEL_3D, OTHER, VIDEO, TooBig, Unrecognised, declared_kinds, sniff


def sniffed(content: bytes, *, max_text_bytes: int = 1_000_000, max_pixels: int = 10_000_000):
    return sniff(io.BytesIO(content), size=len(content), max_text_bytes=max_text_bytes, max_pixels=max_pixels)


def refused(content: bytes, **kwargs) -> Unrecognised:
    with pytest.raises(Unrecognised) as caught:
        sniffed(content, **kwargs)
    return caught.value


def test_it_reads_a_videos_duration_and_size_from_its_movie_header():
    found = sniffed(media.mp4_bytes(seconds=12, size=(1920, 1080)))
    assert (found.kind, found.media_type, found.extension) == (VIDEO, "video/mp4", "mp4")
    assert found.meta == {"brand": "isom", "tracks": 1, "duration_seconds": 12.0, "width": 1920, "height": 1080}


def boxes(content: bytes) -> list[bytes]:
    """The top-level boxes of an ISO media file, as their bytes."""
    found, at = [], 0
    while at < len(content):
        length = struct.unpack(">I", content[at : at + 4])[0]
        found.append(content[at : at + length])
        at += length
    return found


def test_it_takes_a_64_bit_box_and_a_box_running_to_the_end():
    video = media.mp4_bytes()
    ftyp_length = struct.unpack(">I", video[:4])[0]
    ftyp, rest = video[:ftyp_length], video[ftyp_length:]
    # the ftyp again with a 64-bit size, and the last box (mdat) with size 0, "to the end of the file"
    large = struct.pack(">I4sQ", 1, b"ftyp", len(ftyp) + 8) + ftyp[8:]
    mdat_at = rest.rindex(b"mdat") - 4
    to_end = rest[:mdat_at] + struct.pack(">I", 0) + rest[mdat_at + 4 :]
    assert sniffed(large + to_end).kind == VIDEO


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (media.mp4_bytes()[:-5], "damaged"),  # the mdat is cut short
        (media.mp4_bytes()[:40], "damaged"),
        (media.iso_video_bytes(b"heic"), "HEIF"),
        (media.iso_video_bytes(b"avif"), "AVIF"),
        (media.mp4_bytes(handler=b"soun"), "no video track"),
        (boxes(media.mp4_bytes())[0] + b"\0\0\0\x08free" + boxes(media.mp4_bytes())[2], "no movie header"),
    ],
)
def test_it_refuses_iso_media_that_is_not_a_whole_video(content, words):
    assert words in refused(content).message


def test_it_checks_a_webm_header_and_its_segment():
    assert sniffed(media.webm_bytes()).media_type == "video/webm"
    header_only = media.webm_bytes()[: media.webm_bytes().index(bytes.fromhex("18538067"))]
    assert "no segment" in refused(header_only).message
    assert refused(media.webm_bytes(b"matroska")).found == "matroska"
    assert refused(media.webm_bytes(b"other")).found == "other"


def test_it_checks_a_glb_header_against_the_file():
    glb = media.glb_bytes()
    assert sniffed(glb).meta["gltf_version"] == "2.0"
    assert "says it is" in refused(glb + b"\0\0\0\0").message  # the length field no longer matches
    assert refused(media.glb_bytes({"asset": {"version": "1.0"}})).found == "gltf"
    binary_first = glb[:16] + struct.pack("<I", 0x004E4942) + glb[20:]  # the first chunk says BIN, not JSON
    assert "JSON description" in refused(binary_first).message


def test_json_is_a_document_unless_it_describes_a_gltf_asset():
    assert sniffed(json.dumps({"asset": "logo.png", "colour": "red"}).encode()).kind == DOCUMENT
    assert sniffed(media.gltf_text()).kind == MODEL_3D
    assert refused(media.gltf_text({"asset": {"version": "1.0"}})).found == "gltf"


def test_it_refuses_a_gltf_whose_buffers_or_images_name_uris_outside_the_file():
    # given glTF documents whose resources live elsewhere: on a server, beside the file, in an extension
    embedded = "data:application/octet-stream;base64,AAAA"
    documents = [
        {"buffers": [{"uri": "http://169.254.169.254/latest/meta-data", "byteLength": 4}]},
        {"images": [{"uri": "https://tracker.example/pixel.png"}]},
        {"buffers": [{"uri": "mesh.bin", "byteLength": 4}]},
        {"buffers": [{"uri": embedded, "byteLength": 4}], "extensions": {"X_sound": {"clips": [{"uri": "//x/a"}]}}},
        {"images": [{"uri": ["not", "a", "string"]}]},
    ]
    for extra in documents:
        document = {**media.GLTF_DOCUMENT, **extra}
        # then each is refused as a .gltf and as a .glb, naming what it refers to
        for content in (media.gltf_text(document), media.glb_bytes(document)):
            assert refused(content).found == "external_uri"
    assert "outside itself" in refused(media.gltf_text({**media.GLTF_DOCUMENT, **documents[0]})).message

    # while embedded data: URIs (any case) and a GLB's own buffer (no uri) are taken
    inline = {**media.GLTF_DOCUMENT, "buffers": [{"uri": embedded, "byteLength": 4}], "images": [{"uri": "DATA:,x"}]}
    assert sniffed(media.gltf_text(inline)).kind == MODEL_3D
    assert sniffed(media.glb_bytes({**media.GLTF_DOCUMENT, "buffers": [{"byteLength": 4}]})).kind == MODEL_3D


def test_the_procedural_generators_gltf_passes_its_own_check():
    from workspace.providers.procedural import build_gltf, style_for

    content = json.dumps(build_gltf(style_for("a lighthouse on a rock"))).encode()
    assert sniffed(content).kind == MODEL_3D


def test_text_is_utf8_without_binary_controls():
    found = sniffed("Affiches rétro ☕\r\n\tcolonnes\f".encode())
    assert (found.kind, found.text) == (DOCUMENT, "Affiches rétro ☕\r\n\tcolonnes\f")
    assert sniffed(b"\xef\xbb\xbfhello").text == "hello"
    refused(b"bell \x07 inside")
    refused("café".encode("latin-1"))


def test_a_long_text_cut_in_the_middle_of_a_character_by_the_probe_is_still_text():
    text = ("é" * 40_000).encode()  # 80,000 bytes: the 64 KiB probe ends inside a character or on its edge
    assert sniffed(text, max_text_bytes=100_000).kind == DOCUMENT
    with pytest.raises(TooBig) as caught:
        sniffed(text, max_text_bytes=50_000)
    assert (caught.value.kind, caught.value.details["max_bytes"]) == (DOCUMENT, 50_000)


def test_images_are_decoded_and_bounded_by_pixels():
    assert sniffed(media.image_bytes("GIF", frames=4)).meta["frames"] == 4
    with pytest.raises(TooBig) as caught:
        sniffed(media.png_bytes(size=(200, 100)), max_pixels=19_999)
    assert caught.value.details == {"width": 200, "height": 100, "pixels": 20_000, "max_pixels": 19_999}
    jpeg = media.image_bytes("JPEG", size=(64, 64))
    assert "damaged or truncated" in refused(jpeg[: len(jpeg) // 2]).message
    bmp = io.BytesIO()
    from PIL import Image

    Image.new("RGB", (4, 4)).save(bmp, format="BMP")
    assert refused(bmp.getvalue()).found == "unknown"  # a BMP is none of the kinds taken


def test_a_decompression_bomb_is_too_many_pixels_not_a_damaged_file():
    # given PNG and GIF headers announcing 20000×20000 pixels, past Pillow's own guard, in a few hundred bytes
    gif = bytearray(media.image_bytes("GIF", size=(8, 8)))
    gif[6:10] = struct.pack("<HH", 20_000, 20_000)  # the logical screen
    for content in (media.png_bomb_bytes(20_000, 20_000), bytes(gif)):
        # then the sniffer says how many pixels it announces and how many are taken
        with pytest.raises(TooBig) as caught:
            sniffed(content, max_pixels=40_000_000)
        assert caught.value.details == {
            "width": 20_000,
            "height": 20_000,
            "pixels": 400_000_000,
            "max_pixels": 40_000_000,
        }
        assert "400,000,000 pixels" in caught.value.message


@pytest.mark.parametrize(
    ("name", "content_type", "claims"),
    [
        ("photo.JPG", "", [IMAGE]),
        ("clip.mov", "video/quicktime", [VIDEO, VIDEO]),
        ("scene.gltf", "model/gltf+json", [MODEL_3D, MODEL_3D]),
        ("notes.md", "text/markdown; charset=utf-8", [DOCUMENT, DOCUMENT]),
        ("report.pdf", "application/pdf", [OTHER, OTHER]),
        ("README", "application/octet-stream", []),
        ("v1.2 final", "", []),  # not an extension
        ("archive.unknownext", "", []),
        ("C:\\Users\\me\\cat.png", "", [IMAGE]),
    ],
)
def test_it_reads_what_a_name_and_a_declared_type_claim(name, content_type, claims):
    assert [kind for kind, _ in declared_kinds(name, content_type)] == claims
