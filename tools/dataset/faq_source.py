"""Samples from the Debian GNU/Linux FAQ (debian-faq's plain-text edition).

Every numbered section ("1.2. What is Debian GNU/Linux?") becomes a question with the section's
text as the answer; headings that are not questions ("8.1.1. dpkg") are asked about. Each
chapter also yields multi-turn conversations that walk through its sections in order.
"""

import gzip
import re
import textwrap
from pathlib import Path

from conversation import Sample, Turn
from stable_choice import chance

SOURCE = "debian-faq"
_CHAPTER = re.compile(r"^Chapter (\d+)\. (.+)$")
_SECTION = re.compile(r"^(\d+(?:\.\d+)+)\. (.*)$")
_SYSTEM_PROMPT = "You answer questions about Debian using the Debian GNU/Linux FAQ."
_TURNS_PER_CONVERSATION = 4


def _question(title: str) -> str:
    if "?" in title:
        return title
    return f'What does the Debian FAQ say under "{title}"?'


def _sections(lines: list[str]) -> list[tuple[str, str, str]]:
    """(number, heading, body) for every numbered section after the first chapter heading."""
    start = next(i for i, line in enumerate(lines) if _CHAPTER.match(line))
    sections: list[tuple[str, str, str]] = []
    heading: list[str] = []
    number = ""
    body: list[str] = []
    in_heading = False

    def close() -> None:
        if number:
            text = textwrap.dedent("\n".join(body)).strip("\n")
            sections.append((number, " ".join(heading), text))

    for line in lines[start:]:
        chapter = _CHAPTER.match(line)
        section = _SECTION.match(line)
        if chapter:
            close()
            number, heading, body, in_heading = "", [], [], False
        elif section:
            close()
            number, heading, body, in_heading = section.group(1), [section.group(2)], [], True
        elif in_heading and line and not line[0].isspace():
            heading.append(line.strip())  # a heading wrapped onto the next line
        else:
            in_heading = False
            body.append(line.rstrip())
    close()
    return sections


def faq_samples(faq_gz: Path) -> list[Sample]:
    # The headings separate numbers and words with no-break spaces.
    text = gzip.decompress(faq_gz.read_bytes()).decode("utf-8").replace("\u00a0", " ")
    lines = text.splitlines()
    samples: list[Sample] = []
    by_chapter: dict[str, list[tuple[str, str]]] = {}
    for number, heading, body in _sections(lines):
        if not body:
            continue  # a heading whose text lives entirely in its subsections
        question = _question(heading)
        turns = [Turn("user", question), Turn("assistant", body)]
        if chance(f"faq-system-{number}", 1, 2):
            turns.insert(0, Turn("system", _SYSTEM_PROMPT))
        samples.append(Sample(f"faq-{number}", SOURCE, turns))
        by_chapter.setdefault(number.split(".")[0], []).append((question, body))

    for chapter, pairs in by_chapter.items():
        for first in range(0, len(pairs), _TURNS_PER_CONVERSATION):
            turns = [Turn("system", _SYSTEM_PROMPT)]
            for question, body in pairs[first : first + _TURNS_PER_CONVERSATION]:
                turns += [Turn("user", question), Turn("assistant", body)]
            part = first // _TURNS_PER_CONVERSATION + 1
            samples.append(Sample(f"faq-chapter{chapter}-part{part}", SOURCE, turns))
    return samples
