"""Makes the four-component JPEGs of the CMYK decoding tests and Pillow's pixels for them.

Run with Debian 12's python3 and python3-pil (Pillow 9.4) from this directory:
    /usr/bin/python3 make_cmyk_jpegs.py
It rewrites every .jpg and .rgb file here; the tests read them and never run Python.

- cmyk_84x56.jpg: written by Pillow from a CMYK image, so plain CMYK with an Adobe APP14 marker
  (transform 0) and inverted samples, as Photoshop writes them. Without the marker, Pillow
  decodes it to the same pixels (checked here), as the tests expect of the decoder too.
- ycck_84x56.jpg and ycck_168x112.jpg: written by TurboJPEG's tjCompress2 from packed CMYK (through
  ctypes): YCCK (Adobe transform 2), the chroma at 4:2:0, samples not inverted.

Expected pixels (.rgb: packed RGB, row-major) are what Hugging Face's image processors start
from, Image.open(path).convert("RGB"), resized with BICUBIC where the target size differs:
- cmyk_84x56.rgb, ycck_84x56.rgb: the full decode (84x56 is its own target size);
- cmyk_84x56_to_140x84.rgb: the full decode resized to 140x84 (the target for min_pixels 10584);
- ycck_168x112_draft_half.rgb: Image.draft("RGB", (84, 56)) first, i.e. libjpeg's 1/2 DCT
  scaling, which is what the decoder does for the target 84x56 (max_pixels 4704).
"""

import ctypes
import io
from pathlib import Path

from PIL import Image

HERE = Path(__file__).resolve().parent
TJPF_CMYK = 11
TJSAMP_420 = 2


def cmyk_pattern(width, height):
    """Every channel varies differently, so the conversion meets many (ink, black) pairs."""
    pixels = bytearray()
    for y in range(height):
        for x in range(width):
            pixels += bytes((
                x * 255 // (width - 1),
                y * 255 // (height - 1),
                40 if ((x // 8) + (y // 8)) % 2 else 220,
                (x + y) * 255 // (width + height - 2),
            ))
    return bytes(pixels)


def tj_compress_cmyk(cmyk, width, height, quality=90):
    turbojpeg = ctypes.CDLL("libturbojpeg.so.0")
    turbojpeg.tjInitCompress.restype = ctypes.c_void_p
    turbojpeg.tjGetErrorStr2.restype = ctypes.c_char_p
    handle = ctypes.c_void_p(turbojpeg.tjInitCompress())
    jpeg = ctypes.POINTER(ctypes.c_ubyte)()
    size = ctypes.c_ulong(0)
    status = turbojpeg.tjCompress2(handle, cmyk, width, 0, height, TJPF_CMYK, ctypes.byref(jpeg),
                                   ctypes.byref(size), TJSAMP_420, quality, 0)
    if status != 0:
        raise RuntimeError(turbojpeg.tjGetErrorStr2(handle).decode())
    data = ctypes.string_at(jpeg, size.value)
    turbojpeg.tjFree(jpeg)
    turbojpeg.tjDestroy(handle)
    return data


def adobe_segment(data):
    """Offset and length (marker included) of the Adobe APP14 segment before the first scan."""
    at = 2
    while data[at + 1] != 0xDA:
        length = 2 + (data[at + 2] << 8 | data[at + 3])
        if data[at + 1] == 0xEE and data[at + 4:at + 9] == b"Adobe":
            return at, length
        at += length
    raise ValueError("no Adobe marker")


def adobe_transform(path):
    data = path.read_bytes()
    at, _ = adobe_segment(data)
    return data[at + 15]


def without_adobe_marker(path):
    data = path.read_bytes()
    at, length = adobe_segment(data)
    return data[:at] + data[at + length:]


def main():
    width, height = 84, 56
    cmyk = HERE / "cmyk_84x56.jpg"
    Image.frombytes("CMYK", (width, height), cmyk_pattern(width, height)).save(
        cmyk, "JPEG", quality=90)
    ycck = HERE / "ycck_84x56.jpg"
    ycck.write_bytes(tj_compress_cmyk(cmyk_pattern(width, height), width, height))
    large_ycck = HERE / "ycck_168x112.jpg"
    large_ycck.write_bytes(tj_compress_cmyk(cmyk_pattern(168, 112), 168, 112))
    assert adobe_transform(cmyk) == 0 and adobe_transform(ycck) == 2

    for path in (cmyk, ycck):
        with Image.open(path) as image:
            assert image.mode == "CMYK" and image.tile[0][3][0] == "CMYK;I"
            (HERE / (path.stem + ".rgb")).write_bytes(image.convert("RGB").tobytes())
    with Image.open(io.BytesIO(without_adobe_marker(cmyk))) as image:
        assert "adobe" not in image.info
        assert image.convert("RGB").tobytes() == (HERE / "cmyk_84x56.rgb").read_bytes()
    with Image.open(cmyk) as image:
        resized = image.convert("RGB").resize((140, 84), Image.BICUBIC)
        (HERE / "cmyk_84x56_to_140x84.rgb").write_bytes(resized.tobytes())
    with Image.open(large_ycck) as image:
        image.draft("RGB", (84, 56))
        assert image.size == (84, 56)
        (HERE / "ycck_168x112_draft_half.rgb").write_bytes(image.convert("RGB").tobytes())


if __name__ == "__main__":
    main()
