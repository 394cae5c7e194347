"""Loading model2vec models: a local folder, a folder that is not a model, an offline download."""

from __future__ import annotations

import numpy as np
import pytest

from agentctx.consolidation import embeddings
from tests.support.models import TEST_MODEL as MODEL
from tests.support.models import TEST_MODEL_DIM, TEST_MODEL_TAG


def test_the_test_model_ships_with_the_repository():
    assert (MODEL / "model.safetensors").is_file(), f"expected the test model at {MODEL} (scripts/make_test_model.py)"
    assert sum(f.stat().st_size for f in MODEL.iterdir()) < 1_100_000  # small enough to check in


def test_a_local_model_folder_loads_and_gives_unit_vectors(home, monkeypatch):
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL", str(MODEL))
    emb = embeddings.load()
    assert emb.tag == TEST_MODEL_TAG and emb.dim == TEST_MODEL_DIM
    vecs = emb.encode(["Use PostgreSQL for the main database", "Postgres is the primary datastore", "bake bread"])
    assert vecs.dtype == np.float32 and np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert vecs[0] @ vecs[1] > vecs[0] @ vecs[2]


def test_a_folder_that_is_not_a_model_is_refused_clearly(home, tmp_path):
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(embeddings.EmbeddingError, match="is not a model2vec model"):
        embeddings.load(str(tmp_path))
    with pytest.raises(embeddings.EmbeddingError, match="does not exist"):
        embeddings.load(str(tmp_path / "missing"))


def test_a_broken_model_folder_is_refused_clearly(home, tmp_path):
    for name in ("config.json", "tokenizer.json"):
        (tmp_path / name).write_text((MODEL / name).read_text())
    (tmp_path / "model.safetensors").write_bytes(b"not safetensors")
    with pytest.raises(embeddings.EmbeddingError, match="could not be loaded as a model2vec model"):
        embeddings.load(str(tmp_path))


def test_the_default_model_downloads_into_the_data_dir_or_says_why_not(home, monkeypatch):
    """No hub is reachable here: the download fails with one log line, then is not retried for a while."""
    monkeypatch.delenv("AGENTCTX_EMBED_MODEL", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens: fails at once, anywhere
    assert embeddings.source() == embeddings.DEFAULT_MODEL
    with pytest.raises(embeddings.EmbeddingError, match="could not download"):
        embeddings.load()
    log = (home / "logs" / "agentctx.log").read_text()
    assert f"downloading embedding model {embeddings.DEFAULT_MODEL} into {home / 'models'}" in log
    with pytest.raises(embeddings.EmbeddingError, match="retrying after"):
        embeddings.load()
    with pytest.raises(embeddings.EmbeddingError, match="not downloaded yet"):
        embeddings.load(download=False)


def test_a_downloaded_model_is_found_offline(home, monkeypatch):
    snap = home / "models" / "models--acme--tiny" / "snapshots" / "abc"
    snap.mkdir(parents=True)
    for f in MODEL.iterdir():
        (snap / f.name).write_bytes(f.read_bytes())
    emb = embeddings.load("acme/tiny", download=False)
    assert emb.tag == f"acme/tiny|{TEST_MODEL_DIM}"


def test_records_are_embedded_with_type_and_title_not_date_or_project():
    text = embeddings.text_for({"type": "decision", "valid_from": "2026-03-01T10:00:00Z", "title": "Use gRPC",
                                "body": "for service calls", "project": "payments"})
    assert text == "[decision] Use gRPC\nfor service calls"
