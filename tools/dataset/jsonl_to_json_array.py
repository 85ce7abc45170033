"""Converts a JSON Lines dataset into one LLaVA-style JSON array file: `[record, record, ...]`.

    python3 jsonl_to_json_array.py INPUT.jsonl OUTPUT.json [--indent N] [--stride K]

Each non-blank line is parsed and written back as one element, in order, the way LLaVA's own
instruction sets are written (json.dump of a list; no indent unless --indent, UTF-8 text kept as
it is). --stride K keeps every K-th record (lines 1, 1+K, 1+2K, ... among non-blank lines), so
tests and benchmarks can take a small subset spread over the whole file. The output is written to
a temporary file beside it and renamed, so a reader never sees half a file.

A line that is not valid JSON stops the conversion, naming its line: a JSON array of the same
records as the JSON Lines file must hold exactly those records.
"""

import argparse
import json
import os
import tempfile

from jsonl_records import records


def write_array(out, elements, indent):
    """Writes the elements one at a time: memory stays one record, whatever the input's size."""
    out.write("[" if indent is None else "[\n")
    count = 0
    for element in elements:
        if count:
            out.write("," if indent is None else ",\n")
        text = json.dumps(element, ensure_ascii=False, indent=indent)
        if indent is not None:
            text = "\n".join(" " * indent + part for part in text.split("\n"))
        out.write(text)
        count += 1
    out.write("]\n" if indent is None else "\n]\n")
    return count


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("input", help="JSON Lines file")
    parser.add_argument("output", help="JSON array file to write")
    parser.add_argument("--indent", type=int, default=None, help="pretty-print with this indent")
    parser.add_argument("--stride", type=int, default=1, help="keep every K-th record")
    args = parser.parse_args()
    if args.stride < 1:
        parser.error("--stride must be at least 1")

    directory = os.path.dirname(os.path.abspath(args.output))
    os.makedirs(directory, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=directory, delete=False) as out:
        try:
            count = write_array(out, records(args.input, args.stride), args.indent)
        except BaseException:
            os.unlink(out.name)
            raise
    os.chmod(out.name, 0o644)  # a temporary file is private to its owner
    os.replace(out.name, args.output)
    print(f"{args.output}: {count} records from {args.input}")


if __name__ == "__main__":
    main()
