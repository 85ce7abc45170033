"""One SFT sample as a conversation, and its two on-disk styles (ShareGPT and OpenAI chat).

Roles are "system", "user" and "assistant"; ShareGPT spells them "system", "human" and "gpt".
Images are paths relative to the dataset's images directory; the user turns carry one
IMAGE_PLACEHOLDER per image, in the order of the image list.
"""

from dataclasses import dataclass, field

IMAGE_PLACEHOLDER = "<image>"
SHAREGPT_ROLE = {"system": "system", "user": "human", "assistant": "gpt"}


@dataclass(frozen=True)
class Turn:
    role: str
    text: str


@dataclass
class Sample:
    id: str
    source: str  # the real document the sample is derived from, e.g. "debian-faq"
    turns: list[Turn]
    images: list[str] = field(default_factory=list)

    def validate(self) -> None:
        """Raises ValueError naming the sample when it would be rejected by a loader."""
        roles = [t.role for t in self.turns]
        if not self.turns:
            raise ValueError(f"{self.id}: no turns")
        if "assistant" not in roles:
            raise ValueError(f"{self.id}: no assistant turn")
        for turn in self.turns:
            if turn.role not in SHAREGPT_ROLE:
                raise ValueError(f"{self.id}: unknown role {turn.role!r}")
            if not turn.text.strip():
                raise ValueError(f"{self.id}: empty {turn.role} turn")
        placeholders = sum(t.text.count(IMAGE_PLACEHOLDER) for t in self.turns if t.role == "user")
        stray = sum(t.text.count(IMAGE_PLACEHOLDER) for t in self.turns if t.role != "user")
        if placeholders != len(self.images) or stray:
            raise ValueError(
                f"{self.id}: {placeholders} user and {stray} other {IMAGE_PLACEHOLDER} "
                f"placeholders for {len(self.images)} images"
            )

    @property
    def is_text_only(self) -> bool:
        return not self.images

    def characters(self) -> int:
        return sum(len(t.text) for t in self.turns)

    def to_sharegpt(self) -> dict:
        record: dict = {
            "id": self.id,
            "conversations": [{"from": SHAREGPT_ROLE[t.role], "value": t.text} for t in self.turns],
        }
        if len(self.images) == 1:
            record["image"] = self.images[0]
        elif self.images:
            record["images"] = list(self.images)
        return record

    def to_openai(self) -> dict:
        if self.images:
            raise ValueError(f"{self.id}: the OpenAI style here is text-only")
        return {"messages": [{"role": t.role, "content": t.text} for t in self.turns]}
