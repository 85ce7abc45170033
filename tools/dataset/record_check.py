"""A reference check of one JSONL line of an SFT dataset: the verdict a loader should reach.

Returns None for a usable record, "blank_line" for a line without a record, or the reason
category of a rejection, named as the odbatch pipeline names it (see docs/dataset.md). Checks run
in a fixed order, so a record with a single defect gets that defect's category.
"""

import json
from pathlib import Path, PurePosixPath

from conversation import IMAGE_PLACEHOLDER
from jpeg_header import SOI, JpegError, parse_jpeg_header

MAX_PIXELS = 100_000_000  # far above the largest real photo here (5312x2988)
MAX_CHARACTERS = 100_000  # far above the longest real sample here (about 9,000)


# Per style: the list's key, each turn's role and text keys, the roles, the answering role.
_STYLES = (
    ("conversations", "from", "value", {"system", "human", "gpt"}, "gpt"),
    ("messages", "role", "content", {"system", "user", "assistant"}, "assistant"),
)


def _image_verdict(path: object, images_dir: Path) -> str | None:
    if not isinstance(path, str):
        return "wrong_type"
    relative = PurePosixPath(path)
    if relative.is_absolute() or ".." in relative.parts:
        return "bad_image_path"
    file = images_dir / relative
    if not file.is_file():
        return "missing_file"
    data = file.read_bytes()
    if not data.startswith(SOI):
        return "unsupported"  # the dataset's images are JPEGs: this is its GIF named .jpg
    try:
        header = parse_jpeg_header(data, str(file))
    except JpegError:
        return "corrupt"
    if header.width * header.height > MAX_PIXELS:
        return "pixel_bomb"
    return None


def check_line(line: bytes, images_dir: Path) -> str | None:
    if not line.strip():
        return "blank_line"
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return "invalid_utf8"
    try:
        record = json.loads(text)
    except json.JSONDecodeError:
        return "malformed_json"
    if not isinstance(record, dict):
        return "not_an_object"
    style = next((style for style in _STYLES if style[0] in record), None)
    if style is None:
        return "missing_field"
    list_key, role_key, text_key, roles, answer_role = style
    turns = record[list_key]
    if not isinstance(turns, list):
        return "wrong_type"
    if not turns:
        return "empty_conversation"
    for turn in turns:
        if not isinstance(turn, dict) or not isinstance(turn.get(text_key), str):
            return "wrong_type"
        if turn.get(role_key) not in roles:
            return "unknown_role"
        if not turn[text_key].strip():
            return "empty_content"
    if not any(turn[role_key] == answer_role for turn in turns):
        return "no_assistant_turn"

    images = [record["image"]] if "image" in record else record.get("images", [])
    if not isinstance(images, list):
        return "wrong_type"
    placeholders = sum(turn[text_key].count(IMAGE_PLACEHOLDER) for turn in turns)
    # Without any placeholder, the images go before the first user message (LLaVA's convention).
    if placeholders and placeholders != len(images):
        return "placeholder_mismatch"
    for path in images:
        verdict = _image_verdict(path, images_dir)
        if verdict:
            return verdict
    if sum(len(turn[text_key]) for turn in turns) > MAX_CHARACTERS:
        return "over_length"
    return None
