"""Checks a prepared dataset directory: every line of the SFT files is a usable record whose
images exist and are complete JPEGs, the dirty file's lines get exactly the verdicts its
EXPECTED.json lists, and MANIFEST.json's content hash matches the files.

Usage: verify_dataset.py DEST
"""

import json
import sys
from pathlib import Path

from record_check import check_line
from write_manifest import content_hash

SFT_FILES = ("sft/sharegpt.jsonl", "sft/openai.jsonl", "sft/mixed.jsonl")


def verify_sft(dest: Path) -> list[str]:
    problems = []
    for name in SFT_FILES:
        lines = (dest / name).read_bytes().split(b"\n")
        found = [] if not lines[-1] else [f"{name}: the last line has no newline"]
        for number, line in enumerate(lines[:-1], start=1):
            verdict = check_line(line, dest / "images")
            if verdict:
                found.append(f"{name}:{number}: {verdict}")
        if not found:
            print(f"verify: {name}: {len(lines) - 1} records, every one usable")
        problems += found
    return problems


def verify_dirty(dest: Path) -> list[str]:
    expected = json.loads((dest / "dirty/EXPECTED.json").read_text(encoding="utf-8"))
    lines = (dest / "dirty/dirty.jsonl").read_bytes().split(b"\n")
    lines = [line.removesuffix(b"\r") for line in lines]
    problems = []
    if len(lines) != expected["lines"] or len(expected["expected"]) != len(lines):
        listed = len(expected["expected"])
        problems.append(f"dirty: {len(lines)} lines, EXPECTED.json lists {listed}")
    for entry, line in zip(expected["expected"], lines):
        verdict = check_line(line, dest / "dirty/images")
        wanted = None if entry["status"] == "good" else entry["reason"]
        if verdict != wanted:
            where = f"dirty.jsonl:{entry['line']}"
            problems.append(f"{where}: expected {wanted}, the check says {verdict}")
    if not problems:
        print(f"verify: dirty.jsonl: {len(lines)} lines, every verdict as EXPECTED.json lists")
    return problems


def verify_manifest(dest: Path) -> list[str]:
    manifest = json.loads((dest / "MANIFEST.json").read_text(encoding="utf-8"))
    actual = content_hash(dest)
    if manifest["content_hash"] != actual:
        listed = manifest["content_hash"]
        return [f"MANIFEST.json: content hash {listed}, but the files hash to {actual}"]
    print(f"verify: MANIFEST.json content hash {actual[:16]}... matches")
    return []


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit(__doc__.strip().splitlines()[-1])
    dest = Path(sys.argv[1])
    problems = verify_sft(dest) + verify_dirty(dest) + verify_manifest(dest)
    for problem in problems[:50]:
        print(f"verify: {problem}", file=sys.stderr)
    if problems:
        raise SystemExit(f"verify: {len(problems)} problems")


if __name__ == "__main__":
    main()
