"""Check which heavy modules importing some agentctx code pulls in (run in a clean interpreter)."""

from __future__ import annotations

import ast
import subprocess
import sys

from tests.support.hooks import ROOT

HEAVY = frozenset({
    "sqlite_utils", "click", "platformdirs", "anthropic", "mcp", "numpy", "model2vec", "sqlite_vec",
    "dataclasses", "typing", "pathlib", "tempfile", "inspect",
})


def heavy_modules_loaded(code: str, extra: frozenset[str] = frozenset()) -> list[str]:
    """Run ``code`` (with lib/ on sys.path) in ``python -I``; the heavy modules it left loaded."""
    names = sorted(HEAVY | extra)
    script = f"import sys; sys.path.insert(0, 'lib')\n{code}\nprint(sorted(set({names!r}) & set(sys.modules)))\n"
    out = subprocess.run([sys.executable, "-I", "-c", script], cwd=ROOT, capture_output=True, text=True, check=True)
    return ast.literal_eval(out.stdout.strip())
