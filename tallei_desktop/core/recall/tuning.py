"""Every constant recall and search rank by, in one frozen value: :class:`RecallTuning`.

The pure ranking (:mod:`.rank`) and the store's reads (:mod:`tallei_desktop.core.store.gather`) take
a ``tuning`` argument and read nothing else, so a benchmark can compare variants on one store
(``bench/ablate_recall.py``) without patching modules. :data:`DEFAULT_TUNING` is what the program
uses. Each field's comment says what it does and why it has its value; docs/recall.md lists them
with what each one is measured to be worth.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

__all__ = ["DEFAULT_TUNING", "RecallTuning"]


@dataclass(frozen=True, slots=True)
class RecallTuning:
    """The ranking constants of recall and search. Similarities are cosines of MiniLM vectors
    (unrelated sentences ≈ 0.0–0.25, related ≈ 0.4–0.6); bm25 values are normalised to the best text
    hit (= 1) before any weight applies."""

    #: The e-folding time of activity and recency, in days. DESIGN fixes it ("half-life-like constant
    #: of 21 days, so stale memories fade").
    activity_decay_days: float = 21.0
    #: Reference count at which activity saturates: a memory used 20 times is as active as it gets,
    #: so a handful of heavily used memories cannot outrank every match.
    activity_saturation: int = 20

    #: Long-term hybrid score, semantic search on: weight of vector similarity (ADR 0002). Meaning
    #: first, as people paraphrase.
    w_vector: float = 0.55
    #: ... weight of normalised bm25: people reuse exact words (names, places), DESIGN asks for both.
    w_bm25: float = 0.30
    #: ... weight of activity: what is used often matters, but never more than a match.
    w_activity: float = 0.15
    #: Hybrid score with semantic search off: the vector share moves to bm25.
    w_bm25_text_only: float = 0.80
    #: Hybrid score with semantic search off: activity's share.
    w_activity_text_only: float = 0.20

    #: Cosine similarity from which a returned memory counts as a hit of the query (its reference
    #: count grows when an assistant is given it). Not a ranking input: it decides what "use" means.
    match_similarity: float = 0.45
    #: An older event or an archived memory joins a dump-all only when it matches at least this well
    #: (or is a text hit): dump-all returns every long-term memory, extras must earn a place.
    extra_similarity: float = 0.50
    #: In hybrid mode an older event or archived memory joins the long-term ranking from this
    #: similarity (or as a text hit): ranked with everything else, a weak match still loses to a
    #: better one, but DESIGN says age must never hide a match.
    hybrid_extra_similarity: float = 0.30
    #: Short-term order without a query: recency, nudged by this share of how well a memory matches.
    #: (For a specific query the order is how well each matches, the newest first among equals.)
    short_term_match_weight: float = 0.3

    #: Saved alongside: how many of the best matches (by similarity or normalised bm25) lend rank to
    #: the memories saved next to them, the rest of a message saved in pieces or the other half of an
    #: exchange. 0 turns the rule off.
    alongside_seeds: int = 40
    #: ... how many saves away (before and after) a seed reaches, through an unbroken run.
    alongside_reach: int = 4
    #: ... the share of the seed's strength each save in the run ranks with (below the seed, so a
    #: memory that matches as well on its own still comes first).
    alongside_share: float = 0.9
    #: ... two saves are next to each other only when the same assistant made them within this many
    #: seconds, both in when they were saved and in when they happened (also used by search's answer
    #: rule): a run of saves is one message or one exchange, not a day's work.
    alongside_seconds: float = 120.0

    #: Search: a memory that ends in a question mark asks rather than tells, yet resembles the
    #: question looking for its answer, so it scores this share of itself.
    asking_share: float = 0.8
    #: Search: the memory saved right after one of the best-scoring this many asking memories (same
    #: assistant, within ``alongside_seconds``) is likely its answer. 0 turns the rule off.
    answer_seeds: int = 5
    #: ... and scores at least this share of the question's own score.
    answer_share: float = 0.9
    #: Search score: weight of similarity. Search has no activity term: a person searching wants the
    #: best match, not the most used one.
    search_w_vector: float = 0.6
    #: Search score: weight of normalised bm25.
    search_w_bm25: float = 0.4
    #: Search: the similarity a memory that is no text hit needs to be a hit at all (MiniLM puts
    #: unrelated sentences below it). Recall's "more matches" use the same bar.
    search_min_similarity: float = 0.3

    #: Recall reads the nearest this many vectors (preferences aside), DESIGN's figure; text hits
    #: and what was saved alongside the best matches join them. 200 filled blocks more in stores of
    #: one conversation but paid nothing in the merged one (docs/recall.md).
    vector_k: int = 25
    #: Recall reads the best this many text hits per part (preferences, long-term pool, window).
    bm25_k: int = 50
    #: The newest long-term memories always in the hybrid pool, so one saved a moment ago (no
    #: embedding yet) is still recalled (DESIGN).
    recent_k: int = 5
    #: The newest in-window memories considered for the short-term bucket (its budget holds fewer).
    short_term_recent_k: int = 300

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if value < 0:
                raise ValueError(f"RecallTuning.{f.name} is {value}; every field must be 0 or more.")


#: The tuning the program runs with.
DEFAULT_TUNING = RecallTuning()
