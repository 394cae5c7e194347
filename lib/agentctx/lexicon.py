"""Words as retrieval sees them, standard library only: tokens, stems and spelling variants.

* ``tokens`` cuts text the way the FTS5 ``unicode61 remove_diacritics 2`` tokenizer does
  (letters and digits; ``_``, ``-``, ``.`` and every other symbol separate words; diacritics
  folded; lowercased), so the second ranking stage sees the words the index saw.
* ``stem`` is the Porter stemmer (the FTS5 ``porter`` tokenizer's algorithm, M. F. Porter 1980):
  "painting", "painted" and "paints" are one word on both sides of a match.
* ``variants`` are the spellings a record's own text does not spell out: hyphenated compounds
  joined ("de-stress" → "destress", "sign-in" → "signin") and identifiers split at case changes
  ("TestTransferConcurrent" → "test transfer concurrent"). They are indexed with the record
  (the ``terms`` column) and added to a prompt's words, so either spelling finds the other.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
# The spelling patterns are compiled on first use (``re`` keeps them compiled): a prompt without a hyphen
# never needs them, and compiling them at import cost every prompt hook ~0.3 ms.
_HYPHENATED = r"(?<![\w-])[^\W_]+(?:-[^\W_]+)+(?![\w-])"
# an identifier of letters only with an inner lower→upper change (never a token with digits: keys and
# hashes are not split into words)
_IDENT = r"(?<![\w-])[A-Za-z]*[a-z][A-Z][A-Za-z]*(?![\w-])"
_CAMEL_PART = r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+"
_HAS_HYPHENATED = r"[^\W_]-[^\W_]"  # what every _HYPHENATED match holds: a cheap test first
_HAS_IDENT = r"[a-z][A-Z]"  # what every _IDENT match holds
MIN_PART = 3
MAX_JOINED = 40


def fold(text: str) -> str:
    """Lowercase; diacritics removed (only non-ASCII text pays for it)."""
    text = text.lower()
    if text.isascii():
        return text
    import unicodedata

    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def tokens(text: str) -> list[str]:
    """The index's tokens of ``text``, in order (folded, unstemmed)."""
    return _TOKEN.findall(fold(text))


def joined(text: str) -> list[str]:
    """Hyphenated compounds of ``text`` written as one word ("de-stress" → "destress"), folded."""
    if "-" not in text or not re.compile(_HAS_HYPHENATED).search(text):
        return []
    out = (fold(m.group(0).replace("-", "")) for m in re.compile(_HYPHENATED).finditer(text))
    return list(dict.fromkeys(w for w in out if len(w) <= MAX_JOINED))


def variants(text: str, toks: list[str] | None = None) -> list[str]:
    """Distinct spellings ``text`` implies but does not contain: joined hyphenated compounds and the
    parts of camelCase / PascalCase identifiers (parts shorter than MIN_PART are dropped). ``toks``:
    ``tokens(text)`` when the caller has them already."""
    out: dict[str, None] = dict.fromkeys(joined(text))
    if re.compile(_HAS_IDENT).search(text):  # an identifier needs a lower → upper change
        for m in re.compile(_IDENT).finditer(text):
            for part in re.compile(_CAMEL_PART).findall(m.group(0)):
                if len(part) >= MIN_PART:
                    out[fold(part)] = None
    if not out:
        return []
    present = set(tokens(text) if toks is None else toks)
    return [w for w in out if w not in present]


# ------------------------------------------------------------------------------------------
# The Porter stemmer
# ------------------------------------------------------------------------------------------

_VOWELS = frozenset("aeiou")


def _cons(w: str, i: int) -> bool:
    ch = w[i]
    if ch in _VOWELS:
        return False
    if ch == "y":
        return i == 0 or not _cons(w, i - 1)
    return True


def _measure(stem: str) -> int:
    """m in [C](VC)^m[V]: the number of vowel-consonant sequences."""
    m, prev_vowel = 0, False
    for i in range(len(stem)):
        vowel = not _cons(stem, i)
        if prev_vowel and not vowel:
            m += 1
        prev_vowel = vowel
    return m


def _has_vowel(stem: str) -> bool:
    return any(not _cons(stem, i) for i in range(len(stem)))


def _double_cons(w: str) -> bool:
    return len(w) >= 2 and w[-1] == w[-2] and _cons(w, len(w) - 1)


def _cvc(w: str) -> bool:
    """Ends consonant-vowel-consonant, the last not w, x or y (e.g. -wil, -hop)."""
    n = len(w)
    return n >= 3 and _cons(w, n - 1) and not _cons(w, n - 2) and _cons(w, n - 3) and w[-1] not in "wxy"


_STEP2 = (("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"), ("izer", "ize"),
          ("bli", "ble"), ("alli", "al"), ("entli", "ent"), ("eli", "e"), ("ousli", "ous"), ("ization", "ize"),
          ("ation", "ate"), ("ator", "ate"), ("alism", "al"), ("iveness", "ive"), ("fulness", "ful"),
          ("ousness", "ous"), ("aliti", "al"), ("iviti", "ive"), ("biliti", "ble"), ("logi", "log"))
_STEP3 = (("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"), ("ical", "ic"), ("ful", ""),
          ("ness", ""))
_STEP4 = ("al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion", "ou", "ism",
          "ate", "iti", "ous", "ive", "ize")


def _replace(w: str, rules, min_m: int) -> str:
    for suffix, repl in rules:
        if w.endswith(suffix):
            stem = w[: -len(suffix)]
            return stem + repl if _measure(stem) > min_m - 1 else w
    return w


def _stem(w: str) -> str:
    # step 1a
    if w.endswith("sses"):
        w = w[:-2]
    elif w.endswith("ies"):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith("ss"):
        w = w[:-1]
    # step 1b
    if w.endswith("eed"):
        if _measure(w[:-3]) > 0:
            w = w[:-1]
    else:
        for suffix in ("ed", "ing"):
            if w.endswith(suffix) and _has_vowel(w[: -len(suffix)]):
                w = w[: -len(suffix)]
                if w.endswith(("at", "bl", "iz")):
                    w += "e"
                elif _double_cons(w) and w[-1] not in "lsz":
                    w = w[:-1]
                elif _measure(w) == 1 and _cvc(w):
                    w += "e"
                break
    # step 1c
    if w.endswith("y") and _has_vowel(w[:-1]):
        w = w[:-1] + "i"
    w = _replace(w, _STEP2, 1)
    w = _replace(w, _STEP3, 1)
    # step 4
    for suffix in _STEP4:
        if w.endswith(suffix):
            stem = w[: -len(suffix)]
            if _measure(stem) > 1 and (suffix != "ion" or stem.endswith(("s", "t"))):
                w = stem
            break
    # step 5
    if w.endswith("e"):
        stem = w[:-1]
        m = _measure(stem)
        if m > 1 or (m == 1 and not _cvc(stem)):
            w = stem
    if w.endswith("ll") and _measure(w) > 1:
        w = w[:-1]
    return w


_CACHE: dict[str, str] = {}


def stems(toks: list[str]) -> list[str]:
    """``stem`` of each token, in order (the cache looked up inline: a pass stems millions of tokens)."""
    get = _CACHE.get
    return [get(t) or stem(t) for t in toks]


def stem(word: str) -> str:
    """The Porter stem of a lowercase token (tokens of 1–2 letters and non-ASCII ones unchanged)."""
    got = _CACHE.get(word)
    if got is None:
        got = word if len(word) <= 2 or not word.isascii() or not word.isalpha() else _stem(word)
        if len(_CACHE) < 50_000:
            _CACHE[word] = got
    return got
