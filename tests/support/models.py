"""The embedding model the tests use: a small real model2vec model checked in under tests/fixtures
(built by scripts/make_test_model.py), so the suite needs nothing beside the repository."""

from __future__ import annotations

from pathlib import Path

TEST_MODEL = Path(__file__).resolve().parents[1] / "fixtures" / "models" / "m2v-tiny-64"
TEST_MODEL_TAG = "m2v-tiny-64|64"  # what records.embedded_model holds for it (folder name | dimensions)
TEST_MODEL_DIM = 64
