#!/usr/bin/env bash
# Smoke-test the built app as a person runs it: `make smoke`, or
#
#   packaging/smoke.sh [BUILD_FOLDER]      (default dist/tallei-desktop; built first when missing)
#
# On a throwaway store guarded by a passphrase, with the local model folder (TALLEI_SMOKE_MODEL_DIR,
# default ../shared/models/all-MiniLM-L6-v2-onnx): --version, doctor, save/recall, `connect` writing
# the bundle's own console executable, MCP over stdio (initialize, tools/list, a search by meaning,
# cold-start median), the tray app offscreen (and on X11 under Xvfb when it is installed)
# quitting with exit 0 on SIGTERM, and install.sh/uninstall.sh into a temporary prefix.
# Timings go to build/smoke.json. Takes about a minute after the build; not part of CI.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
app="$(realpath -m "${1:-$root/dist/tallei-desktop}")"
python="${PYTHON:-$root/.venv/bin/python}"
model="$(realpath -m "${TALLEI_SMOKE_MODEL_DIR:-$root/../shared/models/all-MiniLM-L6-v2-onnx}")"

if [[ ! -x "$app/tallei-desktop" ]]; then
  "$python" "$root/packaging/build.py" --dist "$(dirname "$app")"
fi
[[ -f "$model/model.onnx" ]] || { echo "smoke: no model.onnx in $model (set TALLEI_SMOKE_MODEL_DIR)" >&2; exit 2; }

work="$(mktemp -d)"
gui_pid=""
xvfb_pid=""
cleanup() {
  for pid in $gui_pid $xvfb_pid; do
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
  done
  rm -rf "$work"
}
trap cleanup EXIT

cli="$app/tallei-desktop"
export HOME="$work/home"
export XDG_CONFIG_HOME="$work/home/.config" XDG_DATA_HOME="$work/home/.local/share" XDG_CACHE_HOME="$work/home/.cache"
export TALLEI_DATA_DIR="$work/data" TALLEI_LOG_DIR="$work/logs" TALLEI_CONFIG="$work/absent.toml"
export TALLEI_PASSPHRASE="smoke test passphrase" TALLEI_MODEL_DIR="$model"
export TALLEI_HTTP_PORT="${TALLEI_SMOKE_PORT:-18765}"
export PYTHON_KEYRING_BACKEND=keyring.backends.null.Keyring
mkdir -p "$HOME"

ok() { echo "smoke: ok: $*"; }
fail() { echo "smoke: FAILED: $*" >&2; exit 1; }

version="$("$python" -c 'import tallei_desktop; print(tallei_desktop.__version__)')"
[[ "$("$cli" --version)" == "tallei-desktop $version" ]] || fail "--version"
ok "--version (tallei-desktop $version)"

saved="$("$cli" save "I prefer metric units and short answers" --platform claude)"
id="$(awk '{print $2}' <<<"$saved")"
"$cli" recall "which units should I use" | grep -q "id $id" || fail "recall did not return $id"
ok "save and recall ($id)"

doctor="$("$cli" doctor --json)"
"$python" - "$doctor" <<'PY' || fail "doctor: $doctor"
import json, sys
d = json.loads(sys.argv[1])
assert d["semantic_search"] is True, d
PY
ok "doctor (semantic search on: the bundled onnxruntime loads the model)"

if [[ -f "$app/_internal/model/model.onnx" ]]; then
  doctor="$(env -u TALLEI_MODEL_DIR TALLEI_ALLOW_MODEL_DOWNLOAD=false "$cli" doctor --json)"
  "$python" - "$doctor" "$app/_internal/model" <<'PY' || fail "bundled model not used: $doctor"
import json, sys
d = json.loads(sys.argv[1])
assert d["semantic_search"] is True and sys.argv[2] in d["model_state"], d
PY
  ok "the bundled model is found with no model folder set and downloads off"
else
  doctor="$(env -u TALLEI_MODEL_DIR TALLEI_ALLOW_MODEL_DOWNLOAD=false "$cli" doctor --json)"
  "$python" - "$doctor" "$XDG_CACHE_HOME/tallei-desktop/models" <<'PY' || fail "model cache: $doctor"
import json, sys
d = json.loads(sys.argv[1])
assert d["semantic_search"] is False and sys.argv[2] in d["model_state"], d
PY
  ok "without a model the app looks in the user cache folder and carries on without semantic search"
