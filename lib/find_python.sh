# Sourced by mcp/launch.sh and hooks/launch.sh: sets py_bin to a Python 3 interpreter for code that needs only
# the standard library (the MCP server's start, uv failure notices), or "". Not checked here: the version
# (mcp/server.py hands over to uv below 3.10). Order: $AGENTCTX_PYTHON, python3 on PATH, the usual places,
# uv's own Pythons; real binaries before version-manager shims (~50 ms a call). macOS's /usr/bin/python3 is
# skipped: at best 3.9, and without the developer tools it opens an install dialog. AGENTCTX_PYTHON=- : none.
find_python() {
  py_bin=""
  shim=""
  [ "${AGENTCTX_PYTHON:-}" = "-" ] && return 0
  for candidate in "${AGENTCTX_PYTHON:-}" "$(command -v python3 2>/dev/null)" /usr/bin/python3 /usr/local/bin/python3 \
      /opt/homebrew/bin/python3 "$HOME"/.local/share/uv/python/cpython-3.1[0-9]*/bin/python3; do
    [ -n "$candidate" ] && [ -x "$candidate" ] || continue
    case "$candidate" in
      /usr/bin/python3) [ -d /System/Library/CoreServices ] && continue ;;
      */shims/*) [ -n "$shim" ] || shim="$candidate"; continue ;;
    esac
    py_bin="$candidate"
    return 0
  done
  py_bin="$shim"
}
