"""Memory type classification at save time.

Contract:

- ``classify(text)`` returns one of the seven ``MemoryType`` values for any string. It is pure and
  deterministic: the same text always gets the same type (the trained n-gram model of
  :mod:`tallei_desktop.core.type_model`, whose weights ship in the package and are read once).
  Text without a word (empty, whitespace, punctuation) is a ``FACT``, the default type.
- ``rule_type(text)`` is the earlier hand-written classifier, kept as the baseline the model is
  measured against (bench/train_types.py); ``explain(text)`` returns its score for every type, and
  ``rule_type`` picks the highest, a tie going to the type earlier in ``PRECEDENCE``. Its matching
  is case-insensitive and tolerant of punctuation, typographic quotes and Unicode compatibility forms.

Each rule type has weighted cue patterns and every cue counts once. The weights encode which cue wins
when cues collide: an explicit failure ("crashed") outweighs a time word ("yesterday"), a lesson
framing ("learned that") outweighs the failure it describes, and a commitment ("we decided")
outweighs the date it was made on.
"""

from __future__ import annotations

import re

from tallei_desktop.core.models import MemoryType
from tallei_desktop.core.type_model import features, load_model, normalise

__all__ = ["PRECEDENCE", "classify", "explain", "rule_type"]

#: Tie-break order: the more specific, longer-lived types first, the default last.
PRECEDENCE: tuple[MemoryType, ...] = (
    MemoryType.FAILURE,
    MemoryType.LESSON,
    MemoryType.DECISION,
    MemoryType.PREFERENCE,
    MemoryType.EVENT,
    MemoryType.NOTE,
    MemoryType.FACT,
)

# Fact is what a memory is when nothing else speaks up, so it starts with a score that a single
# weak cue (a bare month, a hedge word) cannot beat on its own.
_FACT_BASELINE = 1.5

_Cue = tuple[re.Pattern[str], float]

_DAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_ORDINAL = r"\d{1,2}(?:st|nd|rd|th)?"


def _cues(*pairs: tuple[str, float]) -> tuple[_Cue, ...]:
    return tuple((re.compile(pattern), weight) for pattern, weight in pairs)


