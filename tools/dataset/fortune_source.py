"""Samples from the fortune cookie files of Debian's `fortunes` package.

Fortunes written as dialogues ("Coach: ...", "Norm: ...", or IRC's "<nick> ...") between two
speakers become multi-turn conversations: the first speaker is the user, the second the
assistant. Other fortunes answer a prompt made from the topic their file is named after
("Tell me a saying about science."): the prompt is derived, the answer is the fortune verbatim.
"""

import re
from dataclasses import dataclass
from pathlib import Path

from conversation import Sample, Turn
from stable_choice import chance, pick

DIALOGUE_SOURCE = "fortunes-dialogue"
SAYING_SOURCE = "fortunes-saying"
_SAYING_TEMPLATES = (
    "Tell me a saying about {topic}.",
    "Do you know a good quote about {topic}?",
    "Share something witty about {topic}.",
    "Give me a fortune cookie about {topic}.",
)
_TOPICS = {
    "art": "art",
    "computers": "computers",
    "debian": "Debian",
    "drugs": "drugs",
    "education": "education",
    "food": "food",
    "kids": "children",
    "law": "the law",
    "linux": "Linux",
    "linuxcookie": "Linux",
    "love": "love",
    "magic": "magic",
    "medicine": "medicine",
    "men-women": "men and women",
    "news": "the news",
    "people": "people",
    "perl": "Perl",
    "pets": "pets",
    "politics": "politics",
    "science": "science",
    "songs-poems": "songs and poems",
    "sports": "sports",
    "startrek": "Star Trek",
    "wisdom": "wisdom",
    "work": "work",
}
# Files whose name is no topic but says what kind of text they hold.
_FILE_PROMPTS = {
    "goedel": ("Tell me a self-referential fortune.",),
    "humorists": ("Tell me something a famous humorist said.",),
    "knghtbrd": ("Share a quote from Debian's IRC channels.",),
    "paradoxum": ("Tell me a paradoxical saying.",),
    "platitudes": ("Give me a platitude.",),
    "pratchett": ("Give me a Terry Pratchett quote.",),
    "tao": ("Quote something from the Tao of Programming.",),
    "zippy": ("Say something Zippy the Pinhead would say.",),
    "disclaimer": ("Write a humorous disclaimer.",),
}
_DEFINITION_TEMPLATES = (
    'Give me a humorous definition of "{term}".',
    'What is "{term}"? Answer with a witty definition.',
)
_DEFINITION_TERM = re.compile(r"^([^\s:][^:]{0,40}?)(?:, [a-z]+\.)?:$")
_SPEAKER = re.compile(r"^([A-Z][A-Za-z.'-]*(?: [A-Z][A-Za-z.'-]*){0,2}):\s+(\S.*)$")
_IRC_SPEAKER = re.compile(r"^<([^<>\s]{1,20})>\s+(\S.*)$")
_ATTRIBUTION = re.compile(r"^\s+--\s")
_OVERSTRIKE = re.compile(".\x08")
_UNDERLINE = re.compile("(_+)(\x08+)")  # "___\b\b\bnot": underlines the next word on a printer


@dataclass
class SkipCounts:
    no_topic: int = 0
    unsampled: int = 0


def fortune_files(fortune_dir: Path) -> list[Path]:
    """The fortune files proper: not the .dat indexes, nor the links that alias other files."""
    return [
        path
        for path in sorted(fortune_dir.iterdir())
        if path.suffix not in (".dat", ".u8") and path.is_file() and not path.is_symlink()
    ]


def readable_fortunes(path: Path) -> list[str]:
    """The fortunes of one file, with printer overstrikes removed and trailing spaces trimmed."""
    text = path.read_text(encoding="utf-8", errors="replace")
    text = _UNDERLINE.sub(lambda m: "" if len(m[1]) == len(m[2]) else m[0], text)
    text = _OVERSTRIKE.sub("", text)
    items = re.split(r"^%\n", text, flags=re.M)
    cleaned = ["\n".join(line.rstrip() for line in item.strip("\n").splitlines()) for item in items]
    return [item for item in cleaned if item.strip()]


def _dialogue(fortune: str) -> list[tuple[str, str]] | None:
    """(speaker, utterance) pairs of a strictly alternating two-speaker dialogue, or None."""
    turns: list[list[str]] = []
    preamble = 0
    for line in fortune.splitlines():
        if not line.strip() or _ATTRIBUTION.match(line):
            continue
        match = _SPEAKER.match(line) or _IRC_SPEAKER.match(line)
        if match:
            turns.append([match.group(1), match.group(2).strip()])
        elif turns:
            turns[-1][1] += " " + line.strip()
        else:
            preamble += 1  # a title line such as "Humor in the Court:"
    speakers = [speaker for speaker, _ in turns]
    if preamble > 1 or len(turns) < 2 or len(turns) % 2 or len(set(speakers)) != 2:
        return None
    if any(speakers[i] != speakers[i % 2] for i in range(len(speakers))):
        return None
    return [(speaker, text) for speaker, text in turns]


def _prompt(topic_file: str, key: str, fortune: str) -> str | None:
    if topic_file == "definitions":
        match = _DEFINITION_TERM.match(fortune.splitlines()[0])
        return pick(key, _DEFINITION_TEMPLATES).format(term=match.group(1)) if match else None
    if topic_file in _FILE_PROMPTS:
        return pick(key, _FILE_PROMPTS[topic_file])
    if topic_file in _TOPICS:
        return pick(key, _SAYING_TEMPLATES).format(topic=_TOPICS[topic_file])
    return None


def fortune_samples(fortune_dir: Path, sayings_per_two: int, skipped: SkipCounts) -> list[Sample]:
    """All dialogues, and about sayings_per_two in two of the fortunes that have a topic."""
    samples: list[Sample] = []
    for path in fortune_files(fortune_dir):
        for index, fortune in enumerate(readable_fortunes(path)):
            key = f"fortune-{path.name}-{index:04d}"
            dialogue = _dialogue(fortune)
            if dialogue:
                first, second = dialogue[0][0], dialogue[1][0]
                turns = [Turn("system", f"You are {second}, talking with {first}.")]
                for i, (_, text) in enumerate(dialogue):
                    turns.append(Turn("user" if i % 2 == 0 else "assistant", text))
                samples.append(Sample(key.replace("fortune-", "dialogue-"), DIALOGUE_SOURCE, turns))
                continue
            prompt = _prompt(path.name, key, fortune)
            if prompt is None:
                skipped.no_topic += 1
            elif not chance(key, sayings_per_two, 2):
                skipped.unsampled += 1
            else:
                samples.append(
                    Sample(key, SAYING_SOURCE, [Turn("user", prompt), Turn("assistant", fortune)])
                )
    return samples
