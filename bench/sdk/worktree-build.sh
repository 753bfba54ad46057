#!/usr/bin/env bash
# Builds @errata/sdk of another commit in a git worktree, for bench/sdk/compare-builds.mjs:
#
#   bash bench/sdk/worktree-build.sh <commit> <dir>     → <dir>/libs/sdk/dist/index.js
#
# The worktree shares this checkout's installed packages, except the workspace's own (@errata/*): those are linked
# to the worktree's, so that its SDK runs with its own @errata/domain. (Linking node_modules whole would resolve
# @errata/domain to this checkout's libs/domain and compare the SDK code only.)
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: bash bench/sdk/worktree-build.sh <commit> <dir>" >&2
  exit 2
fi
commit=$1
# Absolute: git resolves a relative path against the repository, the shell against the current directory.
case $2 in
  /*) dir=$2 ;;
  *) dir="$PWD/$2" ;;
esac
root=$(cd "$(dirname "$0")/../.." && pwd)
if [ -e "$dir" ]; then
  echo "worktree-build: $dir exists; remove it first (git worktree remove --force $dir)" >&2
  exit 2
fi
git -C "$root" worktree add --detach --quiet "$dir" "$commit"
mkdir "$dir/node_modules" "$dir/node_modules/@errata"
for entry in "$root"/node_modules/* "$root"/node_modules/.bin; do
  [ "$(basename "$entry")" = "@errata" ] || ln -s "$entry" "$dir/node_modules/$(basename "$entry")"
done
for link in "$root"/node_modules/@errata/*; do
  # npm links workspace packages relatively (../../libs/domain): the same path inside the worktree.
  target=$(readlink "$link")
  ln -s "$dir/${target#../../}" "$dir/node_modules/@errata/$(basename "$link")"
done
if [ -d "$root/libs/sdk/node_modules" ]; then
  ln -s "$root/libs/sdk/node_modules" "$dir/libs/sdk/node_modules"
fi
(cd "$dir" && npx tsc -b libs/sdk)
domain=$(cd "$dir/libs/sdk/dist" && node -p "require.resolve('@errata/domain')")
case "$domain" in
  "$dir"/*) ;;
  *)
    echo "worktree-build: the worktree's SDK resolves @errata/domain to $domain" >&2
    exit 1
    ;;
esac
echo "$dir/libs/sdk/dist/index.js"
