#!/usr/bin/env python3
"""Pillow's crop then BICUBIC resize of JPEGs under an image folder, the reference for decoding
with a record stage's crop box: for the first 24 JPEGs of at most 1 MP (decoded at full size, no
DCT reduction), three crops each, drawn from a seeded generator, resized to Qwen2-VL's
smart_resize of the crop's size (default min_pixels and max_pixels). One tab-separated line per
case:

  path  x  y  crop_width  crop_height  target_width  target_height  rgb_crc32

rgb_crc32 is the CRC-32 of convert("RGB") of the resized crop.

Usage: pillow_crop_cases.py IMAGE_DIR OUT_FILE
"""
import pathlib
import random
import sys
import zlib

from PIL import Image

from qwen2vl_geometry import smart_resize

MIN_PIXELS, MAX_PIXELS = 56 * 56, 28 * 28 * 1280
IMAGES = 24


def main():
    image_dir = pathlib.Path(sys.argv[1])
    random_crops = random.Random(20261207)
    lines = []
    for path in sorted(image_dir.rglob("*")):
        if len(lines) == 3 * IMAGES:
            break
        if path.suffix.lower() not in (".jpg", ".jpeg"):
            continue
        with Image.open(path) as image:
            if image.mode not in ("RGB", "L") or image.width * image.height > 1 << 20:
                continue
            image.load()
            for _ in range(3):
                width = random_crops.randint(max(1, image.width // 4), image.width)
                height = random_crops.randint(max(1, image.height // 4), image.height)
                x = random_crops.randint(0, image.width - width)
                y = random_crops.randint(0, image.height - height)
                target_height, target_width = smart_resize(height, width, MIN_PIXELS, MAX_PIXELS)
                cropped = image.crop((x, y, x + width, y + height))
                resized = cropped.resize((target_width, target_height), Image.BICUBIC)
                crc = zlib.crc32(resized.convert("RGB").tobytes())
                lines.append("\t".join(str(v) for v in (
                    path.relative_to(image_dir), x, y, width, height, target_width, target_height,
                    crc)))
    pathlib.Path(sys.argv[2]).write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
