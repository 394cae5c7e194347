"""``spawn.detached`` in a single-threaded process (a hook) starts the worker with ``posix_spawnp``, without
importing subprocess (~5 ms of every Stop): in its own session and working directory, the caller's own
working directory untouched, a missing program reported; a threaded process takes subprocess's path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.hooks import ROOT
from tests.support.waiting import wait_for

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX spawning")

CALLER = """
import json, os, sys, threading
sys.path.insert(0, {lib!r})
from agentctx import spawn
if {threaded!r}:
    threading.Thread(target=threading.Event().wait, args=(5,), daemon=True).start()
here = os.getcwd()
pid = spawn.detached([sys.executable, "-c", {child!r}, {out!r}], cwd={cwd!r})
missing = None
try:
    spawn.detached([{missing!r}])
except OSError as exc:
    missing = type(exc).__name__
print(json.dumps({{"pid": pid, "cwd_after": os.getcwd() == here, "subprocess": "subprocess" in sys.modules,
                  "missing": missing}}))
"""
CHILD = ("import json, os, sys; json.dump({'cwd': os.getcwd(), 'sid': os.getsid(0), 'pid': os.getpid()}, "
         "open(sys.argv[1] + '.tmp', 'w')); os.replace(sys.argv[1] + '.tmp', sys.argv[1])")


@pytest.mark.parametrize("threaded", [False, True])
def test_detached_starts_the_program_in_its_folder_and_session(tmp_path: Path, threaded: bool):
    work = tmp_path / "work dir"
    work.mkdir()
    out = tmp_path / "child.json"
    code = CALLER.format(lib=str(ROOT / "lib"), threaded=threaded, child=CHILD, out=str(out), cwd=str(work),
                         missing=str(tmp_path / "no-such-program"))
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    parent = json.loads(proc.stdout)
    child = wait_for(lambda: json.loads(out.read_text()) if out.exists() else None, "the detached program")
    assert child["pid"] == parent["pid"] == child["sid"], "a session leader of its own"
    assert os.path.samefile(child["cwd"], work) and parent["cwd_after"] is True
    assert parent["missing"] is not None and parent["missing"].endswith("Error")
    assert parent["subprocess"] is threaded, "only a threaded caller needs the subprocess module"
