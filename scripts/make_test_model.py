"""Build the small model2vec model the tests embed with (tests/fixtures/models/m2v-tiny-64).

It is cut from the shared 15 MB model ``m2v-minilm-l6-256`` (distilled with model2vec from
sentence-transformers/all-MiniLM-L6-v2, Apache-2.0): the most frequent word pieces of its vocabulary
(the WordPiece vocabulary is ordered by frequency) and every ASCII character, alone and as a ``##``
suffix, so any ASCII word still splits into known pieces; projected to 64 dimensions by PCA.
Real weights, ~0.9 MB, checked in, so the tests need nothing beside the repository. Rebuild with::

    uv run --group dev python scripts/make_test_model.py [--source ../shared/models/m2v-minilm-l6-256]
"""

from __future__ import annotations

import argparse
import json
import os
import string

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = os.path.join(os.path.dirname(ROOT), "shared", "models", "m2v-minilm-l6-256")
DEST = os.path.join(ROOT, "tests", "fixtures", "models", "m2v-tiny-64")
KEEP = 7000  # most frequent pieces kept
DIM = 64
SPECIAL = ("[PAD]", "[UNK]")
README = """\
# m2v-tiny-64

The test suite's embedding model: a model2vec static model with {n} word pieces and {dim} dimensions
(float16), cut from `m2v-minilm-l6-256` (model2vec distillation of sentence-transformers/all-MiniLM-L6-v2,
Apache-2.0): every ASCII character (alone and as a `##` suffix) and the most frequent other ASCII pieces of its
WordPiece vocabulary, projected by PCA. Built by `scripts/make_test_model.py`; not meant for real retrieval.
"""


def build(source: str, dest: str, keep: int = KEEP, dim: int = DIM) -> dict:
    """Write the cut-down model to ``dest``; returns its size and vocabulary count."""
    from model2vec import StaticModel
    from tokenizers import Tokenizer

    big = StaticModel.from_pretrained(source)
    with open(os.path.join(source, "tokenizer.json"), encoding="utf-8") as fh:
        spec = json.load(fh)
    vocab: dict[str, int] = spec["model"]["vocab"]
    by_id = sorted(vocab, key=vocab.get)
    ascii_chars = [c for c in string.printable if not c.isspace()]
    wanted = set(SPECIAL) | set(ascii_chars) | {f"##{c}" for c in ascii_chars}
    chosen = [t for t in by_id if t in wanted]
    chosen += [t for t in by_id if t not in wanted and t.isascii()][: max(0, keep - len(chosen))]
    chosen = sorted(set(chosen), key=vocab.get)  # frequency order, specials first
    rows = np.asarray(big.embedding, dtype=np.float32)[[vocab[t] for t in chosen]]

    # PCA over the kept rows (the special tokens' rows are left at zero, as in the source)
    body = rows[len(SPECIAL):]
    centred = body - body.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    projected = np.zeros((len(chosen), dim), dtype=np.float32)
    projected[len(SPECIAL):] = centred @ vt[:dim].T
    # keep each piece's weight (its norm in the source model carries the frequency weighting)
    norms = np.linalg.norm(projected, axis=1, keepdims=True)
    projected = np.where(norms > 0, projected / np.maximum(norms, 1e-12) * np.linalg.norm(rows, axis=1,
                                                                                           keepdims=True), 0)

    spec["model"]["vocab"] = {t: i for i, t in enumerate(chosen)}
    spec["added_tokens"] = [{**a, "id": chosen.index(a["content"])} for a in spec.get("added_tokens", [])
                            if a["content"] in chosen]
    tokenizer = Tokenizer.from_str(json.dumps(spec))
    config = {**big.config, "hidden_dim": dim, "apply_pca": dim, "embedding_dtype": "float16",
              "tokenizer_name": "m2v-tiny-64 (cut from m2v-minilm-l6-256)"}
    model = StaticModel(vectors=projected.astype(np.float16), tokenizer=tokenizer, config=config, normalize=True)
    os.makedirs(dest, exist_ok=True)
    model.save_pretrained(dest)
    for extra in os.listdir(dest):  # only what loading needs, plus the provenance note
        if extra not in ("config.json", "model.safetensors", "tokenizer.json", "modules.json"):
            path = os.path.join(dest, extra)
            if os.path.isfile(path):
                os.remove(path)
    with open(os.path.join(dest, "README.md"), "w", encoding="utf-8") as fh:
        fh.write(README.format(n=len(chosen), dim=dim))
    size = sum(os.path.getsize(os.path.join(dest, f)) for f in os.listdir(dest))
    return {"dest": dest, "pieces": len(chosen), "dim": dim, "bytes": size}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", default=SOURCE)
    ap.add_argument("--dest", default=DEST)
    ap.add_argument("--keep", type=int, default=KEEP)
    ap.add_argument("--dim", type=int, default=DIM)
    args = ap.parse_args()
    print(json.dumps(build(args.source, args.dest, args.keep, args.dim)))


if __name__ == "__main__":
    main()
