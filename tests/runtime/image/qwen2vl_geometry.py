"""Qwen2-VL's image geometry as its Hugging Face image processor computes it, for the reference
scripts of the image tests (each imports it from this folder)."""

import math

PATCH_SIZE = 14
MERGE_SIZE = 2
FACTOR = PATCH_SIZE * MERGE_SIZE


def smart_resize(height, width, min_pixels, max_pixels):
    """Qwen2-VL's image processor's smart_resize: sides rounded to the merge factor, the pixel
    count brought within [min_pixels, max_pixels] keeping the aspect ratio."""
    h_bar = max(FACTOR, round(height / FACTOR) * FACTOR)
    w_bar = max(FACTOR, round(width / FACTOR) * FACTOR)
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h_bar = max(FACTOR, math.floor(height / beta / FACTOR) * FACTOR)
        w_bar = max(FACTOR, math.floor(width / beta / FACTOR) * FACTOR)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / FACTOR) * FACTOR
        w_bar = math.ceil(width * beta / FACTOR) * FACTOR
    return h_bar, w_bar
