"""``pooling.Encoder`` gives the token ids model2vec gives and the direction of its average, on the test model
(a BERT-style tokenizer, so the plain-text path is the one taken), on text that takes the tokenizer's own
path, and with a tokenizer of another kind."""

from __future__ import annotations

import json

import numpy as np
import pytest

from agentctx.consolidation import embeddings, pooling
from tests.support.models import TEST_MODEL

TEXTS = [
    "[decision] Use PostgreSQL 16 for the main database\nwith pgbouncer in front",
    "snake_case names; CamelCase classes -- see docs/CONVENTIONS.md#naming (v2.3.1)!",
    "a,b.c/d:e;f<g>h=i?j@k[l]m\\n^o_p`q{r|s}t~u$v%w&x'y\"z(0)1*2+3-4",
    "tabs\tand\r\nnewlines\n\n   and   runs of spaces",
    "x" * 150 + " " + "antidisestablishmentarianism" * 3,  # words past WordPiece's 100 characters
    "zqxv wvwvwv qqqq jjjjjjj",  # pieces the tiny vocabulary does not hold: unknown tokens dropped
    "[PAD] and [UNK] written by the person, [pad] in lower case",  # added tokens
    "Café naïve résumé",  # accents: the tokenizer's own path
    "使用 PostgreSQL 作为主数据库", "ใช้ PostgreSQL เป็นฐานข้อมูลหลัก", "deploy 🚀 on Fridays",
    "control\x00char\x07s and DEL\x7f", "", "   ", "!!!", "the",
    "word " * 700,  # past 512 tokens: truncated
]


@pytest.fixture(scope="module")
def model():
    return embeddings.load(str(TEST_MODEL), download=False)._model


def _reference_ids(model, texts):
    cut = [t[: model.max_length * model.median_token_length] for t in texts]
    return model.tokenize(cut)


def test_the_test_model_takes_the_plain_text_path(model):
    enc = pooling.Encoder(model, np.asarray(model.embedding, dtype=np.float32))
    assert pooling.bert_like(model.tokenizer)
    assert enc._is_plain(TEXTS[1]) and not enc._is_plain(TEXTS[7]) and not enc._is_plain(TEXTS[6])
    enc.ids([TEXTS[0]])
    assert "postgresql" in enc._words  # each word tokenized once and remembered


def test_token_ids_are_model2vecs_on_every_kind_of_text(model):
    enc = pooling.Encoder(model, np.asarray(model.embedding, dtype=np.float32))
    got = enc.ids(TEXTS)
    assert got == _reference_ids(model, TEXTS)
    assert len(got[-1]) == model.max_length and model.unk_token_id not in got[5]
    assert enc.ids(TEXTS) == got  # from memory the second time


def test_vectors_point_where_model2vecs_average_points(model):
    enc = pooling.Encoder(model, np.asarray(model.embedding, dtype=np.float32))
    ours = enc.encode(TEXTS)
    ref = np.asarray(model.encode(TEXTS), dtype=np.float32)
    empty = ~ref.any(axis=1)
    assert empty.sum() >= 2 and not ours[empty].any()  # nothing to average: zeros, as model2vec
    unit = ours[~empty] / np.linalg.norm(ours[~empty], axis=1, keepdims=True)
    ref_unit = ref[~empty] / np.linalg.norm(ref[~empty], axis=1, keepdims=True)
    assert np.all(np.sum(unit * ref_unit, axis=1) > 0.9999)


def test_the_embedder_encodes_through_the_encoder_in_small_gathers(model, monkeypatch):
    monkeypatch.setattr(pooling, "CHUNK_TOKENS", 5)
    emb = embeddings.load(str(TEST_MODEL), download=False)
    vecs = emb.encode(TEXTS)
    ref = np.asarray(model.encode(TEXTS), dtype=np.float32)
    full = ref.any(axis=1)
    ref = ref[full] / np.linalg.norm(ref[full], axis=1, keepdims=True)
    assert np.all(np.sum(vecs[full] * ref, axis=1) > 0.9999)
    assert np.allclose(np.linalg.norm(vecs[full], axis=1), 1.0, atol=1e-5)


def test_a_tokenizer_of_another_kind_is_left_to_do_it_all(model):
    from tokenizers import Tokenizer

    spec = json.loads(model.tokenizer.to_str())
    spec["pre_tokenizer"] = {"type": "WhitespaceSplit"}  # "snake_case;" stays one word: PIECE would be wrong
    other = Tokenizer.from_str(json.dumps(spec))
    assert not pooling.bert_like(other)
    model.tokenizer, kept = other, model.tokenizer
    try:
        enc = pooling.Encoder(model, np.asarray(model.embedding, dtype=np.float32))
        assert not enc._is_plain(TEXTS[1])
        assert enc.ids(TEXTS) == _reference_ids(model, TEXTS)
    finally:
        model.tokenizer = kept


def test_a_model2vec_without_what_the_encoder_reads_encodes_through_its_own(model, monkeypatch, home):
    emb = embeddings.load(str(TEST_MODEL), download=False)

    def older(*_args):  # a model2vec or tokenizers of another version, without an attribute the encoder reads
        raise AttributeError("'StaticModel' object has no attribute 'token_mapping'")

    monkeypatch.setattr(pooling, "Encoder", older)
    vecs = emb.encode(TEXTS[:3])
    ref = np.asarray(model.encode(TEXTS[:3]), dtype=np.float32)
    assert emb._encoder is False and np.allclose(vecs, ref / np.linalg.norm(ref, axis=1, keepdims=True), atol=1e-6)
    assert "model2vec's own encode" in (home / "logs" / "agentctx.log").read_text()
