# Sourced by hooks/launch.sh, mcp/launch.sh and bin/agentctx: find_uv sets uv_bin to a uv executable, or "".
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

# script_env SCRIPT (an absolute path; find_uv first): whether SCRIPT's uv environment may be run without uv.
# A record of the environment (written by agentctx.envstamp once uv has run or synced the script) lives in
# the cache dir, at a path mirroring SCRIPT's; it holds the interpreter and the uv settings it was made
# with. Sets env_stamp (that path, "" when there is none to have), env_key (what the record must say
# besides the interpreter) and env_python: the interpreter when the record is newer than SCRIPT and its
# lock (dash compares whole seconds: a lock changed in the record's second counts as changed), was made with the same uv and settings,
# and names an executable; else "". Only test(1), read and string comparisons: no process is started.
script_env() {
  env_python=""
  env_stamp=""
  env_key="uv=$uv_bin cache=${UV_CACHE_DIR:-} xdg=${XDG_CACHE_HOME:-} python=${UV_PYTHON:-}"
  case "$1" in /*) ;; *) return 0 ;; esac
  env_cache="${AGENTCTX_CACHE_DIR:-}"  # as agentctx.paths.cache_dir
  if [ -z "$env_cache" ]; then
    case "${XDG_CACHE_HOME:-}" in
      /*) env_cache="$XDG_CACHE_HOME/agentctx" ;;
      *) [ -n "${HOME:-}" ] || return 0
         if [ -d "$HOME/Library/Caches" ]; then env_cache="$HOME/Library/Caches/agentctx"
         else env_cache="$HOME/.cache/agentctx"; fi ;;
    esac
  fi
  case "$env_cache" in /*) ;; *) return 0 ;; esac
  env_stamp="$env_cache/launch$1"
  [ "$env_stamp" -nt "$1.lock" ] && [ "$env_stamp" -nt "$1" ] || return 0
  { IFS= read -r env_py && IFS= read -r env_was; } <"$env_stamp" 2>/dev/null || return 0
  [ "$env_was" = "$env_key" ] && [ -x "$env_py" ] && env_python="$env_py"
  return 0
}
