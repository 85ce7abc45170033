"""Face questions over dlib's example photos.

faces/training.xml and faces/testing.xml annotate PASCAL VOC photos with one box per face: they
answer "How many faces are in this image?" and where the largest face is. The johns/<Name>/
crops are labelled by their directory, a real name: "Whose face is this?", and whether two crops
show the same person.
"""

import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

from conversation import IMAGE_PLACEHOLDER, Sample, Turn
from image_catalog import CatalogImage
from stable_choice import pick, stable_hash

FACES_SOURCE = "dlib-faces"
JOHNS_SOURCE = "dlib-johns"
_IDENTITY_QUESTIONS = ("Whose face is this?", "Who is this?", "Can you tell me who this person is?")
_SAME_PERSON_PAIRS = 200


@dataclass(frozen=True)
class Box:
    left: int
    top: int
    width: int
    height: int

    @property
    def corners(self) -> str:
        return f"[{self.left}, {self.top}, {self.left + self.width}, {self.top + self.height}]"


def face_boxes(
    annotation_files: list[Path], images: dict[str, CatalogImage]
) -> dict[str, list[Box]]:
    """Boxes per image path (relative to the images directory), checked against the JPEG sizes."""
    boxes: dict[str, list[Box]] = {}
    for xml_file in annotation_files:
        for element in ElementTree.parse(xml_file).getroot().iter("image"):
            path = f"dlib/faces/{element.get('file')}"
            image = images.get(path)
            if image is None:
                raise SystemExit(f"{xml_file}: annotates {path}, which is not collected")
            size = (int(element.get("width", "0")), int(element.get("height", "0")))
            if size != (image.header.width, image.header.height):
                raise SystemExit(f"{xml_file}: {path} is annotated as {size}, its header says "
                                 f"{image.header.width}x{image.header.height}")
            boxes[path] = [
                Box(*(int(b.get(k, "0")) for k in ("left", "top", "width", "height")))
                for b in element.iter("box")
            ]
    return boxes


def _count_answer(count: int) -> str:
    return "There is one face." if count == 1 else f"There are {count} faces."


def _annotated_samples(path: str, boxes: list[Box]) -> list[Sample]:
    name = Path(path).stem
    largest = max(boxes, key=lambda b: (b.width * b.height, -b.left, -b.top))
    count_turns = [
        Turn("user", f"{IMAGE_PLACEHOLDER}\nHow many faces are in this image?"),
        Turn("assistant", _count_answer(len(boxes))),
        Turn("user", "Where is the largest face? Give its bounding box."),
        Turn(
            "assistant",
            f"The largest face is {largest.width}x{largest.height} pixels, with its top-left "
            f"corner at x={largest.left}, y={largest.top}: {largest.corners} as [left, top, "
            "right, bottom].",
        ),
    ]
    ordered = sorted(boxes, key=lambda b: (b.left, b.top))
    listing = "\n".join(f"{i + 1}. {b.corners}" for i, b in enumerate(ordered))
    list_turns = [
        Turn(
            "user",
            f"{IMAGE_PLACEHOLDER}\nList the bounding box of every face as [left, top, right, "
            "bottom] in pixels, from left to right.",
        ),
        Turn("assistant", f"{_count_answer(len(boxes))}\n{listing}"),
    ]
    return [
        Sample(f"faces-count-{name}", FACES_SOURCE, count_turns, [path]),
        Sample(f"faces-boxes-{name}", FACES_SOURCE, list_turns, [path]),
    ]


def face_samples(images: list[CatalogImage], boxes: dict[str, list[Box]]) -> list[Sample]:
    samples: list[Sample] = []
    for path in sorted(boxes):
        samples += _annotated_samples(path, boxes[path])

    crops = [image for image in images if image.person]
    for crop in crops:
        key = f"johns-{Path(crop.path).parent.name}-{Path(crop.path).stem}"
        question = pick(key, _IDENTITY_QUESTIONS)
        turns = [
            Turn("user", f"{IMAGE_PLACEHOLDER}\n{question}"),
            Turn("assistant", f"This is {crop.person}."),
        ]
        samples.append(Sample(key, JOHNS_SOURCE, turns, [crop.path]))

    # Half the pairs show the same person, so "yes" is as frequent as "no".
    same = [p for p in combinations(crops, 2) if p[0].person == p[1].person]
    different = [p for p in combinations(crops, 2) if p[0].person != p[1].person]
    for kind, pairs in (("same", same), ("different", different)):
        chosen = sorted(pairs, key=lambda p: stable_hash(p[0].path + p[1].path))
        for index, (first, second) in enumerate(chosen[: _SAME_PERSON_PAIRS // 2]):
            if kind == "same":
                answer = f"Yes. Both photos show {first.person}."
            else:
                answer = f"No. The first photo shows {first.person}, the second {second.person}."
            turns = [
                Turn(
                    "user",
                    f"Photo 1: {IMAGE_PLACEHOLDER}\nPhoto 2: {IMAGE_PLACEHOLDER}\n"
                    "Do these two photos show the same person?",
                ),
                Turn("assistant", answer),
            ]
            key = f"johns-pair-{kind}-{index:03d}"
            samples.append(Sample(key, JOHNS_SOURCE, turns, [first.path, second.path]))
    return samples
