# Shared helpers of the scripts in this directory (sourced, not run).

# Where tools and build products live between runs (outside the clone).
TOOLS_DIR="${AGENT_TOOLS_DIR:-$HOME/.cache/agent-backend}"

# The read-only brief (corpus pages, client captures) sits beside the repository as shared/.
# A clone made elsewhere (a temporary directory) finds it beside the repository it was cloned
# from. BRIEF_DIR overrides both; the tests read it.
if [ -z "${BRIEF_DIR:-}" ]; then
  repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  origin="$(git -C "$repo_root" config --get remote.origin.url 2>/dev/null || true)"
  for candidate in "$repo_root/../shared" "${origin%/}/../shared"; do
    if [ -d "$candidate/corpus" ]; then
      BRIEF_DIR="$(cd "$candidate" && pwd)"
      break
    fi
  done
fi
if [ -n "${BRIEF_DIR:-}" ]; then
  export BRIEF_DIR
fi

# ensure_venv DIR REQUIREMENTS: creates the virtualenv DIR and installs REQUIREMENTS into it,
# again only when the requirements file changed.
ensure_venv() {
  local dir="$1" req="$2" stamp
  stamp="$(sha256sum "$req" | cut -d' ' -f1)"
  if [ -x "$dir/bin/python" ] && [ "$(cat "$dir/.requirements-sha256" 2>/dev/null)" = "$stamp" ]; then
    return 0
  fi
  echo "== installing $(basename "$req") into $dir"
  if ! python3 -m venv "$dir"; then
    # Debian ships the venv module (ensurepip) in a package of its own.
    echo "== installing python3-venv"
    apt-get update -qq && apt-get install -y -qq python3-venv
    rm -rf "$dir"
    python3 -m venv "$dir"
  fi
  "$dir/bin/pip" install --quiet --disable-pip-version-check -r "$req"
  echo "$stamp" > "$dir/.requirements-sha256"
}

# free_port: prints a free TCP port on 127.0.0.1.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# wait_http URL SECONDS [PID]: waits until URL answers with any HTTP status; gives up early
# when the process PID (the server being waited for) has exited.
wait_http() {
  local url="$1" deadline=$((SECONDS + $2)) pid="${3:-}"
  until curl -s -o /dev/null "$url"; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "timed out waiting for $url" >&2
      return 1
    fi
    if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
      echo "the server for $url exited" >&2
      return 1
    fi
    sleep 0.2
  done
}

# start_moto LOGFILE: starts the DynamoDB/S3/Step Functions-compatible server on a free
# loopback port, exports MOTO_ENDPOINT and MOTO_PID. The caller stops it (stop_moto).
start_moto() {
  local log="$1" port
  port="$(free_port)"
  # One request at a time: moto's transactions are not atomic under concurrent requests.
  "$TOOLS_DIR/venv/bin/python" "$(dirname "${BASH_SOURCE[0]}")/moto_server.py" 127.0.0.1 "$port" >"$log" 2>&1 &
  MOTO_PID=$!
  export MOTO_ENDPOINT="http://127.0.0.1:$port"
  wait_http "$MOTO_ENDPOINT/moto-api/" 60 "$MOTO_PID"
  # Let state machines execute, without Docker for Lambda.
  curl -s -o /dev/null -X POST "$MOTO_ENDPOINT/moto-api/config" \
    -H 'content-type: application/json' \
    -d '{"stepfunctions":{"execute_state_machine":true},"lambda":{"use_docker":false}}'
}

# stop_pid PID: stops a server this script started (nothing when PID is empty).
stop_pid() {
  if [ -n "${1:-}" ]; then
    kill "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
  fi
}

stop_moto() { stop_pid "${MOTO_PID:-}"; }

# cpu_seconds PID: the CPU (user and system) a running process has used so far, in seconds.
cpu_seconds() {
  awk -v hz="$(getconf CLK_TCK)" '{ printf "%.0f", ($14 + $15) / hz }' "/proc/$1/stat" 2>/dev/null || echo 0
}

# Sockudo (a Pusher-protocol server) for the realtime tests: built once from crates.io into
# $TOOLS_DIR/sockudo with only the local adapter (no OpenTelemetry), reused afterwards.
SOCKUDO_VERSION="5.2.0"
ensure_sockudo() {
  local root="$TOOLS_DIR/sockudo"
  if [ -x "$root/bin/sockudo" ] && [ "$(cat "$root/.version" 2>/dev/null)" = "$SOCKUDO_VERSION" ]; then
    return 0
  fi
  if ! command -v protoc >/dev/null 2>&1; then
    echo "== installing protobuf-compiler (needed to build sockudo)"
    apt-get update -qq && apt-get install -y -qq protobuf-compiler
  fi
  echo "== building sockudo $SOCKUDO_VERSION (once; about 6 minutes on two cores)"
  # An unoptimised build without debug info: the tests send it a few events, and it compiles in
  # 5.6 minutes on two cores where the release build took 9.8 (measured on a fresh machine).
  CARGO_PROFILE_DEV_DEBUG=0 CARGO_TARGET_DIR="$TOOLS_DIR/sockudo-build" cargo install sockudo \
    --version "$SOCKUDO_VERSION" --locked --no-default-features --features local --debug \
    --root "$root"
  echo "$SOCKUDO_VERSION" >"$root/.version"
}

