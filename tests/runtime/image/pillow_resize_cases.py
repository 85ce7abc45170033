#!/usr/bin/env python3
"""Pillow's BICUBIC resize of every JPEG under an image folder, as the reference the resampler's
parity test checks odbatch against.

For each image, each Qwen2-VL geometry (min_pixels, max_pixels) below and the image's own mode
(RGB, or L for grey JPEGs), one line of tab-separated fields:

  path  mode  width  height  decoded_crc32  target_width  target_height
  resized_crc32  resized_rgb_crc32

Images over MAX_SOURCE_PIXELS are decoded with Pillow's draft() at a power-of-two DCT reduction,
and the test decodes the same pixels with TurboJPEG at the scale that gives their size
(decoded_crc32 proves it). resized_rgb_crc32 is convert("RGB") of the resized
image: for a grey image, the resized grey values in R, G and B.

Usage: pillow_resize_cases.py IMAGE_DIR OUT_FILE
"""
import math
import pathlib
import sys
import zlib

from PIL import Image

from qwen2vl_geometry import smart_resize

# (min_pixels, max_pixels): Qwen2-VL's defaults, a small cap that shrinks most images, and a
# large minimum that enlarges them.
GEOMETRIES = [(56 * 56, 28 * 28 * 1280), (4 * 28 * 28, 64 * 28 * 28), (256 * 28 * 28, 16384 * 28 * 28)]
MAX_SOURCE_PIXELS = 1 << 20


def main():
    image_dir = pathlib.Path(sys.argv[1])
    lines = []
    for path in sorted(image_dir.rglob("*")):
        if path.suffix.lower() not in (".jpg", ".jpeg"):
            continue
        with Image.open(path) as image:
            if image.mode not in ("RGB", "L"):
                continue
            mode = image.mode
            denominator = 1
            while (denominator < 8 and image.width * image.height // (4 * denominator * denominator)
                   >= MAX_SOURCE_PIXELS):
                denominator *= 2
            if denominator > 1:
                image.draft(mode, (math.ceil(image.width / denominator),
                                   math.ceil(image.height / denominator)))
            image.load()
            decoded_crc = zlib.crc32(image.tobytes())
            for min_pixels, max_pixels in GEOMETRIES:
                height, width = smart_resize(image.height, image.width, min_pixels, max_pixels)
                resized = image.resize((width, height), Image.BICUBIC)
                lines.append("\t".join(str(field) for field in (
                    path.relative_to(image_dir), mode, image.width, image.height,
                    decoded_crc, width, height, zlib.crc32(resized.tobytes()),
                    zlib.crc32(resized.convert("RGB").tobytes()))))
    out = pathlib.Path(sys.argv[2])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    print(f"{len(lines)} cases from {image_dir}")


if __name__ == "__main__":
    main()