# Patterns run on casefolded text, so they are written in lower case.
_CUES: dict[MemoryType, tuple[_Cue, ...]] = {
    MemoryType.PREFERENCE: _cues(
        (r"\b(?:call|refer to|address) me\b|\bmy name is\b|\bi go by\b|\bpronouns\b", 5.0),
        (r"\bi(?: really| much| strongly)? (?:prefer|like|love|enjoy|hate|dislike|adore)\b", 3.0),
        (r"\b(?:prefers|likes|loves|enjoys|hates|dislikes)\b", 3.0),
        (r"\bprefer(?:red|ence|ably)?\b", 2.5),
        (r"\bfavou?rite\b|\bof choice\b|\bgo-to\b|\bfan of\b", 3.5),
        (r"\bi'?d (?:rather|like|prefer)\b|\bwould (?:rather|like|prefer)\b", 3.0),
        (r"\b(?:a|an) (?:\w+ )?person\b|\bstick (?:to|with)\b", 2.5),
        (r"\b(?:always|never) use\b|\bdefault to\b", 3.5),
        (r"\bi (?:usually|always|tend to) (?:go for|pick|choose|get|take|order|book)\b", 3.0),
        (r"\bwants?\b", 1.5),
        # Wording aimed at the assistant itself marks a standing instruction, i.e. a setting.
        (r"\b(?:answers?|responses?|repl(?:y|ies)|respond|explanations?|emojis?)\b", 2.0),
        (r"\b(?:to|for|with) me\b|\bwhen you\b|\bplease\b", 2.0),
        (r"\bwhen (?:suggesting|recommending|writing|answering|explaining|talking)\b", 2.0),
        (r"\b(?:dark|light) mode\b|\bmetric\b|\bimperial\b|\bcelsius\b|\bfahrenheit\b", 2.5),
        (r"\b(?:tabs|spaces|snake_case|camelcase)\b", 1.5),
        (r"\b(?:vegetarian|vegan|pescatarian|gluten-free|halal|kosher)\b", 2.5),
        (r"^(?:please )?(?:always |never )?(?:use|answer|reply|format|show|write|keep)\b", 2.0),
        (r"\bin (?:all )?my (?:projects?|code|repos?|emails?|messages?)\b", 1.5),
    ),
    MemoryType.DECISION: _cues(
        (r"\bdecid(?:e|ed|ing)\b|\bdecision\b|\bmade up (?:my|our|their) minds?\b", 5.0),
        (r"\bfinal call\b|\bruled out\b|\bvoted\b|\bsettled on\b", 4.0),
        (r"\b(?:go|going|went) with\b", 3.5),
        (r"\b(?:chose|chosen|opted|picked|selected|adopt(?:ed|ing)?)\b", 3.0),
        (r"\bagreed\b|\bcommitted to\b|\bapproved\b|\bsigned off\b|\baccepted\b", 3.0),
        (r"\bfrom now on\b|\b(?:going|moving) forward\b|\bhenceforth\b|\bno more\b", 3.0),
        (r"\bthe plan is\b|\bplan(?:ning)? to\b|\bwe plan\b", 2.5),
        (r"\bwe(?:'ll| will| are going to|'re going to)\b|\bi'?m going to\b", 3.0),
        (r"\b(?:switch|switching|moving|migrate|migrating|moves) (?:from|to)\b", 2.5),
        (r"\bwe(?:'re| are) (?:switching|moving|migrating|consolidating|dropping)\b", 2.5),
        (r"\binstead of\b|\brather than\b|\bsettled\b|\bstop using\b", 1.5),
    ),
    MemoryType.EVENT: _cues(
        (
            r"\b(?:yesterday|today|tonight|tomorrow|last night|earlier today|the other day"
            r"|over the weekend|this (?:morning|afternoon|evening)|\w+ (?:days?|weeks?|months?) ago"
            r"|(?:last|next|this) (?:week|weekend|month|year|" + _DAY + r"))\b",
            3.0,
        ),
        # A calendar date says when, not that something happened: on its own it stays below the
        # fact baseline ("[8 May] Ana: I love that book" is no event); with an occurrence cue it counts.
        (
            r"\b" + _ORDINAL + r" (?:of )?" + _MONTH + r"\b|\b" + _MONTH + r" " + _ORDINAL + r"\b",
            1.0,
        ),
        (
            r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b|\bon the \d{1,2}(?:st|nd|rd|th)\b",
            1.0,
        ),
        (r"\b(?:on|since|until|by) (?:the )?" + _ORDINAL + r" (?:of )?" + _MONTH + r"\b", 1.0),
        (r"\b(?:pushed|postponed|rescheduled|brought forward|moved) (?:back |up )?to\b", 1.5),
        (r"\b(?:on|this|last|next|starting) " + _DAY + r"\b", 2.5),
        (r"\b" + _DAY + r"\b", 1.0),
        (r"\bin (?:early |mid-?|late )?" + _MONTH + r"\b", 1.0),
        (r"\bat (?:midnight|noon|\d{1,2}(?::\d{2})?\s?(?:am|pm)?)\b|\b\d{1,2}\s?(?:am|pm)\b", 1.5),
        (r"\bthe meeting\b|\bappointment\b|\bscheduled\b|\bhappened\b|\btook place\b", 2.5),
        (
            (
                r"\b(?:meeting|call|interview|conference|offsite|stand-?up|retro|kick-?off|demo"
                r"|presentation|party|wedding|birthday|dinner|concert|exam|check-?up|surgery"
                r"|session|1:1|one-on-one|all-hands|hackathon|vaccines?|booster)\b"
            ),
            1.0,
        ),
        (
            (
                r"^(?:had|went|got|took|started|moved|flew|visited|shipped|released|launched"
                r"|demoed|presented|met|attended|onboarded|upgraded|renewed|signed|paired|ran"
                r"|landed|arrived|celebrated|kicked off)\b"
            ),
            1.5,
        ),
        # Recurring times describe a standing fact ("we talk every Sunday"), not an occurrence.
        (r"\bevery (?:day|week|month|year|" + _DAY + r")\b|\b(?:daily|weekly|nightly)\b", -2.0),
    ),
    MemoryType.NOTE: _cues(
        (
            (
                r"^(?:note(?: to self)?|n\.?b\.?|todo|to-do|idea|fyi|reminder|bookmark|memo"
                r"|random thought|jotting this down|draft idea)\b"
            ),
            4.0,
        ),
        (r"\bnote to self\b|\btodo\b|\bfyi\b|\bidea\b|\bjot(?:ting)?\b", 3.0),
        (r"\bremember to\b|\breminder\b|\bkeep an eye on\b|\bto read\b|\bread later\b", 2.5),
        (r"\blook (?:into|up|at)\b|\binvestigate\b|\bneeds? (?:verifying|checking)\b", 2.0),
        (r"\blater\b|\bsometime\b|\bat some point\b|\bworth (?:trying|checking|a look)\b", 2.0),
        (r"\bwonder(?:ing)?\b|\bnot sure\b|\bconsider(?:ing)?\b|\bthinking (?:about|of)\b", 3.0),
        (r"\b(?:might|maybe|perhaps|possibl[ey]|probably|apparently)\b", 2.0),
        (r"\bcould (?:be|try|look|add|use)\b", 2.0),
        (r"\bseems?\b|\blooks? (?:like|a bit)\b|\bfeels?\b|\bi (?:think|guess)\b", 2.0),
        (r"\bcould\b|\bshould\b|\bneed to\b|\binteresting\b|\bcheck\b", 1.0),
    ),
    MemoryType.LESSON: _cues(
        (r"\bbest practices?\b|\bgood practice\b|\brule of thumb\b|\blessons?\b", 5.0),
        (r"\btakeaways?\b|\blearn(?:ed|t|ing)\b|\bthe hard way\b|\bin hindsight\b", 5.0),
        (r"\balways remember to\b|\bnever do\b|\bwhat (?:worked|didn'?t work)\b", 5.0),
        (r"\bnext time\b|\bfrom experience\b|\brealis(?:e|ed)\b|\brealiz(?:e|ed)\b", 3.5),
        (r"\bshould(?: not)? have\b|\bshould'?ve\b|\bshouldn'?t have\b", 3.5),
        (r"\b(?:it'?s |is )?better to\b|\bturns out\b|\bfound out\b", 3.0),
        (r"\b(?:saves?|saved) (?:you|us|me)\b", 2.5),
        (r"^(?:never|always|avoid|don'?t|do not)\b", 2.5),
        (r"\botherwise\b|\bor else\b", 2.5),
        (r"\b(?:only )?(?:helps|works) (?:if|when)\b|\bkeeps? .+ away\b", 1.5),
        # Only past the first word: a leading "always"/"never" is scored by the imperative cue.
        (r"\w\W+(?:always|never)\b(?! use)", 1.5),
    ),
    MemoryType.FAILURE: _cues(
        (r"\bcrash(?:ed|es|ing)?\b|\boutages?\b|\bpost-?mortem\b|\bregressions?\b", 4.5),
        (r"\bincident\b|\bbroke\b|\bbroken\b|\bfail(?:ed|s|ing|ure|ures)?\b", 4.0),
        (r"\bbreaks\b|\bwent down\b|\bdown for\b|\btook down\b|\bbrought .+ down\b", 3.0),
        (r"\bcorrupt(?:ed|ion)?\b|\bwiped\b|\bdata loss\b|\bsegfault\b|\bmemory leak\b", 3.0),
        (r"\btimed out\b|\b5\d\d(?:s| errors?)\b|\bran out of\b|\bout of (?:disk|memory)\b", 3.0),
        (r"\boom\b|\bchoked\b|\bbounc(?:ed|ing)\b", 2.0),
        (r"\b(?:reverted|rolled back|rejected|cancell?ed|exploded|collapsed|leaked|killed)\b", 2.5),
        # Past inability ("couldn't log in") is an incident; "can't" is usually a constraint.
        (r"\bcouldn'?t\b|\bdied\b|\bdropp(?:ed|ing)\b|\blost\b|\bstopped\b", 2.0),
        (r"\bbugs?\b|\berrors?\b|\bis red\b|\bwent badly\b|\bwent wrong\b|\bfroze\b", 2.0),
        (r"\bsilently\b|\bmissed\b|\bdelayed\b|\bdouble-\w+\b|\bdrop in\b|\bflooded\b", 1.5),
    ),
    MemoryType.FACT: _cues(
        (r"\b(?:is|am|are) (?:allergic|a|an)\b|\byears old\b|\bintoleran(?:t|ce)\b", 1.0),
        (r"\b(?:live|lives|living|work|works|working) (?:in|at|as|for)\b|\bspeak\b", 1.0),
    ),
}


def explain(text: str) -> dict[MemoryType, float]:
    """The rules' score of every type for ``text``, in ``PRECEDENCE`` order; ``rule_type`` picks the top."""
    normalised = normalise(text)
    scores: dict[MemoryType, float] = {}
    for memory_type in PRECEDENCE:
        score = _FACT_BASELINE if memory_type is MemoryType.FACT else 0.0
        for pattern, weight in _CUES[memory_type]:
            if pattern.search(normalised):
                score += weight
        scores[memory_type] = score
    return scores


def classify(text: str) -> MemoryType:
    """The memory type of ``text`` by the trained model; ``FACT`` for text without a word."""
    if features(text)[0].size == 0:
        return MemoryType.FACT
    return load_model().classify_text(text)


def rule_type(text: str) -> MemoryType:
    """The type the hand-written rules give ``text``: the best-scoring type, ``FACT`` when no cue applies."""
    scores = explain(text)
    # max() keeps the first of equal scores, and scores are in PRECEDENCE order.
    return max(scores, key=scores.__getitem__)