# start_sockudo DIR: starts Sockudo on a free loopback port with a test app (metrics off, no
# config file: it runs in DIR), exports SOCKUDO_PORT/APP_ID/KEY/SECRET and SOCKUDO_PID.
start_sockudo() {
  local dir="$1/sockudo"
  mkdir -p "$dir"
  export SOCKUDO_PORT SOCKUDO_APP_ID=test-app SOCKUDO_KEY=test-key SOCKUDO_SECRET=test-secret
  SOCKUDO_PORT="$(free_port)"
  (
    cd "$dir"
    HOST=127.0.0.1 PORT="$SOCKUDO_PORT" METRICS_ENABLED=false METRICS_HOST=127.0.0.1 \
      SOCKUDO_DEFAULT_APP_ID="$SOCKUDO_APP_ID" SOCKUDO_DEFAULT_APP_KEY="$SOCKUDO_KEY" \
      SOCKUDO_DEFAULT_APP_SECRET="$SOCKUDO_SECRET" \
      exec "$TOOLS_DIR/sockudo/bin/sockudo" >"$dir/sockudo.log" 2>&1
  ) &
  SOCKUDO_PID=$!
  if ! wait_http "http://127.0.0.1:$SOCKUDO_PORT/" 60 "$SOCKUDO_PID"; then
    tail -n 20 "$dir/sockudo.log"
    return 1
  fi
}

stop_sockudo() { stop_pid "${SOCKUDO_PID:-}"; }

# start_mcp DIR: the MCP server the agent-tool tests call (scripts/mcp_test_server.py, the
# Python SDK's FastMCP over Streamable HTTP) on a free 127.0.0.1 port, behind a random bearer
# token; exports MCP_TEST_URL and the token as AGENT_MCP_SECRET_TEST.
start_mcp() {
  local dir="$1/mcp"
  mkdir -p "$dir"
  MCP_PORT="$(free_port)"
  export AGENT_MCP_SECRET_TEST="mcp-test-$RANDOM$RANDOM$RANDOM"
  export MCP_TEST_URL="http://127.0.0.1:$MCP_PORT/mcp"
  "$TOOLS_DIR/venv/bin/python" scripts/mcp_test_server.py "$MCP_PORT" "$AGENT_MCP_SECRET_TEST" \
    >"$dir/mcp.log" 2>&1 &
  MCP_PID=$!
  # Unauthenticated requests answer 401 once it is up.
  if ! wait_http "http://127.0.0.1:$MCP_PORT/mcp" 60 "$MCP_PID"; then
    tail -n 20 "$dir/mcp.log"
    return 1
  fi
}

stop_mcp() { stop_pid "${MCP_PID:-}"; }

# ensure_miniwob: the MiniWoB++ task pages (the `miniwob` package, MIT, only its files: no
# selenium or gymnasium) in the tools venv; exports MINIWOB_DIR, its html/ folder.
MINIWOB_VERSION=1.1.0
ensure_miniwob() {
  local py="$TOOLS_DIR/venv/bin/python" find dir
  find='import importlib.metadata as m, pathlib, sys
d = m.distribution("miniwob")
print(pathlib.Path(d.locate_file("miniwob/html")) if d.version == sys.argv[1] else "")'
  dir="$("$py" -c "$find" "$MINIWOB_VERSION" 2>/dev/null || true)"
  if [ -z "$dir" ] || [ ! -f "$dir/core/core.js" ]; then
    echo "== installing miniwob==$MINIWOB_VERSION (its task pages only) into $TOOLS_DIR/venv"
    "$TOOLS_DIR/venv/bin/pip" install --quiet --disable-pip-version-check --no-deps "miniwob==$MINIWOB_VERSION"
    dir="$("$py" -c "$find" "$MINIWOB_VERSION")"
  fi
  export MINIWOB_DIR="$dir"
}

# Debian's chromium, for the real-browser end-to-end tests (CHROMIUM names another binary).
ensure_chromium() {
  if [ -n "${CHROMIUM:-}" ] || command -v chromium >/dev/null 2>&1; then
    return 0
  fi
  if [ "$(id -u)" != 0 ]; then
    echo "chromium is missing: install Debian's chromium (apt-get install chromium) or set CHROMIUM" >&2
    return 1
  fi
  echo "== installing chromium (headless, for the browser tests)"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium
}
