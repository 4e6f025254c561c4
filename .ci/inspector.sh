#!/usr/bin/env bash
# An independent client checks the stdio server: the MCP Inspector's command-line mode lists the
# tools (with its schema portability check) and calls them against `tallei-desktop mcp`, each time
# as a fresh server process on a throwaway passphrase-guarded store.
#
#   bash .ci/inspector.sh            (TALLEI_BIN overrides the server command, PYTHON the checker)
set -euo pipefail
export NPM_CONFIG_UPDATE_NOTIFIER=false

ci="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$ci")"
server="${TALLEI_BIN:-$root/.venv/bin/tallei-desktop}"
python="${PYTHON:-$root/.venv/bin/python}"
model="${TALLEI_TEST_MODEL_DIR:-$root/../shared/models/all-MiniLM-L6-v2-onnx}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/home"

# npm install rather than npm ci: a platform-only optional dependency deep in the Inspector's tree
# is missing from some registries, which npm ci treats as a lock file out of sync.
(cd "$ci" && npm install --no-audit --no-fund --loglevel=error)

server_env=(
  -e "TALLEI_DATA_DIR=$work/data"
  -e "TALLEI_LOG_DIR=$work/logs"
  -e "TALLEI_CONFIG=$work/absent.toml"
  -e "TALLEI_PASSPHRASE=inspector check"
  -e "PYTHON_KEYRING_BACKEND=keyring.backends.null.Keyring"
)
if [[ -f "$model/model.onnx" ]]; then
  server_env+=(-e "TALLEI_MODEL_DIR=$model")
else
  server_env+=(-e "TALLEI_ALLOW_MODEL_DOWNLOAD=false")
fi

# Runs the Inspector CLI against a new server process; stdout is the JSON answer.
inspect() {
  (cd "$ci" && HOME="$work/home" npx --no-install mcp-inspector --cli "${server_env[@]}" "$server" mcp "$@")
}

fail() {
  echo "inspector: $*" >&2
  exit 1
}

# Checks a JSON answer with a Python expression over `r`; prints what it found.
check() {
  local file="$1" what="$2" expr="$3"
  "$python" - "$file" "$what" "$expr" <<'EOF' || fail "$what: unexpected answer in $1: $(head -c 2000 "$1")"
import json, sys
path, what, expr = sys.argv[1:4]
with open(path, encoding="utf-8") as f:
    r = json.load(f)
if not eval(expr, {"r": r}):
    sys.exit(1)
print(f"inspector: ok: {what}")
EOF
}

expected='{"save_memory", "recall_memories", "search_memories", "list_memories", "update_memory", "forget_memory", "pin_memory", "unpin_memory", "list_conflicts", "resolve_conflict", "memory_status"}'

inspect --method tools/list --strict >"$work/list.json" || fail "tools/list failed (exit $?)"
# recall_memories answers with its block alone (docs/adr/0005-one-answer.md); every other tool has
# an output schema.
check "$work/list.json" "tools/list names every tool, each with an input schema, and an output schema but for recall" \
  "{t['name'] for t in r['tools']} == $expected and all('inputSchema' in t and t.get('annotations') and (('outputSchema' in t) != (t['name'] == 'recall_memories')) for t in r['tools'])"

memory="I prefer answers without preamble"
inspect --method tools/call --tool-name save_memory --tool-arg "content=$memory" >"$work/save.json" \
  || fail "tools/call save_memory failed (exit $?)"
check "$work/save.json" "save_memory saved a preference" \
  "r['isError'] is False and r['structuredContent']['type'] == 'preference' and len(r['structuredContent']['id']) == 12"

inspect --method tools/call --tool-name recall_memories --tool-arg "query=how to answer" >"$work/recall.json" \
  || fail "tools/call recall_memories failed (exit $?)"
check "$work/recall.json" "recall_memories in another process returns the saved memory" \
  "r['isError'] is False and '$memory' in r['content'][0]['text'] and not r.get('structuredContent')"

status=0
inspect --method tools/call --tool-name save_memory --tool-arg "content=x" --tool-arg "type=opinion" \
  >"$work/bad.json" 2>"$work/bad.err" || status=$?
[[ $status -ne 0 ]] || fail "save_memory accepted an unknown type"
check "$work/bad.json" "a bad argument is a one-line tool error, not a protocol error" \
  "r['isError'] is True and 'type' in r['content'][0]['text'] and '\\n' not in r['content'][0]['text']"

echo "inspector: all checks passed"