fi

"$cli" connect cursor >/dev/null
"$python" - "$HOME/.cursor/mcp.json" "$cli" <<'PY' || fail "connect wrote $(cat "$HOME/.cursor/mcp.json")"
import json, sys
entry = json.load(open(sys.argv[1]))["mcpServers"]["tallei"]
assert entry["command"] == sys.argv[2] and entry["args"] == ["mcp"], entry
PY
ok "connect writes the bundle's console executable ($cli mcp)"

mkdir -p "$root/build"
"$python" "$root/packaging/smoke_client.py" "$cli" --runs "${SMOKE_RUNS:-5}" --json "$root/build/smoke-mcp.json"

# Starts the tray app, waits for its readiness line, stops it with SIGTERM; sets $ready_s.
ready_s=""
run_gui() {
  local log="$1"; shift
  local started ready
  started="$(date +%s.%N)"
  "$@" "$app/Tallei" >"$log" 2>&1 &
  gui_pid=$!
  for _ in $(seq 1200); do
    grep -q "Tallei is running" "$log" && break
    kill -0 "$gui_pid" 2>/dev/null || fail "the tray app exited early: $(cat "$log")"
    sleep 0.05
  done
  grep -q "Tallei is running" "$log" || fail "the tray app never said it was running: $(cat "$log")"
  ready="$(date +%s.%N)"
  [[ -z "${while_up:-}" ]] || $while_up
  kill -TERM "$gui_pid"
  local status=0
  wait "$gui_pid" || status=$?
  gui_pid=""
  [[ "$status" == 0 ]] || fail "the tray app exited $status on SIGTERM: $(cat "$log")"
  ! grep -q Traceback "$log" || fail "the tray app logged a traceback: $(cat "$log")"
  ready_s="$("$python" -c "print(f'{$ready - $started:.2f}')")"
}

check_http() {
  local token
  token="$("$cli" token | tail -n 1 | awk '{print $NF}')"
  "$python" "$root/packaging/smoke_client.py" "$cli" --http "$TALLEI_HTTP_PORT" "$token"
}
while_up=check_http run_gui "$work/gui-offscreen.log" env QT_QPA_PLATFORM=offscreen
seconds="$ready_s"
ok "tray app offscreen: ready in ${seconds} s, exit 0 on SIGTERM"
x11=""
if command -v Xvfb >/dev/null; then
  Xvfb -displayfd 3 -screen 0 1280x800x24 -nolisten tcp 3>"$work/display" 2>/dev/null &
  xvfb_pid=$!
  for _ in $(seq 200); do [[ -s "$work/display" ]] && break; sleep 0.05; done
  [[ -s "$work/display" ]] || fail "Xvfb did not start"
  run_gui "$work/gui-xcb.log" env DISPLAY=":$(cat "$work/display")" QT_QPA_PLATFORM=xcb
  x11="$ready_s"
  kill "$xvfb_pid"
  xvfb_pid=""
  ok "tray app on X11 (Xvfb, the bundled xcb plugin): ready in ${x11} s, exit 0 on SIGTERM"
fi
"$python" - "$root/build/smoke-gui.json" "$seconds" "${x11:-null}" <<'PY'
import json, sys
json.dump({"offscreen_ready_s": float(sys.argv[2]), "xcb_ready_s": json.loads(sys.argv[3])},
          open(sys.argv[1], "w"), indent=2)
PY

prefix="$work/prefix"
PREFIX="$prefix" "$app/install.sh" >/dev/null
[[ "$("$prefix/bin/tallei-desktop" --version)" == "tallei-desktop $version" ]] || fail "installed command"
command -v desktop-file-validate >/dev/null && desktop-file-validate "$prefix/share/applications/tallei-desktop.desktop"
PREFIX="$prefix" "$prefix/lib/tallei-desktop/uninstall.sh" >/dev/null
[[ ! -e "$prefix/lib/tallei-desktop" && ! -e "$prefix/bin/tallei-desktop" ]] || fail "uninstall left files"
[[ -f "$TALLEI_DATA_DIR/tallei.db" ]] || fail "uninstall touched the store"
ok "install.sh and uninstall.sh into $prefix (the store untouched)"

echo "smoke: all checks passed for $app"
