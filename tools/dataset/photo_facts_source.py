"""Questions about a single image, answered from facts about its file (see image_catalog).

Every image gets one conversation of two or three questions (its size, orientation, colour or
greyscale, where it comes from); images whose subject or author is documented get another.
A third of the video frames is left out: the frames are alike and recur in the multi-image set.
"""

from pathlib import Path

from conversation import IMAGE_PLACEHOLDER, Sample, Turn
from image_catalog import CatalogImage
from stable_choice import chance, pick, stable_hash

SOURCE = "image-facts"
_ORIGINS = {
    "libdlib19.1": "the example data of the dlib C++ library (Debian package libdlib19.1)",
    "python3-sklearn": "scikit-learn's sample images (Debian package python3-sklearn)",
    "python3-skimage": "scikit-image's sample data (Debian package python3-skimage)",
    "lomiri-wallpapers-16.04": "the Lomiri desktop wallpapers "
    "(Debian package lomiri-wallpapers-16.04)",
}
_SYSTEM_PROMPT = "You are a careful vision assistant. Answer briefly and precisely."


def _size(image: CatalogImage) -> tuple[str, str]:
    h = image.header
    question = pick(image.path + "size", ("What are the dimensions of this image?",
                                          "How large is this image in pixels?"))
    megapixels = f"{image.pixels / 1e6:.2f} megapixels"
    answer = f"It is {h.width} pixels wide and {h.height} pixels tall ({megapixels})."
    return question, answer


def _orientation(image: CatalogImage) -> tuple[str, str]:
    h = image.header
    question = "Is this picture in portrait or landscape orientation?"
    if h.orientation == "square":
        return question, f"Neither: it is square, {h.width} by {h.height} pixels."
    relation = "wider than it is tall" if h.orientation == "landscape" else "taller than it is wide"
    return question, f"{h.orientation.capitalize()}: it is {relation} ({h.width}x{h.height})."


def _colour(image: CatalogImage) -> tuple[str, str]:
    question = pick(image.path + "colour", ("Is this a colour or a greyscale image?",
                                            "Is this photo in colour or black and white?"))
    if image.header.is_greyscale:
        return question, "It is greyscale: the JPEG has a single luminance channel."
    return question, f"It is in colour: the JPEG has {image.header.components} colour components."


def _origin(image: CatalogImage) -> tuple[str, str]:
    coding = "progressive" if image.header.progressive else "baseline"
    return (
        "Where does this image come from?",
        f"It is {Path(image.path).name} from {_ORIGINS[image.package]}, stored as a {coding} JPEG "
        f"of {image.size_bytes} bytes.",
    )


def _described(image: CatalogImage) -> list[Turn] | None:
    if image.wallpaper:
        w = image.wallpaper
        return [
            Turn("user", f"{IMAGE_PLACEHOLDER}\nWhat is this wallpaper called, and who made it?"),
            Turn("assistant", f'It is "{w.title}" by {w.author}.'),
            Turn("user", "Under which license may I use it?"),
            Turn("assistant", f"The copyright file of lomiri-wallpapers lists it as copyright "
                              f"{w.copyright}, licensed under {w.license}."),
        ]
    if image.subject:
        question = pick(image.path + "subject", ("What does this photo show?",
                                                 "What is in this picture?"))
        return [
            Turn("user", f"{IMAGE_PLACEHOLDER}\n{question}"),
            Turn("assistant", f"It shows {image.subject}."),
        ]
    return None


def photo_fact_samples(images: list[CatalogImage]) -> list[Sample]:
    samples: list[Sample] = []
    for image in images:
        key = "photo-" + image.path.removesuffix(".jpg").replace("/", "-")
        if "/video_frames/" in image.path and stable_hash(key) % 3 == 0:
            continue
        facts = [_size(image), _orientation(image), _colour(image), _origin(image)]
        facts.sort(key=lambda fact: stable_hash(key + fact[0]))
        turns: list[Turn] = []
        for question, answer in facts[: 2 + stable_hash(key) % 2]:
            prefix = f"{IMAGE_PLACEHOLDER}\n" if not turns else ""
            turns += [Turn("user", prefix + question), Turn("assistant", answer)]
        if chance(key + "-system", 1, 3):
            turns.insert(0, Turn("system", _SYSTEM_PROMPT))
        samples.append(Sample(key, SOURCE, turns, [image.path]))
        described = _described(image)
        if described:
            samples.append(Sample(key + "-about", SOURCE, described, [image.path]))
    return samples
