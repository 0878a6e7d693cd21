# Shared helpers of the scripts in this directory (sourced, not run).

# Where tools and build products live between runs (outside the clone).
TOOLS_DIR="${AGENT_TOOLS_DIR:-$HOME/.cache/agent-backend}"

# ensure_venv DIR REQUIREMENTS: creates the virtualenv DIR and installs REQUIREMENTS into it,
# again only when the requirements file changed.
ensure_venv() {
  local dir="$1" req="$2" stamp
  stamp="$(sha256sum "$req" | cut -d' ' -f1)"
  if [ -x "$dir/bin/python" ] && [ "$(cat "$dir/.requirements-sha256" 2>/dev/null)" = "$stamp" ]; then
    return 0
  fi
  echo "== installing $(basename "$req") into $dir"
  python3 -m venv "$dir"
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
  moto_server -H 127.0.0.1 -p "$port" >"$log" 2>&1 &
  MOTO_PID=$!
  export MOTO_ENDPOINT="http://127.0.0.1:$port"
  wait_http "$MOTO_ENDPOINT/moto-api/" 60 "$MOTO_PID"
  # Let state machines execute, without Docker for Lambda.
  curl -s -o /dev/null -X POST "$MOTO_ENDPOINT/moto-api/config" \
    -H 'content-type: application/json' \
    -d '{"stepfunctions":{"execute_state_machine":true},"lambda":{"use_docker":false}}'
}

stop_moto() {
  if [ -n "${MOTO_PID:-}" ]; then
    kill "$MOTO_PID" 2>/dev/null || true
    wait "$MOTO_PID" 2>/dev/null || true
  fi
}
