#!/usr/bin/env python3
"""PNG and WebP variants of the dataset's photos, and Pillow's pixels for them, as the reference
the PNG/WebP parity test checks odbatch against.

From about 24 of the dataset's JPEGs (one per distinct size and mode, grey included; sides cut
to multiples of 28 after shrinking the largest to 640 pixels, so that a geometry without limits
keeps them whole), it writes into OUT_DIR:
  PNG: RGB, RGB with tRNS, RGBA (a diagonal alpha gradient), LA, L, 1-bit grey, interlaced 2-bit grey,
  P (256 colours), P with tRNS (16 colours, 4-bit indices), 16-bit RGB (with a gAMA chunk),
  16-bit grey (values 0..510), 16-bit LA, interlaced (Adam7) RGB, animated (2 frames);
  WebP: lossless, lossy, lossy with alpha, animated (2 frames).
Pillow cannot write 16-bit RGB or LA, 2-bit grey or interlaced PNGs, so write_png() below does.

OUT_DIR/cases.tsv has one line per file and geometry, tab-separated:
  file  width  height  rgb_crc32  min_pixels  max_pixels  target_width  target_height
  resized_crc32
where rgb_crc32 is of Image.open(file).convert("RGB") (what Hugging Face processors start from)
and resized_crc32 of that resized with Pillow's BICUBIC to smart_resize's size.

Usage: pillow_png_webp_cases.py IMAGE_DIR OUT_DIR
"""
import math
import pathlib
import struct
import sys
import zlib

import numpy
from PIL import Image

from qwen2vl_geometry import FACTOR, smart_resize

