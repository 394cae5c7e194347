"""Sentence vectors of a model2vec model, worked out as model2vec works them out, faster.

model2vec encodes a text by cutting it to ``max_length × median_token_length`` characters, tokenizing it
(the tokenizer truncates to ``max_length`` tokens), dropping the unknown token and averaging the token
vectors, all in the model's dtype (often float16, whose arithmetic numpy emulates). At 100k records
that was most of the consolidation pass's embedding time. :class:`Encoder` gives the same token ids and
the same average, in float32:

* **Plain text** (printable ASCII, tabs and newlines, none of the tokenizer's added tokens such as
  ``[CLS]``) under a BERT-style tokenizer (``BertNormalizer`` lower-casing, ``BertPreTokenizer``,
  ``WordPiece``, nothing padded) is cut into words and punctuation marks as that pre-tokenizer cuts it, and each
  distinct word is tokenized once by the model's own tokenizer and remembered: the ids are those the
  tokenizer gives for the whole text (checked on 100,000 records of the benchmark store: none differ).
* **Any other text**, or another tokenizer, goes through the tokenizer itself.
* The vectors are summed per text in float32 (a text's direction is its average's, and callers
  normalise), with the model's token mapping and token weights applied as model2vec applies them.
"""

from __future__ import annotations

import json
import re
from itertools import chain

PLAIN = re.compile(r"[\t\n\r -~]*\Z")  # printable ASCII and the whitespace BertNormalizer turns into spaces
# BertPreTokenizer on that text: runs of letters and digits, each ASCII punctuation mark alone
# (whitespace splits and goes).
PIECE = re.compile(r"[a-z0-9]+|[!-/:-@\[-`{-~]")
CHUNK_TOKENS = 16_384  # token vectors gathered at once (16 MB at 256 dimensions)
MAX_WORDS = 200_000  # distinct words remembered, then the memory starts again


def bert_like(tokenizer) -> bool:
    """Whether ``tokenizer`` (a ``tokenizers.Tokenizer``) cuts plain text as :data:`PIECE` does and gives
    each piece the ids WordPiece gives it alone: a lower-casing BertNormalizer, the BertPreTokenizer, a
    WordPiece model, no padding (model2vec sets a fixed padding to length 0, which pads nothing)."""
    try:
        spec = json.loads(tokenizer.to_str())
    except Exception:  # noqa: BLE001 - anything unreadable means: let the tokenizer do it
        return False
    norm, pre, model = spec.get("normalizer") or {}, spec.get("pre_tokenizer") or {}, spec.get("model") or {}
    return (norm.get("type") == "BertNormalizer" and norm.get("lowercase") is True
            and pre.get("type") == "BertPreTokenizer" and model.get("type") == "WordPiece"
            and (spec.get("padding") or {}).get("strategy", {"Fixed": 0}) == {"Fixed": 0})


class Encoder:
    """``encode(texts)``: a float32 row per text, the sum of its token vectors (zeros when it has none)."""

    def __init__(self, model, table):
        """``model``: a loaded ``model2vec.StaticModel``; ``table``: its token vectors as float32."""
        import numpy as np

        self._tokenizer = model.tokenizer
        self.max_tokens = model.max_length
        per_token = getattr(model, "median_token_length", None)  # model2vec cuts the text first where it knows it
        self.max_chars = None if model.max_length is None or not per_token else model.max_length * per_token
        self.unknown = model.unk_token_id
        if model.token_mapping is not None:
            table = table[np.asarray(model.token_mapping)]
        if model.weights is not None:
            table = table * np.asarray(model.weights, dtype=np.float32)[:, None]
        self._rows = np.ascontiguousarray(table, dtype=np.float32)  # token id -> the vector it adds
        self.dim = int(self._rows.shape[1])
        self._plain = bert_like(self._tokenizer)
        try:
            self._added = [t.content for t in self._tokenizer.get_added_tokens_decoder().values()]
        except AttributeError:  # an older tokenizers: its added tokens unknown, so every text goes through it
            self._plain, self._added = False, []
        self._words: dict[str, list[int]] = {}
        tok = self._tokenizer  # encode_batch_fast, where this tokenizers has it, leaves out offsets never read here
        self._batch = tok.encode_batch_fast if hasattr(tok, "encode_batch_fast") else tok.encode_batch

    def _pieces(self, text: str) -> list[int]:
        """The ids of a plain text: each word's own, from memory or from the tokenizer once."""
        words = self._words
        pieces = PIECE.findall(text.lower())
        got = list(map(words.get, pieces))
        if None in got:
            if len(words) + len(pieces) > MAX_WORDS:
                words.clear()
            for i, piece in enumerate(pieces):
                if got[i] is None:
                    got[i] = words[piece] = self._tokenizer.encode(piece, add_special_tokens=False).ids
        return list(chain.from_iterable(got))

    def _is_plain(self, text: str) -> bool:
        if not self._plain or PLAIN.match(text) is None:
            return False
        lowered = text.lower()  # an added token matched before or after lower-casing: the tokenizer's business
        return not any(t in text or t.lower() in lowered for t in self._added)

    def ids(self, texts: list[str]) -> list[list[int]]:
        """Each text's token ids as model2vec keeps them: cut, tokenized, truncated, unknown token dropped."""
        if self.max_chars is not None:
            texts = [t[: self.max_chars] for t in texts]
        out: list[list[int] | None] = [None] * len(texts)
        other = []
        for i, text in enumerate(texts):
            if self._is_plain(text):
                out[i] = self._pieces(text)
            else:
                other.append(i)
        if other:
            for i, enc in zip(other, self._batch([texts[i] for i in other], add_special_tokens=False), strict=True):
                out[i] = enc.ids
        kept = []
        for ids in out:
            if self.max_tokens is not None:
                ids = ids[: self.max_tokens]  # the tokenizer's truncation (the ids of a plain text, too)
            kept.append([t for t in ids if t != self.unknown] if self.unknown is not None and self.unknown in ids
                        else ids)
        return kept

    def encode(self, texts: list[str]):
        """Float32 rows, each the sum of its text's token vectors."""
        import numpy as np

        ids = self.ids(list(texts))
        out = np.zeros((len(ids), self.dim), dtype=np.float32)
        by_length: dict[int, list[int]] = {}
        for i, x in enumerate(ids):
            if x:
                by_length.setdefault(len(x), []).append(i)
        for n, rows in by_length.items():  # texts of one length summed together, CHUNK_TOKENS at a time (memory)
            step = max(1, CHUNK_TOKENS // n)
            for first in range(0, len(rows), step):
                part = rows[first:first + step]
                matrix = np.fromiter(chain.from_iterable(ids[i] for i in part), dtype=np.int64, count=n * len(part))
                out[part] = self._rows[matrix.reshape(len(part), n)].sum(axis=1)
        return out
