"""Builds DEST/dirty: dirty.jsonl mixes good records with at least one line of every defect a
loader must reject; images/ holds what they reference (including a truncated JPEG, a PNG named
.jpg and two pixel bombs); EXPECTED.json gives every 1-based line's verdict: good, bad with a
reason category, or ignored (a blank line holds no record). The categories are the names the
odbatch pipeline reports (its record, tokenizer and image reasons).

Usage: build_dirty.py SFT_DIR IMAGES_DIR EXTRACT_DIR OUT_DIR
"""

import gzip
import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from jpeg_header import JpegError, parse_jpeg_header
from package_paths import FAQ_GZ, TRUNCATED_JPEG
from stable_choice import stable_hash

# A valid 1x1 GIF89a: a format the loader does not decode (it reads JPEG, PNG and WebP by their
# bytes, whatever the file is called).
ONE_PIXEL_GIF = bytes.fromhex(
    "474946383961010001008000000000ffffff21f90401000000002c00000000010001000002024401003b")

PIXEL_BOMB_SIZE = 60000
OVER_LENGTH_CHARS = 200_000
GOOD_SHAREGPT_TEXT = 16
GOOD_SHAREGPT_IMAGE = 14
GOOD_OPENAI = 20
BLANK_LINES = {3: b"", 20: b"  \t"}  # line number -> content: empty and whitespace-only
# Other reasons a correct loader may fairly give: a strict JSON parser rejects invalid UTF-8 as
# malformed JSON, and an escaping path may be refused by the image reader (bad_path) or not be
# found by a loader confined to its images directory (missing_file).
ALSO_ACCEPTED = {
    "invalid_utf8": ["malformed_json"],
    "bad_image_path": ["bad_path", "missing_file"],
}
PIXEL_BOMB_SOURCES = {
    "bombs/pixel_bomb_sof0.jpg": "dlib/johns/John_Simm/000288_00470387.jpg",  # baseline
    "bombs/pixel_bomb_sof2.jpg": "dlib/faces/Tom_Cruise_avp_2014_4.jpg",  # progressive
}
# Real images the placeholder cases refer to.
PLACEHOLDER_IMAGES = ("skimage/rocket.jpg", "sklearn/china.jpg")


@dataclass(frozen=True)
class Defect:
    """A questionable line; `reason` None marks an edge case a loader must accept."""

    line: bytes
    reason: str | None
    detail: str


def _json(record: object) -> bytes:
    return json.dumps(record, ensure_ascii=False).encode("utf-8")


def _sharegpt(id_: str, turns: list[tuple[str, object]], **images: object) -> bytes:
    conversation = [{"from": role, "value": value} for role, value in turns]
    return _json({"id": id_, "conversations": conversation, **images})


def _pixel_bomb(source: bytes, name: str) -> bytes:
    """The source JPEG with only its frame header's height and width changed."""
    header = parse_jpeg_header(source, name)
    patched = bytearray(source)
    size = PIXEL_BOMB_SIZE.to_bytes(2, "big")
    patched[header.frame_offset + 5 : header.frame_offset + 9] = size + size
    bomb = parse_jpeg_header(bytes(patched), name)
    if (bomb.width, bomb.height) != (PIXEL_BOMB_SIZE, PIXEL_BOMB_SIZE):
        raise SystemExit(f"dirty: patching {name} gave {bomb.width}x{bomb.height}")
    return bytes(patched)


def _write_defective_images(images: Path, source_images: Path, extract: Path) -> None:
    truncated = extract / TRUNCATED_JPEG
    try:
        parse_jpeg_header(truncated.read_bytes(), str(truncated))
    except JpegError:
        pass
    else:
        raise SystemExit(f"dirty: {truncated} parses as a complete JPEG; expected it truncated")
    for directory in ("skimage", "bombs"):
        (images / directory).mkdir(parents=True, exist_ok=True)
    shutil.copy2(truncated, images / "skimage/truncated.jpg")
    for bomb, source in PIXEL_BOMB_SOURCES.items():
        (images / bomb).write_bytes(_pixel_bomb((source_images / source).read_bytes(), source))
    (images / "bombs/pixel_gif_named.jpg").write_bytes(ONE_PIXEL_GIF)


