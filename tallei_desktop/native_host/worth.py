"""Whether a line the person typed is worth keeping as a memory: a statement of a lasting kind.

The extension's optional capture asks before it saves: a preference, fact, decision or lesson
stated as such is worth keeping; a question, a greeting or a thank-you is not, whatever type the
save-time classifier would give it.
"""

from __future__ import annotations

import re
from typing import Final

from tallei_desktop.core import MemoryType

__all__ = ["KEEPABLE_TYPES", "is_statement", "worth_keeping"]

KEEPABLE_TYPES: Final = frozenset(
    {MemoryType.PREFERENCE, MemoryType.FACT, MemoryType.DECISION, MemoryType.LESSON}
)

_QUESTION_START: Final = re.compile(
    r"^(what|what's|whats|how|why|when|where|who|whom|whose|which|can|could|would|should|shall|will|"
    r"do|does|did|is|are|was|were|am|have|has|had|may|might|must|isn't|aren't|don't|doesn't|didn't|"
    r"won't|wouldn't|can't|couldn't|shouldn't|any idea|tell me|explain|help me|please help)\b",
    re.IGNORECASE,
)
_CHATTER: Final = re.compile(
    r"^(hi|hello|hey|thanks|thank you|thx|ok|okay|cool|great|nice|sure|yes|no|yep|nope|lol|bye|"
    r"good (morning|afternoon|evening|night)|got it|sounds good|perfect|awesome)\b[\s!.,]*$",
    re.IGNORECASE,
)
_WORD: Final = re.compile(r"\w+")


def is_statement(text: str) -> bool:
    """False for questions (a question mark, or a question's opening words), chatter and fragments."""
    flat = " ".join(text.split())
    if len(_WORD.findall(flat)) < 3 or _CHATTER.match(flat):
        return False
    if "?" in flat:
        return False
    return not _QUESTION_START.match(flat)


def worth_keeping(text: str, memory_type: MemoryType) -> bool:
    return memory_type in KEEPABLE_TYPES and is_statement(text)
