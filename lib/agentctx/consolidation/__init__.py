"""Consolidation: the detached work between sessions. The extraction worker (``worker``, started by
Stop and SessionEnd) and the consolidation pass (``consolidate``, after SessionEnd or
``agentctx consolidate``) with its steps: embeddings, near-duplicates, retrieval expansion, rollup,
hybrid search. Imports every package before it in ``agentctx.LAYERS``.
"""
