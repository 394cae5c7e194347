#!/usr/bin/env -S uv run --quiet --script
# /// script
# requires-python = ">=3.10"
# dependencies = []
# ///
"""Baseline for bench/hooks_bench.py: what `uv run --script` costs with no dependencies and no work."""
