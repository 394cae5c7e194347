#!/usr/bin/env bash
# Fetch the dashboard's front-end libraries from the npm registry at pinned versions and copy only
# the files the pages load (plus each package's LICENSE) into lib/agentctx/surfaces/ui/vendor/<pkg>@<version>/.
# The result is committed: the dashboard never loads anything from a CDN.
#   bash scripts/vendor_ui.sh
set -euo pipefail
cd "$(dirname "$0")/.."

# package@version  files (relative to the package root) to keep
PACKAGES=(
  "preact@10.29.8 dist/preact.module.js hooks/dist/hooks.module.js LICENSE"
  "htm@3.1.1 dist/htm.module.js LICENSE"
  "force-graph@1.52.0 dist/force-graph.min.js LICENSE"
)

dest=lib/agentctx/surfaces/ui/vendor
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rm -rf "$dest"
mkdir -p "$dest"
for entry in "${PACKAGES[@]}"; do
  read -r spec files <<<"$entry"
  name=${spec%@*}
  (cd "$work" && npm pack --silent "$spec" >/dev/null)
  tarball=$(ls "$work"/"${name}"-*.tgz)
  mkdir -p "$work/$name"
  tar -xzf "$tarball" -C "$work/$name"
  mkdir -p "$dest/$spec"
  for f in $files; do
    cp "$work/$name/package/$f" "$dest/$spec/$(basename "$f")"
  done
  echo "$spec: $files"
done
