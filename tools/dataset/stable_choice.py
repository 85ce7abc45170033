"""Deterministic choices keyed by strings, the same on every machine and Python run.

Python's hash() is salted per process, so it cannot pick templates reproducibly.
"""

import hashlib
from typing import Sequence, TypeVar

T = TypeVar("T")


def stable_hash(key: str) -> int:
    return int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "big")


def pick(key: str, options: Sequence[T]) -> T:
    return options[stable_hash(key) % len(options)]


def chance(key: str, numerator: int, denominator: int) -> bool:
    return stable_hash(key) % denominator < numerator