def _defects(long_answer: str) -> list[Defect]:
    ask = ("human", "<image>\nWhat are the dimensions of this image?")
    answer = ("gpt", "It is 150 pixels wide and 150 pixels tall.")
    hello = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]
    bomb = f"header patched to {PIXEL_BOMB_SIZE}x{PIXEL_BOMB_SIZE}"
    return [
        Defect(b'{"id": "dirty-unterminated", "conversations": [{"from": "human", "value": '
               b'"What is Debian?"}, {"from": "gpt", "value": "A free operating sys',
               "malformed_json", "the line ends inside a string"),
        Defect(b'{"id": "dirty-trailing-comma", "conversations": [{"from": "human", "value": '
               b'"Hi"}, {"from": "gpt", "value": "Hello"},]}',
               "malformed_json", "a trailing comma in the array"),
        Defect(_json([{"from": "human", "value": "What is Debian?"}]),
               "not_an_object", "a JSON array"),
        Defect(_json("Tell me a saying about science."), "not_an_object", "a JSON string"),
        Defect(_json({"id": "dirty-no-conversations", "dialogue": hello}),
               "missing_field", 'an id but no "conversations"'),
        Defect(_json({"msgs": hello}), "missing_field", 'no "messages" (nor "conversations")'),
        Defect(_sharegpt("dirty-no-answer", [("system", "You are a Unix assistant."),
                                             ("human", "What does the command `ls` do?")]),
               "no_assistant_turn", "system and human turns only"),
        Defect(_json({"messages": [{"role": "user", "content": "Tell me a saying about work."}]}),
               "no_assistant_turn", "a user message only"),
        Defect(_sharegpt("dirty-empty-conversations", []),
               "empty_conversation", '"conversations": []'),
        Defect(_json({"messages": []}), "empty_conversation", '"messages": []'),
        Defect(_sharegpt("dirty-empty-answer", [("human", "What is Debian?"), ("gpt", "")]),
               "empty_content", "the assistant's value is an empty string"),
        Defect(_json({"messages": [{"role": "user", "content": ""}, hello[1]]}),
               "empty_content", "the user's content is an empty string"),
        Defect(_sharegpt("dirty-unknown-role", [("human", "Hi"), ("robot", "Hello")]),
               "unknown_role", 'a turn from "robot"'),
        Defect(_sharegpt("dirty-number-value", [("human", "How many faces?"), ("gpt", 7)]),
               "wrong_type", "a turn's value is a number"),
        Defect(_json({"id": "dirty-string-conversations", "conversations": "human: hi"}),
               "wrong_type", '"conversations" is a string'),
        Defect(b'{"id": "dirty-latin1", "conversations": [{"from": "human", "value": "Caf\xe9?"}, '
               b'{"from": "gpt", "value": "Oui."}]}',
               "invalid_utf8", "a Latin-1 byte 0xE9 inside a string"),
        Defect(_sharegpt("dirty-missing-image", [ask, answer], image="dlib/faces/absent.jpg"),
               "missing_file", "dlib/faces/absent.jpg does not exist"),
        Defect(_sharegpt("dirty-escaping-path", [ask, answer], image="../../README.md"),
               "bad_image_path", "the path leaves the images directory"),
        Defect(_sharegpt("dirty-truncated-jpeg", [ask, answer], image="skimage/truncated.jpg"),
               "corrupt", "scikit-image's truncated.jpg: 400 bytes, cut in a Huffman table"),
        Defect(_sharegpt("dirty-gif-as-jpeg", [ask, answer], image="bombs/pixel_gif_named.jpg"),
               "unsupported", "a GIF file named .jpg"),
        Defect(_sharegpt("dirty-pixel-bomb-baseline", [ask, answer],
                         image="bombs/pixel_bomb_sof0.jpg"),
               "pixel_bomb", f"baseline (SOF0) {bomb}; the data is 150x150"),
        Defect(_sharegpt("dirty-pixel-bomb-progressive", [ask, answer],
                         image="bombs/pixel_bomb_sof2.jpg"),
               "pixel_bomb", f"progressive (SOF2) {bomb}; the data is 565x800"),
        Defect(_sharegpt("dirty-two-placeholders-one-image",
                         [("human", "Image 1: <image>\nImage 2: <image>\nWhich is wider?"),
                          ("gpt", "The first.")],
                         image=PLACEHOLDER_IMAGES[0]),
               "placeholder_mismatch", "two <image> placeholders, one image"),
        Defect(_sharegpt("dirty-no-placeholder",
                         [("human", "What does this photo show?"), ("gpt", "A rocket.")],
                         image=PLACEHOLDER_IMAGES[0]),
               None, "an image but no <image> placeholder: it goes before the first user "
               "message (LLaVA's convention)"),
        Defect(_sharegpt("dirty-one-placeholder-two-images",
                         [("human", "<image>\nWhich of these two images is wider?"),
                          ("gpt", "The first.")],
                         images=list(PLACEHOLDER_IMAGES)),
               "placeholder_mismatch", "one <image> placeholder, two images"),
        Defect(_sharegpt("dirty-over-length",
                         [("human", "Recite the Debian FAQ, twice over."), ("gpt", long_answer)]),
               "over_length", f"an answer of {len(long_answer)} characters (the FAQ, repeated)"),
    ]


def _image_paths(record: dict) -> list[str]:
    return [record["image"]] if "image" in record else record.get("images", [])


