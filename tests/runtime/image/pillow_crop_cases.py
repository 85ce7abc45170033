#!/usr/bin/env python3
"""Pillow's crop then BICUBIC resize of JPEGs under an image folder, the reference for decoding
with a record stage's crop box: for the first 24 JPEGs of at most 1 MP (decoded at full size, no
DCT reduction), three crops each, drawn from a seeded generator, resized to Qwen2-VL's
smart_resize of the crop's size (default min_pixels and max_pixels); and the same for the first
four of them written as PNG and as lossless WebP into OUT_FILE's folder (both decode to the
JPEG's pixels). One tab-separated line per case:

  path  x  y  crop_width  crop_height  target_width  target_height  rgb_crc32

path is relative to IMAGE_DIR, or absolute for a PNG or WebP written here; rgb_crc32 is the
CRC-32 of convert("RGB") of the resized crop.

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


def crop_cases(image, name, random_crops):
    """Three seeded crops of `image`, each as its case line."""
    lines = []
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
            name, x, y, width, height, target_width, target_height, crc)))
    return lines


def main():
    image_dir = pathlib.Path(sys.argv[1])
    out_file = pathlib.Path(sys.argv[2])
    random_crops = random.Random(20261207)
    lines = []
    jpegs = written = 0
    for path in sorted(image_dir.rglob("*")):
        if jpegs == IMAGES:
            break
        if path.suffix.lower() not in (".jpg", ".jpeg"):
            continue
        with Image.open(path) as image:
            if image.mode not in ("RGB", "L") or image.width * image.height > 1 << 20:
                continue
            image.load()
            lines += crop_cases(image, path.relative_to(image_dir), random_crops)
            jpegs += 1
            if written < 4:
                rgb = image.convert("RGB")
                for suffix, options in ((".png", {}), (".webp", {"lossless": True})):
                    encoded = out_file.parent / f"crop-{written}{suffix}"
                    rgb.save(encoded, **options)
                    with Image.open(encoded) as decoded:
                        decoded.load()
                        lines += crop_cases(decoded, encoded, random_crops)
                written += 1
    out_file.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
