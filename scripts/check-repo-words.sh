#!/usr/bin/env bash
# The repository speaks of the project as it is, to a reader who has only the repository:
# no references to the private algorithm notes by section ("spec" + "§N": cite the public
# source, docs/sources.md), no references to issue numbers of a tracker the reader cannot
# see, no absolute paths of a development machine, no work-session diary ("session N").
# Prints file:line: text for every hit and exits 1 if there is any; 0 otherwise.
# Usage: scripts/check-repo-words.sh [PATH...]   (default: README.md docs crates scripts experiments .ci)
set -euo pipefail
cd "$(dirname "$0")/.."

paths=("$@")
[ ${#paths[@]} -gt 0 ] || paths=(README.md docs crates scripts experiments .ci)

# Each pattern is an extended regex, written so that it does not match its own text.
patterns=(
  "[Ss][Pp][Ee][Cc]('s)?[.]? *§"           # a section of the private spec, any case
  '\b[Ii]ssues? #?[0-9]'                   # an issue number, with or without '#'
  '(^|[^A-Za-z0-9_.~-])/(wor[k]|roo[t])/'  # absolute paths of a development machine
  '\b[Ss]essions? [0-9]'                   # a work session by number
)
names=("spec section" "issue number" "absolute dev path" "session number")

status=0
for i in "${!patterns[@]}"; do
  # -I: skip binary files; -r: recurse; -n: line numbers; -E: extended regex.
  if out=$(grep -rInE --exclude-dir=target -- "${patterns[$i]}" "${paths[@]}" 2>/dev/null); then
    while IFS= read -r line; do
      printf '%s: %s\n' "${names[$i]}" "$line"
    done <<<"$out"
    status=1
  fi
done

if [ "$status" -ne 0 ]; then
  echo "check-repo-words: the lines above cite private notes, issue numbers, dev paths or work sessions;" >&2
  echo "say what is true now, cite public sources (docs/sources.md), use relative paths." >&2
fi
exit "$status"