def _good_records(sft: Path) -> list[dict]:
    def chosen(name: str, wanted: int, with_images: bool | None) -> list[str]:
        lines = (sft / name).read_text(encoding="utf-8").splitlines()
        if with_images is not None:
            lines = [line for line in lines if bool(_image_paths(json.loads(line))) == with_images]
        return sorted(lines, key=lambda line: stable_hash(name + line))[:wanted]

    picked = [
        *chosen("sharegpt.jsonl", GOOD_SHAREGPT_TEXT, False),
        *chosen("sharegpt.jsonl", GOOD_SHAREGPT_IMAGE, True),
        *chosen("openai.jsonl", GOOD_OPENAI, None),
    ]
    picked.sort(key=lambda line: stable_hash("order" + line))
    return [json.loads(line) for line in picked]


def _interleave(good: list[dict], defects: list[Defect]) -> tuple[list[bytes], list[dict]]:
    """Two good records for every defect while both last; blank lines at fixed places."""
    lines: list[bytes] = []
    expected: list[dict] = []
    good_left, defects_left = list(reversed(good)), list(reversed(defects))
    while good_left or defects_left:
        number = len(lines) + 1
        if number in BLANK_LINES:
            lines.append(BLANK_LINES[number])
            expected.append({"line": number, "status": "ignored", "reason": "blank_line"})
            continue
        entry: dict = {"line": number, "record": len(lines) - sum(n < number for n in BLANK_LINES)}
        if defects_left and (number % 3 == 2 or not good_left):
            defect = defects_left.pop()
            lines.append(defect.line)
            if defect.reason is None:
                record = json.loads(defect.line)
                entry.update(status="good", style="sharegpt", images=_image_paths(record),
                             id=record["id"], note=defect.detail)
            else:
                entry.update(status="bad", reason=defect.reason, detail=defect.detail)
            if defect.reason in ALSO_ACCEPTED:
                entry["also_accepted"] = ALSO_ACCEPTED[defect.reason]
        else:
            record = good_left.pop()
            lines.append(_json(record))
            entry.update(status="good", style="openai" if "messages" in record else "sharegpt",
                         images=_image_paths(record))
            if "id" in record:
                entry["id"] = record["id"]
        expected.append(entry)
    return lines, expected


def build(sft: Path, source_images: Path, extract: Path, out: Path) -> dict:
    if out.exists():
        shutil.rmtree(out)
    images = out / "images"
    images.mkdir(parents=True)
    good = _good_records(sft)
    for path in {p for record in good for p in _image_paths(record)} | set(PLACEHOLDER_IMAGES):
        (images / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source_images / path, images / path)
    _write_defective_images(images, source_images, extract)
    faq = gzip.decompress((extract / FAQ_GZ).read_bytes()).decode("utf-8")
    long_answer = (faq * (OVER_LENGTH_CHARS // len(faq) + 1))[:OVER_LENGTH_CHARS]
    lines, expected = _interleave(good, _defects(long_answer))

    # The second good line ends in CRLF and the last line has no newline: both still hold records.
    crlf = next(e for e in expected if e["status"] == "good" and e["line"] > 1)
    crlf["note"] = "ends with CRLF"
    expected[-1]["note"] = "the last line, without a final newline"
    endings = [b"\r\n" if n == crlf["line"] else b"\n" for n in range(1, len(lines))] + [b""]
    (out / "dirty.jsonl").write_bytes(b"".join(line + end for line, end in zip(lines, endings)))

    reasons: dict[str, int] = {}
    for entry in expected:
        if entry["status"] != "good":
            reasons[entry["reason"]] = reasons.get(entry["reason"], 0) + 1
    summary = {
        "file": "dirty.jsonl",
        "images_dir": "images",
        "lines": len(expected),
        "records": sum(1 for e in expected if e["status"] != "ignored"),
        "good": sum(1 for e in expected if e["status"] == "good"),
        "bad": sum(1 for e in expected if e["status"] == "bad"),
        "ignored": sum(1 for e in expected if e["status"] == "ignored"),
        "reasons": dict(sorted(reasons.items())),
        "pixel_bomb_size": [PIXEL_BOMB_SIZE, PIXEL_BOMB_SIZE],
        "over_length_chars": OVER_LENGTH_CHARS,
    }
    # One line per expectation keeps the file easy to read next to dirty.jsonl.
    head = ",\n".join(f"  {json.dumps(key)}: {json.dumps(value)}" for key, value in summary.items())
    rows = ",\n".join("    " + json.dumps(entry, ensure_ascii=False) for entry in expected)
    document = f'{{\n{head},\n  "expected": [\n{rows}\n  ]\n}}\n'
    (out / "EXPECTED.json").write_text(document, encoding="utf-8")
    return summary


def main() -> None:
    if len(sys.argv) != 5:
        raise SystemExit(__doc__.strip().splitlines()[-1])
    summary = build(*(Path(arg) for arg in sys.argv[1:]))
    print(f"dirty: {summary['lines']} lines: {summary['good']} good, {summary['bad']} bad, "
          f"{summary['ignored']} ignored; reasons {summary['reasons']}")


if __name__ == "__main__":
    main()
