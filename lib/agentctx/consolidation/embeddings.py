"""Sentence embeddings with model2vec (static embeddings: no torch, ~ms per batch on a CPU).

The model is ``AGENTCTX_EMBED_MODEL`` (a local model2vec folder or a Hugging Face id), else
``DEFAULT_MODEL``, downloaded once into ``<data dir>/models`` with a one-line notice and used
offline afterwards. Each record is embedded as ``[type] title + body`` with a share of its session
neighbours (``encode_records``); a query as plain text.
"""

from __future__ import annotations

import os
import time

from agentctx import paths
from agentctx.logs import log

DEFAULT_MODEL = "minishlab/potion-base-8M"
BODY_CHARS = 1200  # a static model averages token vectors: the head of a long body carries its meaning
MODEL_FILES = ("config.json", "tokenizer.json")
RETRY_DOWNLOAD_S = 6 * 3600  # after a failed download (offline), try again this much later


class EmbeddingError(RuntimeError):
    """No usable model (missing, not a model2vec folder, download impossible); the message says which."""


def source() -> str:
    """The configured model: a folder or a hub id."""
    return os.environ.get("AGENTCTX_EMBED_MODEL", "").strip() or DEFAULT_MODEL


def _is_model_dir(folder: str) -> bool:
    return all(os.path.isfile(os.path.join(folder, f)) for f in MODEL_FILES) and any(
        f.endswith(".safetensors") for f in os.listdir(folder))


def cache_dir() -> str:
    return paths.sub("models")


def _cached(repo_id: str) -> str | None:
    """The snapshot folder of a downloaded hub model, if any."""
    base = os.path.join(cache_dir(), "models--" + repo_id.replace("/", "--"), "snapshots")
    try:
        for name in sorted(os.listdir(base)):
            if _is_model_dir(os.path.join(base, name)):
                return os.path.join(base, name)
    except OSError:
        pass
    return None


def resolve(name: str | None = None, *, download: bool = True) -> str:
    """A local folder holding the model; downloads a hub model on first need (when allowed)."""
    name = name or source()
    looks_local = os.path.isabs(name) or name.startswith((".", "~")) or os.path.isdir(name)
    if looks_local:
        folder = os.path.expanduser(name)
        if not os.path.isdir(folder):
            raise EmbeddingError(f"embedding model folder {folder} does not exist")
        if not _is_model_dir(folder):
            raise EmbeddingError(f"{folder} is not a model2vec model (needs {', '.join(MODEL_FILES)} and *.safetensors)")
        return folder
    found = _cached(name)
    if found or not download:
        if not found:
            raise EmbeddingError(f"embedding model {name} is not downloaded yet (the consolidation pass fetches it)")
        return found
    marker = os.path.join(cache_dir(), ".failed-" + name.replace("/", "--"))
    try:
        if time.time() - os.path.getmtime(marker) < RETRY_DOWNLOAD_S:
            raise EmbeddingError(f"embedding model {name} could not be downloaded recently; retrying after "
                                 f"{RETRY_DOWNLOAD_S // 3600} h (or set AGENTCTX_EMBED_MODEL to a local folder)")
    except OSError:
        pass
    log("consolidate", f"downloading embedding model {name} into {cache_dir()} (once; offline afterwards)")
    os.environ.setdefault("HF_HUB_ETAG_TIMEOUT", "10")
    os.environ.setdefault("HF_HUB_DOWNLOAD_TIMEOUT", "30")
    try:
        from huggingface_hub import snapshot_download

        return snapshot_download(repo_id=name, cache_dir=cache_dir())
    except Exception as exc:  # network, missing repo, disk: one line, FTS5 keeps working
        paths.ensure(cache_dir())
        with open(marker, "w", encoding="utf-8") as fh:
            fh.write(f"{type(exc).__name__}: {exc}\n")
        raise EmbeddingError(f"could not download embedding model {name}: {type(exc).__name__}: {exc}") from None


COMMON_WORDS_SHARE = 0.25  # similar_words never offers the commonest quarter of the vocabulary


