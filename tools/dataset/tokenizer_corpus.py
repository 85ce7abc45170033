"""Writes the text the sentencepiece model is trained on: the Debian FAQ, the licenses in
/usr/share/common-licenses (each text once, though several names link to it) and the fortune
cookie files (without their overstrike sequences). FAQ and licenses alone are too small for an
8000-piece unigram vocabulary; the fortunes add varied English. No manual pages: rendering
them is slow.

Usage: tokenizer_corpus.py EXTRACT_DIR LICENSES_DIR OUT_TXT
"""

import gzip
import sys
from pathlib import Path

from fortune_source import fortune_files, readable_fortunes
from package_paths import FAQ_GZ, FORTUNES


def corpus(extract: Path, licenses: Path) -> str:
    parts = [gzip.decompress((extract / FAQ_GZ).read_bytes()).decode("utf-8")]
    seen: set[Path] = set()
    for path in sorted(licenses.iterdir()):
        real = path.resolve()
        if real.is_file() and real not in seen:
            seen.add(real)
            parts.append(real.read_text(encoding="utf-8", errors="replace"))
    for path in fortune_files(extract / FORTUNES):
        if path.name != "ascii-art":  # pictures, not text
            parts += readable_fortunes(path)
    return "\n".join(parts) + "\n"


def main() -> None:
    if len(sys.argv) != 4:
        raise SystemExit(__doc__.strip().splitlines()[-1])
    text = corpus(Path(sys.argv[1]), Path(sys.argv[2]))
    Path(sys.argv[3]).write_text(text, encoding="utf-8")
    print(f"tokenizer: corpus of {len(text.encode('utf-8'))} bytes, {text.count(chr(10))} lines")


if __name__ == "__main__":
    main()