# (min_pixels, max_pixels): no limits (the whole image), Qwen2-VL's defaults, a small cap.
GEOMETRIES = [(FACTOR * FACTOR, 1 << 30), (56 * 56, 28 * 28 * 1280), (4 * 28 * 28, 64 * 28 * 28)]
PHOTOS = 24
LONGEST_SIDE = 512
ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2),
         (0, 1, 1, 2)]  # (x0, y0, dx, dy) of each pass


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def write_png(path, color_type, bit_depth, samples, interlaced=False, extra=b""):
    """A PNG of `samples` (a height x width x channels array of uint8 or big-endian uint16),
    every scanline with filter type 0."""
    height, width = samples.shape[:2]

    def scanlines(x0, y0, dx, dy):
        part = samples[y0::dy, x0::dx]
        if part.size == 0:
            return b""
        rows = part.reshape(part.shape[0], -1).view(numpy.uint8)
        if bit_depth < 8:  # grey samples packed into bytes, most significant bits first
            per_byte = 8 // bit_depth
            padded = numpy.zeros((rows.shape[0], -(-rows.shape[1] // per_byte) * per_byte),
                                 numpy.uint8)
            padded[:, :rows.shape[1]] = rows
            rows = numpy.zeros((rows.shape[0], padded.shape[1] // per_byte), numpy.uint8)
            for i in range(per_byte):
                rows |= padded[:, i::per_byte] << (8 - bit_depth * (i + 1))
        return numpy.hstack([numpy.zeros((rows.shape[0], 1), numpy.uint8), rows]).tobytes()

    raw = b"".join(scanlines(*p) for p in ADAM7) if interlaced else scanlines(0, 0, 1, 1)
    header = struct.pack(">IIBBBBB", width, height, bit_depth, color_type, 0, 0, int(interlaced))
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + extra +
                     chunk(b"IDAT", zlib.compress(raw, 1)) + chunk(b"IEND", b""))


def pick_photos(image_dir):
    """One photo per (mode, size), spread over the folders, up to PHOTOS."""
    seen = {}
    for path in sorted(image_dir.rglob("*.jpg")):
        with Image.open(path) as image:
            if image.mode in ("RGB", "L"):
                seen.setdefault((image.mode, image.size), path)
    photos = list(seen.values())
    step = max(1, len(photos) / PHOTOS)
    return [photos[int(i * step)] for i in range(min(PHOTOS, len(photos)))]


def prepared(path):
    image = Image.open(path)
    image.load()
    scale = max(1, math.ceil(max(image.size) / LONGEST_SIDE))
    if scale > 1:
        image = image.reduce(scale)
    width, height = image.width // FACTOR * FACTOR, image.height // FACTOR * FACTOR
    return image.crop((0, 0, max(FACTOR, width), max(FACTOR, height)))


def alpha_gradient(size):
    width, height = size
    y, x = numpy.mgrid[0:height, 0:width]
    return Image.fromarray((255 * (x + y) // (width + height - 2)).astype(numpy.uint8), "L")


def variants(stem, image, out_dir):
    """Writes every variant of one photo; returns the files' names."""
    rgb = image.convert("RGB")
    grey = image.convert("L")
    alpha = alpha_gradient(image.size)
    names = []

    def save(suffix, picture, **options):
        name = f"{stem}.{suffix}"
        if suffix.endswith(".png"):
            options.setdefault("compress_level", 1)  # fast: the fixture runs in every test run
        picture.save(out_dir / name, **options)
        names.append(name)

    rgba = rgb.copy()
    rgba.putalpha(alpha)
    la = grey.copy()
    la.putalpha(alpha)
    save("rgb.png", rgb)
    save("rgba.png", rgba)
    save("la.png", la)
    save("l.png", grey)
    save("p.png", rgb.quantize(256, Image.Quantize.FASTOCTREE))
    save("bilevel.png", grey.convert("1"))
    save("rgb-trns.png", rgb, transparency=tuple(rgb.getpixel((0, 0))))
    save("p-trns.png", rgb.quantize(16, Image.Quantize.FASTOCTREE), transparency=0)
    second = rgb.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    save("animated.png", rgb, save_all=True, append_images=[second])

    rgb_array = numpy.asarray(rgb)
    # The low bytes vary, so that taking the high byte is what is checked.
    noise = numpy.arange(rgb_array.size, dtype=numpy.uint16).reshape(rgb_array.shape) & 0xFF
    rgb16 = (rgb_array.astype(numpy.uint16) << 8 | noise).astype(">u2")
    grey16 = (numpy.asarray(grey).astype(numpy.uint16) * 2).astype(">u2")
    grey_alpha = numpy.stack([numpy.asarray(grey), numpy.asarray(alpha)], axis=-1)
    la16 = (grey_alpha.astype(numpy.uint16) << 8 | noise[..., :2]).astype(">u2")
    gamma = chunk(b"gAMA", struct.pack(">I", 45455))
    for name, args in ((f"{stem}.rgb16.png", (2, 16, rgb16, False, gamma)),
                       (f"{stem}.grey16.png", (0, 16, grey16)),
                       (f"{stem}.la16.png", (4, 16, la16)),
                       (f"{stem}.grey2-interlaced.png", (0, 2, numpy.asarray(grey) >> 6, True)),
                       (f"{stem}.interlaced.png", (2, 8, rgb_array, True))):
        write_png(out_dir / name, *args)
        names.append(name)

    save("lossless.webp", rgb, lossless=True, method=0)
    save("lossy.webp", rgb, quality=80)
    save("alpha.webp", rgba, quality=80)
    save("animated.webp", rgb, save_all=True, append_images=[second], quality=80)
    return names


def main():
    image_dir = pathlib.Path(sys.argv[1])
    out_dir = pathlib.Path(sys.argv[2])
    out_dir.mkdir(parents=True, exist_ok=True)
    lines = []
    for index, path in enumerate(pick_photos(image_dir)):
        stem = f"{index:02d}-{path.stem}"
        for name in variants(stem, prepared(path), out_dir):
            with Image.open(out_dir / name) as image:
                rgb = image.convert("RGB")
            rgb_crc = zlib.crc32(rgb.tobytes())
            for min_pixels, max_pixels in GEOMETRIES:
                height, width = smart_resize(rgb.height, rgb.width, min_pixels, max_pixels)
                resized = rgb.resize((width, height), Image.BICUBIC)
                lines.append("\t".join(str(field) for field in (
                    name, rgb.width, rgb.height, rgb_crc, min_pixels, max_pixels, width, height,
                    zlib.crc32(resized.tobytes()))))
    (out_dir / "cases.tsv").write_text("\n".join(lines) + "\n")
    print(f"{len(lines)} cases in {out_dir}")


if __name__ == "__main__":
    main()
