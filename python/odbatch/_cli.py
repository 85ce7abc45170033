"""The `odbatch` console script: runs the C++ CLI that the wheel bundles (odbatch/_bin/odbatch),
with this process's arguments, in place of this process."""

import os
import sys
from pathlib import Path


def main():
    cli = Path(__file__).resolve().parent / "_bin" / "odbatch"
    if not cli.exists():
        sys.exit(f"odbatch: {cli} is missing: the CLI is bundled by `pip install` and wheel builds "
                 "(setup.py), not in a build tree's package; run <build>/odbatch there")
    os.execv(cli, ["odbatch", *sys.argv[1:]])
