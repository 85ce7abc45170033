#!/usr/bin/env python3
"""What Hugging Face's Qwen2VLImageProcessor gives for every JPEG photo of the dataset: Pillow's
full decode (no draft()), convert("RGB"), BICUBIC resize to smart_resize's size, and the
processor's pixel_values (qwen2vl_pixel_values_cases.patch_values, the numpy reimplementation),
at Qwen2-VL's default max_pixels and at the real preprocessor_config.json's (12,845,056). The
test checks that odbatch's default decode gives these exact bytes.

Writes OUT_FILE, one line a case:
  path  min_pixels  max_pixels  target_width  target_height  rgb_crc32  float32_crc32
(rgb: the resized uint8 RGB; float32: the little-endian float32 pixel_values).

Usage: processor_exact_pixels_cases.py IMAGE_DIR OUT_FILE
"""
import pathlib
import sys
import zlib

from PIL import Image

from qwen2vl_geometry import smart_resize
from qwen2vl_pixel_values_cases import patch_values

# Qwen2-VL's default geometry, and the max_pixels its preprocessor_config.json ships.
GEOMETRIES = [(56 * 56, 28 * 28 * 1280), (56 * 56, 12845056)]


def main():
    image_dir = pathlib.Path(sys.argv[1])
    lines = []
    for path in sorted(image_dir.rglob("*")):
        if path.suffix.lower() not in (".jpg", ".jpeg"):
            continue
        with Image.open(path) as image:
            if image.mode not in ("RGB", "L"):
                continue
            rgb = image.convert("RGB")
        for min_pixels, max_pixels in GEOMETRIES:
            height, width = smart_resize(rgb.height, rgb.width, min_pixels, max_pixels)
            resized = rgb.resize((width, height), Image.BICUBIC)
            _, _, values = patch_values(resized)
            lines.append("\t".join(str(field) for field in (
                path.relative_to(image_dir), min_pixels, max_pixels, width, height,
                zlib.crc32(resized.tobytes()), zlib.crc32(values.astype("<f4").tobytes()))))
    out = pathlib.Path(sys.argv[2])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    print(f"{len(lines)} cases from {image_dir}")


if __name__ == "__main__":
    main()
