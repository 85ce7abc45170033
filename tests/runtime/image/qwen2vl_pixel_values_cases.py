#!/usr/bin/env python3
"""Qwen2-VL's pixel_values for real JPEGs, computed as Hugging Face's Qwen2VLImageProcessor
computes them (transformers' numpy image processor, reimplemented here step by step with numpy
and Pillow): the reference odbatch's PixelValuesWriter and ImageProcessor are checked against.

For each case: convert("RGB"), resize with Pillow's BICUBIC to smart_resize's size, rescale
(float64 multiply, cast to float32), normalise with float32 mean and std, repeat the image to fill
temporal_patch_size frames and patchify:
  reshape (grid_t, T, C, grid_h/merge, merge, P, grid_w/merge, merge, P),
  transpose (0, 3, 6, 4, 7, 2, 1, 5, 8), reshape (grid_t*grid_h*grid_w, C*T*P*P).
The cases: one JPEG of each (mode, size) of the dataset plus three more grey ones, each at a
small geometry, and the four smallest also at Qwen2-VL's default geometry (an enlargement, which
odbatch decodes at full scale). Images over MAX_SOURCE_PIXELS are decoded with Pillow's draft()
at a power-of-two DCT reduction (the test decodes the same pixels, decoded_crc32 proves it).

Writes OUT_DIR/cases.tsv, one line a case:
  path  mode  decoded_width  decoded_height  decoded_crc32  min_pixels  max_pixels
  target_width  target_height  grid_h  grid_w  first_value  values
and OUT_DIR/float32.bin (every case's values, little-endian float32, in case order) and
OUT_DIR/bfloat16.bin (the same values rounded to bfloat16, to nearest even, as torch does).

Usage: qwen2vl_pixel_values_cases.py IMAGE_DIR OUT_DIR
"""
import math
import pathlib
import sys
import zlib

import numpy as np
from PIL import Image

from qwen2vl_geometry import MERGE_SIZE, PATCH_SIZE, smart_resize

TEMPORAL_PATCH_SIZE = 2
RESCALE_FACTOR = 1 / 255
IMAGE_MEAN = [0.48145466, 0.4578275, 0.40821073]  # OpenAI CLIP's, as Qwen2-VL's preprocessor
IMAGE_STD = [0.26862954, 0.26130258, 0.27577711]
SMALL_GEOMETRY = (56 * 56, 16 * 28 * 28)
DEFAULT_GEOMETRY = (56 * 56, 28 * 28 * 1280)
EXTRA_GREY = 3
MAX_SOURCE_PIXELS = 1 << 20


def rescale(image, scale):
    return (image.astype(np.float64) * scale).astype(np.float32)


def normalize(image, mean, std):
    mean = np.array(mean, dtype=image.dtype)
    std = np.array(std, dtype=image.dtype)
    return (image - mean) / std  # channels last


def pixel_values(rgb_image, height, width):
    return patch_values(rgb_image.resize((width, height), Image.BICUBIC))


def patch_values(resized_rgb):
    """The processor's values of an image already resized to its target size."""
    resized = np.array(resized_rgb)
    height, width = resized.shape[:2]
    image = normalize(rescale(resized, RESCALE_FACTOR), IMAGE_MEAN, IMAGE_STD)
    patches = image.transpose(2, 0, 1)[np.newaxis]  # (frames, C, H, W)
    patches = np.concatenate([patches] * TEMPORAL_PATCH_SIZE, axis=0)
    channel = patches.shape[1]
    grid_t = patches.shape[0] // TEMPORAL_PATCH_SIZE
    grid_h, grid_w = height // PATCH_SIZE, width // PATCH_SIZE
    patches = patches.reshape(grid_t, TEMPORAL_PATCH_SIZE, channel, grid_h // MERGE_SIZE,
                              MERGE_SIZE, PATCH_SIZE, grid_w // MERGE_SIZE, MERGE_SIZE,
                              PATCH_SIZE)
    patches = patches.transpose(0, 3, 6, 4, 7, 2, 1, 5, 8)
    flat = patches.reshape(grid_t * grid_h * grid_w,
                           channel * TEMPORAL_PATCH_SIZE * PATCH_SIZE * PATCH_SIZE)
    return grid_h, grid_w, np.ascontiguousarray(flat, dtype=np.float32)


def to_bfloat16(values):
    bits = values.view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


def chosen_images(image_dir):
    by_shape = {}
    extra_grey = []
    for path in sorted(image_dir.rglob("*")):
        if path.suffix.lower() not in (".jpg", ".jpeg"):
            continue
        with Image.open(path) as image:
            shape = (image.mode, image.width, image.height)
        if shape[0] not in ("RGB", "L"):
            continue
        if shape not in by_shape:
            by_shape[shape] = path
        elif shape[0] == "L" and len(extra_grey) < EXTRA_GREY:
            extra_grey.append((shape, path))
    chosen = sorted(by_shape.items(), key=lambda item: (item[0][1] * item[0][2], str(item[1])))
    return chosen + extra_grey


def main():
    image_dir = pathlib.Path(sys.argv[1])
    out_dir = pathlib.Path(sys.argv[2])
    out_dir.mkdir(parents=True, exist_ok=True)
    lines = []
    first = 0
    with open(out_dir / "float32.bin", "wb") as floats, open(out_dir / "bfloat16.bin", "wb") as halves:
        for index, ((mode, _, _), path) in enumerate(chosen_images(image_dir)):
            geometries = [SMALL_GEOMETRY] + ([DEFAULT_GEOMETRY] if index < 4 else [])
            with Image.open(path) as image:
                denominator = 1
                while (denominator < 8 and image.width * image.height //
                       (4 * denominator * denominator) >= MAX_SOURCE_PIXELS):
                    denominator *= 2
                if denominator > 1:
                    image.draft(mode, (math.ceil(image.width / denominator),
                                       math.ceil(image.height / denominator)))
                image.load()
                decoded_crc = zlib.crc32(image.tobytes())
                rgb = image.convert("RGB")
                for min_pixels, max_pixels in geometries:
                    height, width = smart_resize(rgb.height, rgb.width, min_pixels, max_pixels)
                    grid_h, grid_w, values = pixel_values(rgb, height, width)
                    floats.write(values.astype("<f4").tobytes())
                    halves.write(to_bfloat16(values).astype("<u2").tobytes())
                    lines.append("\t".join(str(field) for field in (
                        path.relative_to(image_dir), mode, rgb.width, rgb.height, decoded_crc,
                        min_pixels, max_pixels, width, height, grid_h, grid_w, first,
                        values.size)))
                    first += values.size
    (out_dir / "cases.tsv").write_text("\n".join(lines) + "\n")
    print(f"{len(lines)} cases, {first} values, from {image_dir}")


if __name__ == "__main__":
    main()