class Embedder:
    """A loaded model: ``name`` (its identity), ``dim``, and ``encode(texts) -> float32 array``."""

    def __init__(self, folder: str, name: str):
        try:
            from model2vec import StaticModel

            self._model = StaticModel.from_pretrained(folder)
        except Exception as exc:
            raise EmbeddingError(f"{folder} could not be loaded as a model2vec model: {type(exc).__name__}: {exc}") from None
        self.name = name
        self.dim = int(self._model.dim)
        self._vocab = None  # (words, word -> row, unit matrix, offered) of whole-word tokens, built on first use
        self._similar: dict[tuple, dict[str, list[str]]] = {}  # (per_word, min_similarity) -> word -> similar_words
        self._float_table = None
        self._encoder = None  # pooling.Encoder, made on first use (False: model2vec's own encode)

    @property
    def tag(self) -> str:
        """What ``records.embedded_model`` holds: a vector from another tag is never mixed in."""
        return f"{self.name}|{self.dim}"

    def encode(self, texts: list[str]):
        """Unit float32 vectors of ``texts`` (``pooling.Encoder``: model2vec's average, worked out in float32)."""
        import numpy as np

        if self._encoder is None:
            from agentctx.consolidation.pooling import Encoder

            try:
                self._encoder = Encoder(self._model, self._table())
            except AttributeError as exc:  # a model2vec without what the encoder reads: its own encode
                log("consolidate", f"embedding through model2vec's own encode ({exc})")
                self._encoder = False
        if self._encoder is False:
            vecs = np.asarray(self._model.encode(list(texts), show_progress_bar=False), dtype=np.float32)
        else:
            vecs = self._encoder.encode(list(texts))
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return vecs / norms

    def _table(self):
        """The token vectors as float32 (converted once: the model may store float16)."""
        import numpy as np

        if self._float_table is None:
            self._float_table = np.asarray(self._model.embedding, dtype=np.float32)
        return self._float_table

    def _vocabulary(self):
        """(words, word -> row, unit matrix, offered mask) of the whole-word tokens, built on first use."""
        import numpy as np

        if self._vocab is None:
            model = self._model
            table = self._table()
            keep = [i for i, t in enumerate(model.tokens) if len(t) >= 3 and t.isalpha() and t.islower()]
            rows = [model.token_mapping[i] for i in keep] if model.token_mapping is not None else keep
            mat = table[rows]
            norms = np.linalg.norm(mat, axis=1)
            offered = norms >= np.quantile(norms, COMMON_WORDS_SHARE)
            mat = mat / np.maximum(norms[:, None], 1e-9)
            self._vocab = ([model.tokens[i] for i in keep], {model.tokens[i]: j for j, i in enumerate(keep)}, mat,
                           offered)
        return self._vocab

    def similar_words(self, words: list[str], *, per_word: int, min_similarity: float) -> dict[str, list[str]]:
        """For each word that is one whole token of the model's vocabulary, its nearest other whole words
        (lowercase letters, 3+ long), best first, at most ``per_word`` and at least ``min_similarity``.
        The commonest words (the shortest token vectors: a model2vec model shrinks frequent tokens, SIF)
        are never offered: "great" or "answer" relate to everything and would only blur a record.
        A word's answer depends on the model alone, so it is worked out once per loaded model."""
        import numpy as np

        names, index, mat, offered = self._vocabulary()
        known = [w for w in dict.fromkeys(words) if w in index]
        memo = self._similar.setdefault((per_word, min_similarity), {})
        todo = [w for w in known if w not in memo]
        for start in range(0, len(todo), 512):
            chunk = todo[start:start + 512]
            sims = mat[[index[w] for w in chunk]] @ mat.T
            # the per_word best offered words at or above min_similarity, the word itself aside: only cells
            # that reach min_similarity can be among them (the same ones a full partial sort would keep)
            hit_rows, hit_cols = np.nonzero((sims >= min_similarity) & offered)
            starts = np.searchsorted(hit_rows, np.arange(len(chunk) + 1))
            for i, word in enumerate(chunk):
                cols = hit_cols[starts[i]:starts[i + 1]]
                vals = sims[i, cols]
                order = np.argsort(-vals, kind="stable")
                memo[word] = [names[j] for j in cols[order[:per_word + 1]] if names[j] != word][:per_word]
        return {w: memo[w] for w in known}


def load(name: str | None = None, *, download: bool = True) -> Embedder:
    """Load the configured model (raises EmbeddingError with a clear message)."""
    name = name or source()
    folder = resolve(name, download=download)
    label = os.path.basename(os.path.normpath(name)) if os.path.isdir(os.path.expanduser(name)) else name
    return Embedder(folder, label)


def text_for(rec: dict) -> str:
    """``[type] title + body``: the text a record is embedded as. (The project and the date were left out:
    the same in every record of a project, or noise to a model of meaning, they only blurred the vectors.)"""
    body = (rec.get("body") or "")[:BODY_CHARS]
    return f"[{rec['type']}] {rec['title']}\n{body}".strip()


CONTEXT_SHARE = 0.15  # each session neighbour's share in a record's vector


KNOWN_TEXTS = 4096  # texts whose vectors encode_records keeps for the next batches (1 MB per 1,000 at 256 dims)


def encode_records(embedder: Embedder, recs: list[dict], neighbours: list[tuple[dict | None, dict | None]],
                   known: dict | None = None):
    """Unit vectors of records embedded with their context: own text plus CONTEXT_SHARE of each neighbour
    in its session (the records just before and after), so a turn that answers a question recorded
    just before it carries some of that question's meaning. Each distinct record is encoded once: a
    neighbour that is in ``recs`` too (nearly all are, batches being runs of ``seq``) reuses its vector.
    ``known`` ({text: vector}, kept by the caller across batches) spares encoding a text again: a
    neighbour in the previous batch or the next one (a text's vector does not depend on its batch)."""
    import numpy as np

    def key(rec: dict):
        return rec.get("id") or id(rec)  # a record without an id is only itself

    row_of = {key(r): i for i, r in enumerate(recs)}
    texts = [text_for(r) for r in recs]
    for pair in neighbours:
        for n in pair:
            if n and key(n) not in row_of:
                row_of[key(n)] = len(texts)
                texts.append(text_for(n))
    if known is None:
        vecs = embedder.encode(texts)
    else:
        missing = [i for i, t in enumerate(texts) if t not in known]
        vecs = np.empty((len(texts), embedder.dim), dtype=np.float32)
        if missing:
            vecs[missing] = embedder.encode([texts[i] for i in missing])
        for i, text in enumerate(texts):
            if text in known:
                vecs[i] = known[text]
        if len(known) + len(texts) > KNOWN_TEXTS:
            known.clear()
        known.update(zip(texts, vecs.copy(), strict=True))
    out = vecs[: len(recs)].copy()
    for i, pair in enumerate(neighbours):
        for n in pair:
            if n:
                out[i] += CONTEXT_SHARE * vecs[row_of[key(n)]]
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return out / norms
