"""Builds the SFT dataset: DEST/sft/{sharegpt,openai,mixed}.jsonl and stats.json.

sharegpt.jsonl holds every sample (text and image); openai.jsonl the text-only samples in the
OpenAI chat style; mixed.jsonl every sample once, text samples in either style, shuffled with a
fixed seed. Prints the sample count of every source.

Usage: build_sft.py EXTRACT_DIR IMAGES_DIR WHATIS_TXT OUT_DIR
"""

import json
import random
import statistics
import sys
from collections import Counter
from pathlib import Path

from conversation import IMAGE_PLACEHOLDER, Sample
from face_source import face_boxes, face_samples
from faq_source import faq_samples
from fortune_source import SkipCounts, fortune_samples
from image_catalog import catalog
from image_pairs_source import image_pair_samples
from package_paths import FACES_DIR, FAQ_GZ, FORTUNES, WALLPAPER_COPYRIGHT
from photo_facts_source import photo_fact_samples
from whatis_source import whatis_samples

SHUFFLE_SEED = 20240601
FACE_XML = ("training.xml", "testing.xml")


def _unusable_text(sample: Sample) -> str | None:
    """Why a text-derived sample cannot be used as it stands, or None."""
    for turn in sample.turns:
        if sample.is_text_only and IMAGE_PLACEHOLDER in turn.text:
            return f"its text contains the image placeholder {IMAGE_PLACEHOLDER}"
        if any(ord(c) < 32 and c not in "\t\n" for c in turn.text):
            return "its text contains control characters"
    return None


def gather(extract: Path, images_dir: Path, whatis_txt: Path) -> list[Sample]:
    samples = faq_samples(extract / FAQ_GZ)
    if whatis_txt.is_file() and whatis_txt.stat().st_size > 0:
        samples += whatis_samples(whatis_txt)
    else:
        print("sft: note: `whatis` printed nothing (no man database here); whatis samples skipped")
    skipped = SkipCounts()
    samples += fortune_samples(extract / FORTUNES, 1, skipped)
    print(f"sft: fortunes not used: {skipped.no_topic} without a topic, "
          f"{skipped.unsampled} left out by the 1-in-2 sample")

    images = catalog(images_dir, extract / WALLPAPER_COPYRIGHT)
    by_path = {image.path: image for image in images}
    boxes = face_boxes([extract / FACES_DIR / name for name in FACE_XML], by_path)
    samples += face_samples(images, boxes)
    samples += photo_fact_samples(images)
    samples += image_pair_samples(images)

    usable = []
    for sample in samples:
        reason = _unusable_text(sample)
        if reason:
            print(f"sft: not used: {sample.id}: {reason}")
            continue
        sample.validate()
        usable.append(sample)
    ids = Counter(sample.id for sample in usable)
    duplicates = [i for i, n in ids.items() if n > 1]
    if duplicates:
        raise SystemExit(f"sft: duplicate sample ids: {duplicates[:5]}")
    return usable


def _write_jsonl(path: Path, records: list[dict]) -> None:
    with path.open("w", encoding="utf-8", newline="\n") as out:
        for record in records:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")


def _length_stats(samples: list[Sample]) -> dict:
    lengths = [sample.characters() for sample in samples]
    return {"min": min(lengths), "median": int(statistics.median(lengths)), "max": max(lengths)}


def main() -> None:
    if len(sys.argv) != 5:
        raise SystemExit(__doc__.strip().splitlines()[-1])
    extract, images_dir, whatis_txt, out = (Path(a) for a in sys.argv[1:])
    samples = gather(extract, images_dir, whatis_txt)
    out.mkdir(parents=True, exist_ok=True)

    sharegpt = [s.to_sharegpt() for s in samples]
    text_only = [s for s in samples if s.is_text_only]
    openai = [s.to_openai() for s in text_only]
    # Text samples take either style, by the parity of their length: about half each.
    mixed = [
        s.to_openai() if s.is_text_only and s.characters() % 2 else s.to_sharegpt() for s in samples
    ]
    random.Random(SHUFFLE_SEED).shuffle(mixed)
    files = {"sharegpt.jsonl": sharegpt, "openai.jsonl": openai, "mixed.jsonl": mixed}
    for name, records in files.items():
        _write_jsonl(out / name, records)

    sources = sorted({s.source for s in samples})
    stats = {
        "shuffle_seed": SHUFFLE_SEED,
        "records": {name: len(records) for name, records in files.items()},
        "mixed_openai_style": sum(1 for r in mixed if "messages" in r),
        "sources": {
            source: {
                "samples": sum(1 for s in samples if s.source == source),
                "images": sum(len(s.images) for s in samples if s.source == source),
                "characters": _length_stats([s for s in samples if s.source == source]),
            }
            for source in sources
        },
        "multi_turn": sum(1 for s in samples if sum(t.role == "user" for t in s.turns) > 1),
        "multi_image": sum(1 for s in samples if len(s.images) > 1),
    }
    (out / "stats.json").write_text(json.dumps(stats, indent=2) + "\n", encoding="utf-8")
    for source in sources:
        entry = stats["sources"][source]
        print(f"sft: {source:18} {entry['samples']:6} samples, characters {entry['characters']}")
    print(f"sft: {len(samples)} samples ({len(text_only)} text-only, "
          f"{stats['multi_turn']} multi-turn, {stats['multi_image']} multi-image) in {out}")


if __name__ == "__main__":
    main()
