"""A Python map as a record stage: a system prompt per source, for records that have none.

    PYTHONPATH=build/python python3 examples/stages/system_prompt.py
"""

import sys
from pathlib import Path

import odbatch

PROMPTS = {
    0: "You answer questions about Debian using the Debian GNU/Linux FAQ.",
    1: "You are a concise assistant for the Unix command line.",
}


def system_prompt(record):
    """Runs on a loader thread for each record, before tokenization; returns the record."""
    messages = record["messages"]
    if messages[0]["role"] != "system":
        messages.insert(0, {"role": "system", "content": PROMPTS[record["source"]]})
    return record


def main():
    config = Path(__file__).with_name("system_prompt.toml")
    pipe = odbatch.Pipeline(config, stages={"system_prompt": system_prompt}, return_info=True)
    pipe.set_epoch(0)
    batches = tokens = 0
    for _, info in pipe:
        batches += 1
        tokens += info.tokens
        if batches == 20:
            break
    print(f"system_prompt: {batches} batches, {tokens} tokens")
    return 0 if batches > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
