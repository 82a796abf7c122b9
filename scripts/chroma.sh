#!/usr/bin/env bash
# A local Chroma server for examples/retrievers/chroma_retriever.py (docs/retrievers.md).
#
#   scripts/chroma.sh setup    venv + pinned chromadb from PyPI (idempotent)
#   scripts/chroma.sh start    setup if needed, start `chroma run` on its port and data folder,
#                              wait until it answers, write .chroma/env
#   scripts/chroma.sh stop     stop exactly the process `start` launched
#   scripts/chroma.sh status   print whether the server is up
#
# Everything lives in .chroma/ at the repository root (git-ignored): venv/, data/ (the server's
# --path), logs/, chroma.pid, env (CHROMA_URL and CHROMA_PYTHON, the venv's interpreter that
# runs the retriever). Telemetry is off (ANONYMIZED_TELEMETRY=False).
# Measured on 2 cores under load: pip install chromadb 105 s (about 520 MB in the venv); the
# server answers its heartbeat within seconds.
#
# Environment overrides:
#   CHROMA_PORT      the server's port                       default 8094
#   CHROMA_PYTHON    interpreter used to create the venv     default python3
#   CHROMA_TIMEOUT   seconds `start` waits for the server    default 60
#   CHROMA_DIR       state folder                            default <repo>/.chroma
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STATE="${CHROMA_DIR:-$ROOT/.chroma}"
VENV="$STATE/venv"
DATA="$STATE/data"
LOGS="$STATE/logs"
PID_FILE="$STATE/chroma.pid"
ENV_FILE="$STATE/env"
PORT="${CHROMA_PORT:-8094}"
HOST=127.0.0.1
TIMEOUT="${CHROMA_TIMEOUT:-60}"
CHROMADB_VERSION="1.5.9"
export ANONYMIZED_TELEMETRY=False

log() { printf '[chroma] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

installed() {
  [[ -x "$VENV/bin/chroma" ]] &&
    [[ "$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("chromadb"))' 2>/dev/null)" == "$CHROMADB_VERSION" ]]
}

cmd_setup() {
  mkdir -p "$STATE" "$LOGS"
  if installed; then
    log "chromadb $CHROMADB_VERSION already installed in $VENV"
    return 0
  fi
  local python="${CHROMA_PYTHON:-python3}"
  command -v "$python" >/dev/null 2>&1 || die "$python not found (set CHROMA_PYTHON to a Python 3.9 or newer with venv)"
  [[ -x "$VENV/bin/python" ]] || { log "creating $VENV with $("$python" --version 2>&1)"; "$python" -m venv "$VENV"; }
  log "installing chromadb $CHROMADB_VERSION (a download of a few hundred MB; about two minutes)"
  "$VENV/bin/python" -m pip install --quiet "chromadb==$CHROMADB_VERSION" >"$LOGS/install.log" 2>&1 ||
    { tail -n 5 "$LOGS/install.log" >&2; die "pip could not install chromadb $CHROMADB_VERSION; full log: $LOGS/install.log"; }
  installed || die "chromadb installed but $VENV/bin/chroma is missing"
  log "setup complete"
}

pid_alive() {
  [[ -f "$PID_FILE" ]] || return 1
  local pid
  pid="$(cat "$PID_FILE")"
  [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null && printf '%s\n' "$pid"
}

answers() { curl -fsS --max-time 5 "http://$HOST:$PORT/api/v2/heartbeat" >/dev/null 2>&1; }

cmd_start() {
  command -v curl >/dev/null 2>&1 || die "curl is required"
  if pid_alive >/dev/null && answers; then
    log "already running on :$PORT (data: $DATA); env: $ENV_FILE"
    return 0
  fi
  installed || cmd_setup
  mkdir -p "$DATA" "$LOGS"
  rm -f "$PID_FILE"
  curl -sS --max-time 2 -o /dev/null "http://$HOST:$PORT/" 2>/dev/null &&
    die "port $PORT is taken by another process (set CHROMA_PORT)"
  log "starting: chroma run --path $DATA --host $HOST --port $PORT (log: $LOGS/chroma.log)"
  # setsid: its own process group, so it outlives this shell and `stop` signals only it
  setsid "$VENV/bin/chroma" run --path "$DATA" --host "$HOST" --port "$PORT" >>"$LOGS/chroma.log" 2>&1 </dev/null &
  printf '%s\n' "$!" >"$PID_FILE"
  local start=$SECONDS
  until answers; do
    pid_alive >/dev/null || { tail -n 20 "$LOGS/chroma.log" >&2 || true; die "the server exited; see $LOGS/chroma.log"; }
    ((SECONDS - start < TIMEOUT)) || { cmd_stop; die "no answer after $TIMEOUT s; see $LOGS/chroma.log"; }
    sleep 1
  done
  log "ready after $((SECONDS - start)) s"
  printf 'CHROMA_URL=http://%s:%s\nCHROMA_PYTHON=%s\n' "$HOST" "$PORT" "$VENV/bin/python" >"$ENV_FILE"
  sed 's/^/  /' "$ENV_FILE" >&2
}

cmd_stop() {
  local pid i
  if pid="$(pid_alive)"; then
    log "stopping chroma (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -0 "$pid" 2>/dev/null && { log "still alive after 10 s; sending KILL"; kill -KILL "$pid" 2>/dev/null || true; }
  fi
  rm -f "$PID_FILE" "$ENV_FILE"
  log "stopped"
}

cmd_status() {
  local pid
  if pid="$(pid_alive)"; then
    if answers; then echo "chroma: up   (pid $pid, http://$HOST:$PORT, data $DATA)"; return 0; fi
    echo "chroma: starting or not answering (pid $pid, port $PORT)"
    return 1
  fi
  echo "chroma: down"
  return 1
}

case "${1:-}" in
  setup) cmd_setup ;;
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  -h | --help | help) sed -n '2,21p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' ;;
  *)
    sed -n '2,21p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
