#!/usr/bin/env bash
# Runs both SDKs' test suites against a live `notifyd serve --demo`:
# builds notifyd, starts it on a free port with a temporary data
# directory, reads the API key, the simulator's URL and the dashboard
# login it prints, runs the TypeScript and Python suites with them (and
# NOTIFYD_REQUIRE_LIVE=1, so that nothing skips), and stops the server.
#
#   bash sdk/run-live-tests.sh
#
# Needs go, node/npm (20+) and python3 (3.11+). Exits non-zero when a suite
# fails or the server does not come up.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

tmp=$(mktemp -d)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

echo "== building notifyd"
# Built, then run by its own PID, so that stopping it stops the server
# (go run would leave its child to be found).
go build -o "$tmp/notifyd" ./cmd/notifyd
go run ./sdk/openapifields >"$tmp/openapi-fields.json"

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
echo "== starting notifyd serve --demo on 127.0.0.1:$port (data in $tmp)"
"$tmp/notifyd" serve --demo --addr "127.0.0.1:$port" --database-url "sqlite:$tmp/data/notifyd.db" \
  --log-level warn >"$tmp/serve.out" 2>"$tmp/serve.err" &
server_pid=$!

for _ in $(seq 1 600); do
  grep -q '^  export NOTIFYD_HMAC_SECRET=' "$tmp/serve.out" 2>/dev/null && break
  if ! kill -0 "$server_pid" 2>/dev/null; then
    echo "notifyd exited:"; cat "$tmp/serve.out" "$tmp/serve.err"; exit 1
  fi
  sleep 0.1
done
if ! grep -q '^  export NOTIFYD_HMAC_SECRET=' "$tmp/serve.out"; then
  echo "notifyd printed no API key within 60 s:"; cat "$tmp/serve.out" "$tmp/serve.err"; exit 1
fi

# The demo's lines: "  export NOTIFYD_URL=…", "  curl <sim>/_sim/messages" and
# "  Dashboard login of the demo workspace (shown once): EMAIL / PASSWORD".
eval "$(sed -n 's/^  export \(NOTIFYD_[A-Z_]*=[^ ]*\)$/export \1/p' "$tmp/serve.out")"
NOTIFYD_SIM_URL=$(sed -n 's|^  curl \(http[^ ]*\)/_sim/messages$|\1|p' "$tmp/serve.out")
login=$(sed -n 's/^  Dashboard login of the demo workspace (shown once): //p' "$tmp/serve.out")
NOTIFYD_DEMO_EMAIL=${login%% / *}
NOTIFYD_DEMO_PASSWORD=${login#* / }
export NOTIFYD_SIM_URL NOTIFYD_DEMO_EMAIL NOTIFYD_DEMO_PASSWORD
export NOTIFYD_OPENAPI_FIELDS="$tmp/openapi-fields.json" NOTIFYD_REQUIRE_LIVE=1
for v in NOTIFYD_URL NOTIFYD_API_KEY NOTIFYD_HMAC_SECRET NOTIFYD_SIM_URL NOTIFYD_DEMO_EMAIL NOTIFYD_DEMO_PASSWORD; do
  if [ -z "${!v:-}" ]; then echo "could not read $v from the demo's output:"; cat "$tmp/serve.out"; exit 1; fi
done
curl -fsS "$NOTIFYD_URL/readyz" >/dev/null
echo "   server $NOTIFYD_URL, simulator $NOTIFYD_SIM_URL"

status=0
echo "== TypeScript SDK (sdk/typescript)"
(
  cd "$root/sdk/typescript"
  [ -d node_modules ] || npm ci --no-audit --no-fund
  npm run --silent build
  node --test dist-test/*.test.js
) || status=1

echo "== Python SDK (sdk/python)"
(cd "$root/sdk/python" && python3 -m unittest discover -s tests -t . -v) || status=1

if [ "$status" -ne 0 ]; then
  echo "== SDK tests failed; the server's log:"; tail -n 50 "$tmp/serve.err"
fi
exit "$status"
