"""The records of a JSON Lines file, for the converters to other formats."""

import json
import sys


def records(path, stride=1):
    """Yields every stride-th record (non-blank line) of `path`, parsed; a line that is not JSON
    stops the conversion, naming it: a conversion must hold exactly the file's records."""
    kept = 0
    with open(path, "rb") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            if kept % stride == 0:
                try:
                    yield json.loads(line)
                except ValueError as error:
                    sys.exit(f"{path}:{number}: not JSON: {error}")
            kept += 1
