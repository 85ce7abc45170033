"""Samples from the manual's one-line descriptions, as `whatis -l -w '*'` prints them.

"ls (1) - list directory contents" becomes "What does the command `ls` do?" with the answer
"ls (1) lists directory contents." The question is derived; the answer is the manual's own
description, with its leading verb put in the third person when it is a known verb.
"""

import re
from collections import Counter
from pathlib import Path

from conversation import Sample, Turn
from stable_choice import chance, pick

SOURCE = "whatis"
_ENTRY = re.compile(r"^(\S+) \(([0-9][0-9a-z]*)\)\s+- (.+)$")
_SYSTEM_PROMPT = "You are a Unix command-line assistant."
_VERBS = set(
    "get convert create change set obtain define remove print generate list manage display read "
    "return query compare show copy allocate register run check send determine search access open "
    "initialize make compute retrieve lock add parse manipulate execute wait handle map locate "
    "extract translate multiply calculate write load update transform perform find reposition "
    "report duplicate scan modify examine compile close configure attach unlock free release "
    "install build start stop delete rename move split merge sort format validate verify encode "
    "decode encrypt decrypt sign dump edit view monitor control select mount unmount restore "
    "link unlink"
    .split()
)
_SECTION_NAMES = {
    "1": "user commands",
    "2": "system calls",
    "3": "library functions",
    "4": "special files",
    "5": "file formats and conventions",
    "6": "games",
    "7": "overviews and conventions",
    "8": "system administration commands",
}
_COMMAND_QUESTIONS = (
    "What does the command `{name}` do?",
    "What is `{name}` used for?",
    "Briefly, what is the `{name}` command?",
)
_QUESTIONS_BY_SECTION = {
    "2": ("What does the system call `{name}` do?",),
    "3": ("What does the library function `{name}` do?", "What is `{name}` ({section}) for?"),
    "3perl": ("What does the Perl module `{name}` do?",),
    "3pm": ("What does the Perl module `{name}` do?",),
    "3type": ("What is the type `{name}`?",),
    "3const": ("What is the constant `{name}`?",),
    "4": ("What is the special file `{name}`?",),
    "5": (
        "What is the file format `{name}` ({section})?",
        "What does `{name}` ({section}) describe?",
    ),
    "7": ("What is the manual page `{name}` ({section}) about?",),
}


def _questions_for(section: str) -> tuple[str, ...]:
    if section in _QUESTIONS_BY_SECTION:
        return _QUESTIONS_BY_SECTION[section]
    return _QUESTIONS_BY_SECTION.get(section[0], ("What is `{name}` ({section}) for?",))


def _third_person(verb: str) -> str:
    if verb.endswith(("s", "sh", "ch", "x", "z")):
        return verb + "es"
    if verb.endswith("y") and verb[-2:-1] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def _as_statement(description: str) -> str | None:
    """'list directory contents' -> 'lists directory contents', and likewise for the verbs
    coordinated with the first ('obtain and verify' -> 'obtains and verifies'); None when the
    description does not start with a known verb."""
    words = description.split(" ")
    if not all(v.lower() in _VERBS for v in words[0].rstrip(",").split("/")):
        return None
    out = []
    coordinated = True  # the first word, or a word after "and", "or" or a comma
    for word in words:
        bare = word.rstrip(",")
        verbs = bare.split("/")
        if coordinated and all(v.lower() in _VERBS for v in verbs):
            word = "/".join(_third_person(v.lower()) for v in verbs) + word[len(bare) :]
        coordinated = word.endswith(",") or word in ("and", "or")
        out.append(word)
    return " ".join(out)


def _parse(lines: list[str]) -> list[tuple[str, str, str]]:
    entries: dict[tuple[str, str], str] = {}
    for line in lines:
        match = _ENTRY.match(line.strip())
        if not match:
            continue
        name, section, description = match.groups()
        # Pages without a NAME section, and listings cut to the terminal width, say nothing real.
        cut = name.endswith("...") or description.endswith("...")
        if description == "(unknown subject)" or cut:
            continue
        entries.setdefault((name, section), description.strip().rstrip("."))
    return [(name, section, text) for (name, section), text in sorted(entries.items())]


def whatis_samples(whatis_txt: Path) -> list[Sample]:
    entries = _parse(whatis_txt.read_text(encoding="utf-8", errors="replace").splitlines())
    description_uses = Counter(description for _, _, description in entries)
    samples: list[Sample] = []
    for name, section, description in entries:
        key = f"whatis-{name}.{section}"
        statement = _as_statement(description)
        base = section[0]
        is_command = base in "168"
        if statement:
            answer = f"{name} ({section}) {statement}."
        else:
            answer = f'The manual page {name}({section}) describes it as "{description}".'
        if base in _SECTION_NAMES:
            answer += f" It is documented in section {base} of the manual ({_SECTION_NAMES[base]})."

        unique_task = statement and description[0].islower() and description_uses[description] == 1
        if is_command and unique_task and chance(key + "-reverse", 1, 4):
            question = f"Which command would I use to {description}?"
            answer = f"Use `{name}`: {answer}"
        else:
            templates = _COMMAND_QUESTIONS if is_command else _questions_for(section)
            question = pick(key, templates).format(name=name, section=section)
        turns = [Turn("user", question), Turn("assistant", answer)]
        if chance(key + "-system", 1, 4):
            turns.insert(0, Turn("system", _SYSTEM_PROMPT))
        samples.append(Sample(key, SOURCE, turns))
    return samples
