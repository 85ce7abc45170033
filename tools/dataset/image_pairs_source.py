"""Questions over two or three images at once, answered from their JPEG headers and names.

Pairs are drawn deterministically from all images, keeping only those where the answer is
unambiguous (different widths, one greyscale and one colour image, different frame numbers).
"""

import re
from itertools import combinations

from conversation import IMAGE_PLACEHOLDER, Sample, Turn
from image_catalog import CatalogImage
from stable_choice import stable_hash

SOURCE = "multi-image"
_ORDINALS = ("first", "second", "third")
_GREY_COUNTS = ("None of them.", "One of the three.", "Two of the three.", "All three.")
_FRAME_NUMBER = re.compile(r"frame_(\d+)\.jpg$")


def _prompt(count: int, question: str) -> str:
    listing = "\n".join(f"Image {i + 1}: {IMAGE_PLACEHOLDER}" for i in range(count))
    return f"{listing}\n{question}"


Group = tuple[CatalogImage, ...]


def _draw(candidates: list[Group], kind: str, count: int) -> list[Group]:
    def order(group: Group) -> int:
        return stable_hash(kind + "".join(image.path for image in group))

    return sorted(candidates, key=order)[:count]


def _sample(kind: str, index: int, group: Group, question: str, answer: str) -> Sample:
    turns = [Turn("user", _prompt(len(group), question)), Turn("assistant", answer)]
    return Sample(f"multi-{kind}-{index:03d}", SOURCE, turns, [image.path for image in group])


def image_pair_samples(images: list[CatalogImage]) -> list[Sample]:
    # One representative per distinct size keeps the many 150x150 crops and 320x240 frames
    # from crowding out the other photos.
    by_size: dict[tuple[int, int], CatalogImage] = {}
    for image in sorted(images, key=lambda i: stable_hash(i.path)):
        by_size.setdefault((image.header.width, image.header.height), image)
    varied = sorted(by_size.values(), key=lambda i: i.path)
    samples: list[Sample] = []

    wider = [p for p in combinations(varied, 2) if p[0].header.width != p[1].header.width]
    for index, pair in enumerate(_draw(wider, "wider", 150)):
        widest = max(range(2), key=lambda i: pair[i].header.width)
        answer = (f"The {_ORDINALS[widest]} one: it is {pair[widest].header.width} pixels wide, "
                  f"the other {pair[1 - widest].header.width}.")
        question = "Which of these two images is wider?"
        samples.append(_sample("wider", index, pair, question, answer))

    grey = [i for i in images if i.header.is_greyscale]
    colour = [i for i in varied if not i.header.is_greyscale]
    mixed = [(g, c) if stable_hash(g.path + c.path) % 2 else (c, g) for g in grey for c in colour]
    for index, pair in enumerate(_draw(mixed, "colour", 60)):
        which = 0 if not pair[0].header.is_greyscale else 1
        answer = f"The {_ORDINALS[which]} one; the {_ORDINALS[1 - which]} is greyscale."
        question = "Which of these two images is in colour?"
        samples.append(_sample("colour", index, pair, question, answer))

    frames = [i for i in images if _FRAME_NUMBER.search(i.path)]
    for index, pair in enumerate(_draw(list(combinations(frames, 2)), "frames", 40)):
        numbers = [int(_FRAME_NUMBER.search(i.path).group(1)) for i in pair]
        earlier = 0 if numbers[0] < numbers[1] else 1
        answer = (f"The {_ORDINALS[earlier]} one: it is frame {numbers[earlier]} of the sequence, "
                  f"the other is frame {numbers[1 - earlier]}.")
        question = "These are two frames from the same video. Which comes first?"
        samples.append(_sample("frames", index, pair, question, answer))

    triples = [t for t in combinations(varied + grey[:6], 3) if len({i.pixels for i in t}) == 3]
    for index, triple in enumerate(_draw(triples, "pixels", 60)):
        largest = max(range(3), key=lambda i: triple[i].pixels)
        sizes = ", ".join(f"{i.header.width}x{i.header.height}" for i in triple)
        greys = sum(i.header.is_greyscale for i in triple)
        turns = [
            Turn("user", _prompt(3, "Which of these images has the most pixels?")),
            Turn("assistant", f"The {_ORDINALS[largest]} one. Their sizes are {sizes}."),
            Turn("user", "How many of them are greyscale?"),
            Turn("assistant", _GREY_COUNTS[greys]),
        ]
        samples.append(Sample(f"multi-pixels-{index:03d}", SOURCE, turns, [i.path for i in triple]))
    return samples
