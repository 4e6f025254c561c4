"""The lifecycle of a new memory after its save: merged into a duplicate, superseding an older value,
or raising a conflict for the person. This package is the pure part: what to decide, and on what.

The background worker finishes each pending memory in one write transaction, in three steps: the
store reads the memory and its nearest active neighbours into a :class:`Case`
(:func:`tallei_desktop.core.store.lifecycle_rows.gather_case`), :func:`decide` rules on it (the pair
model of :mod:`.pairs` lives there, the word signals in :mod:`.text`, what kind of thing a word
names in :mod:`.kinds`), and the store writes the :class:`Decision` with its change-feed events
(``lifecycle_rows.apply_decision``). Two processes
finishing one memory at once reach one result once: the second finds it processed.
"""

from __future__ import annotations

from tallei_desktop.core.lifecycle.decide import Candidate, Case, Decision, NewMemory, decide

__all__ = ["Candidate", "Case", "Decision", "NewMemory", "decide"]
