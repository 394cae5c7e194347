#!/usr/bin/env -S uv run --quiet --script
# /// script
# requires-python = ">=3.10"
# dependencies = ["sqlite-utils>=4.0"]
# ///
"""Baseline for bench/hooks_bench.py: `uv run --script` with the hooks' dependency list and no work."""
