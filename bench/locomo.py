"""Reading the LoCoMo conversations (Maharana et al., ACL 2024) into plain turns and questions.

Only the benchmark reads this format; the program never sees it, it only receives the memories the
benchmark saves. The file is a list of samples, each with ``conversation`` (``session_N`` lists of
turns with ``speaker``, ``dia_id``, ``text`` and an optional ``blip_caption``, and
``session_N_date_time`` such as "1:56 pm on 8 May, 2023") and ``qa`` (``question``, ``answer``,
``category``, ``evidence`` as a list of ``dia_id``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

__all__ = [
    "CATEGORIES",
    "FORMATS",
    "Conversation",
    "Question",
    "Turn",
    "load_conversations",
    "memory_texts",
    "split_sentences",
]

#: Question categories as the LoCoMo evaluations commonly name them; 5 (adversarial: the answer is
#: not in the conversation) has no evidence to retrieve and is left out.
CATEGORIES: dict[int, str] = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
#: How a turn becomes memory text: dated "[8 May 2023] Caroline: …", plain "Caroline: …", or the
#: dated form split into one memory per sentence.
FORMATS = ("dated", "plain", "sentences")

_SESSION = re.compile(r"^session_(\d+)$")
_DIA_ID = re.compile(r"D\d+:\d+")
# A sentence ends at . ! or ? followed by space and what looks like the start of the next one,
# unless the dot closes a title ("Dr. Seuss").
_SENTENCE_END = re.compile(
    r"(?<=[.!?])(?<!\bMr\.)(?<!\bMrs\.)(?<!\bMs\.)(?<!\bDr\.)(?<!\bSt\.)\s+(?=[\"'(\[]?[A-Z0-9])"
)


@dataclass(frozen=True, slots=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    session: int
    #: The session's time as the data set gives it, read as UTC.
    at: datetime
    #: The session's date as a person would write it, e.g. "8 May 2023".
    date_label: str


@dataclass(frozen=True, slots=True)
class Question:
    text: str
    category: int
    #: The ``dia_id`` of every turn the answer rests on, as listed (some may name no turn).
    evidence: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Conversation:
    sample_id: str
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]


def _session_time(label: str) -> datetime:
    # "1:56 pm on 8 May, 2023"
    return datetime.strptime(" ".join(label.split()), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def _turn_text(raw: dict[str, Any]) -> str:
    text = " ".join(str(raw.get("text", "")).split())
    caption = " ".join(str(raw.get("blip_caption") or "").split())
    # A shared photo is part of what was said: many answers rest on what the photo showed.
    return f"{text} (shares a photo: {caption})" if caption else text


def _conversation(sample: dict[str, Any]) -> Conversation:
    conv = sample["conversation"]
    sessions = sorted(
        (int(m.group(1)), key) for key in conv if (m := _SESSION.match(key)) and isinstance(conv[key], list)
    )
    turns: list[Turn] = []
    for number, key in sessions:
        if not conv[key]:
            continue
        at = _session_time(str(conv[f"{key}_date_time"]))
        label = f"{at.day} {at:%B %Y}"
        for i, raw in enumerate(conv[key]):
            # One second apart keeps the turns of a session in their order.
            turns.append(
                Turn(
                    str(raw["dia_id"]),
                    str(raw["speaker"]),
                    _turn_text(raw),
                    number,
                    at + timedelta(seconds=i),
                    label,
                )
            )
    questions = tuple(
        Question(
            str(qa["question"]),
            int(qa["category"]),
            # A few evidence entries pack several ids into one string ("D8:6; D9:17").
            tuple(ident for entry in qa.get("evidence", []) for ident in _DIA_ID.findall(str(entry))),
        )
        for qa in sample.get("qa", [])
        if int(qa["category"]) in CATEGORIES
    )
    return Conversation(str(sample["sample_id"]), tuple(turns), questions)


def load_conversations(path: Path) -> list[Conversation]:
    """Every conversation in the LoCoMo JSON file at ``path``, questions of category 5 left out."""
    samples = json.loads(path.read_text(encoding="utf-8"))
    return [_conversation(sample) for sample in samples]


def split_sentences(text: str) -> list[str]:
    """``text`` cut at sentence ends; a text without one is a single sentence."""
    return [s for s in (part.strip() for part in _SENTENCE_END.split(text)) if s]


def memory_texts(turn: Turn, fmt: str) -> list[str]:
    """The memories one turn becomes in format ``fmt`` (one of :data:`FORMATS`)."""
    if fmt == "plain":
        return [f"{turn.speaker}: {turn.text}"]
    if fmt == "dated":
        return [f"[{turn.date_label}] {turn.speaker}: {turn.text}"]
    if fmt == "sentences":
        return [f"[{turn.date_label}] {turn.speaker}: {s}" for s in split_sentences(turn.text)]
    raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
