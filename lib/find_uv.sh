# Sourced by hooks/launch.sh and bin/agentctx: sets uv_bin to a uv executable, or "".
# Claude Code often gives hooks a minimal PATH, so uv's usual install locations are searched
# too. Real binaries come before version-manager shims (pyenv, asdf, mise), which add ~50 ms
# to every call; a shim is used only when nothing else exists.
find_uv() {
  uv_bin=""
  shim=""
  for candidate in "${AGENTCTX_UV:-}" "${XDG_BIN_HOME:-}/uv" "$HOME/.local/bin/uv" "$HOME/.cargo/bin/uv" \
      "$(command -v uv 2>/dev/null)" "/opt/homebrew/bin/uv" "/usr/local/bin/uv" "/usr/bin/uv" \
      "${LOCALAPPDATA:-}/Programs/uv/uv.exe" "$HOME/.local/bin/uv.exe"; do
    [ -n "$candidate" ] && [ "$candidate" != "/uv" ] && [ -x "$candidate" ] || continue
    case "$candidate" in
      */shims/*) [ -n "$shim" ] || shim="$candidate" ;;
      *) uv_bin="$candidate"; return 0 ;;
    esac
  done
  uv_bin="$shim"
}
