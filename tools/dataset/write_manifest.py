"""Writes DEST/MANIFEST.json: what the dataset holds, where it came from, and hashes that let
tests notice a stale or edited dataset. It holds no timestamps, so a re-run that changes
nothing writes the same bytes.

Usage: write_manifest.py DEST DEBS_DIR
"""

import hashlib
import json
import sys
from pathlib import Path

from jpeg_header import read_jpeg_header

# The files the content hash covers: every record a test may read.
HASHED_FILES = ("sft/sharegpt.jsonl", "sft/openai.jsonl", "sft/mixed.jsonl", "dirty/dirty.jsonl",
                "dirty/EXPECTED.json")
LLAMA_MODEL = "tokenizer/llama2-32k.model"
TOKENIZER_FILES = ("tokenizer/odbatch-unigram-8k.model", "tokenizer/odbatch-unigram-8k.vocab",
                   LLAMA_MODEL)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def content_hash(dest: Path) -> str:
    """sha256 over the hashed files' names and sha256 sums, in a fixed order."""
    digest = hashlib.sha256()
    for name in HASHED_FILES:
        digest.update(f"{name}\0{_sha256(dest / name)}\n".encode())
    return digest.hexdigest()


def _file_entry(dest: Path, name: str) -> dict:
    path = dest / name
    entry = {"path": name, "bytes": path.stat().st_size, "sha256": _sha256(path)}
    if name.endswith(".jsonl"):
        data = path.read_bytes()
        entry["lines"] = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    return entry


def _images(images_dir: Path) -> dict:
    files = sorted(images_dir.rglob("*.jpg"))
    headers = [read_jpeg_header(path) for path in files]
    sizes = [path.stat().st_size for path in files]
    pixels = [h.width * h.height for h in headers]
    smallest, largest = pixels.index(min(pixels)), pixels.index(max(pixels))
    listing = hashlib.sha256()
    for path in files:
        listing.update(f"{path.relative_to(images_dir).as_posix()}\0{_sha256(path)}\n".encode())
    return {
        "dir": "images",
        "count": len(files),
        "bytes": sum(sizes),
        "file_bytes": {"min": min(sizes), "max": max(sizes)},
        "smallest": {"path": files[smallest].relative_to(images_dir).as_posix(),
                     "width": headers[smallest].width, "height": headers[smallest].height},
        "largest": {"path": files[largest].relative_to(images_dir).as_posix(),
                    "width": headers[largest].width, "height": headers[largest].height},
        "greyscale": sum(h.is_greyscale for h in headers),
        "progressive": sum(h.progressive for h in headers),
        "by_directory": {top: sum(1 for p in files if p.relative_to(images_dir).parts[0] == top)
                         for top in sorted({p.relative_to(images_dir).parts[0] for p in files})},
        "sha256_of_listing": listing.hexdigest(),
    }


def manifest(dest: Path, debs: Path) -> dict:
    stats = json.loads((dest / "sft/stats.json").read_text(encoding="utf-8"))
    expected = json.loads((dest / "dirty/EXPECTED.json").read_text(encoding="utf-8"))
    packages = {}
    for deb in sorted(debs.glob("*.deb")):
        name, version, _ = deb.name.split("_")
        packages[name] = version.replace("%3a", ":")
    tokenizer = [name for name in TOKENIZER_FILES if (dest / name).is_file()]
    files = [_file_entry(dest, name) for name in (*HASHED_FILES, "sft/stats.json", *tokenizer)]
    images = _images(dest / "images")
    return {
        "name": "odbatch real multimodal SFT (derived from Debian packages)",
        "derived": True,
        "description": "Instruction/answer pairs derived from real documents and photos shipped in "
        "Debian packages: the prompts are templated, the answers are the documents' own text or "
        "facts read from the files. See README.md and docs/dataset.md.",
        "packages": packages,
        "counts": {source: entry["samples"] for source, entry in stats["sources"].items()},
        "sources": stats["sources"],
        "records": stats["records"],
        "shuffle_seed": stats["shuffle_seed"],
        "files": files,
        "total_bytes": sum(f["bytes"] for f in files) + images["bytes"],
        "images": images,
        "dirty": {k: v for k, v in expected.items() if k != "expected"},
        "tokenizer": {
            "model": "tokenizer/odbatch-unigram-8k.model",
            "vocab": "tokenizer/odbatch-unigram-8k.vocab",
            "type": "unigram",
            "vocab_size": 8000,
            "ids": {"unk": 0, "bos": 1, "eos": 2, "pad": -1},
            "user_defined_symbols": ["<|im_start|>", "<|im_end|>", "<|vision_start|>",
                                     "<|vision_end|>", "<|image_pad|>"],
            "llama2_model": LLAMA_MODEL if LLAMA_MODEL in tokenizer else None,
        },
        "content_hash": content_hash(dest),
        "content_hash_covers": list(HASHED_FILES),
    }


def main() -> None:
    if len(sys.argv) != 3:
        raise SystemExit(__doc__.strip().splitlines()[-1])
    dest = Path(sys.argv[1])
    document = manifest(dest, Path(sys.argv[2]))
    (dest / "MANIFEST.json").write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n",
                                        encoding="utf-8")
    print(f"manifest: {dest / 'MANIFEST.json'}: content hash {document['content_hash'][:16]}..., "
          f"{document['total_bytes']} bytes in {len(document['files'])} files and "
          f"{document['images']['count']} images")


if __name__ == "__main__":
    main()
