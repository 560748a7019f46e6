#!/usr/bin/env bash
# Start Ironic scaled out, the way it runs when one process is not enough:
# several processes sharing one PostgreSQL database and talking JSON-RPC.
# Same drivers and settings as the all-in-one lab (start-ironic.sh); prints
# the API endpoint on stdout and writes the same bmhctl.env.
#
# usage: scripts/ironic/start-ironic-split.sh PORT [--conductors N] [--shape split|ha]
#
# Shapes (conductor K = 1..N runs as host 127.0.0.(K+1), JSON-RPC on port 8089
# of that address):
#   split (default)  one ironic-api on 127.0.0.1:PORT (one worker: several
#                    cannot share its port) and N ironic-conductor processes
#   ha               N all-in-one `ironic` processes, API on 127.0.0.(K+1):PORT,
#                    the shape of metal3's highly available Ironic; bmhctl
#                    talks to the first one
# JSON-RPC stays on 8089 (IRONIC_RPC_PORT moves it) because Ironic 39 takes
# node locks under the bare [DEFAULT]host but registers (and, after a crash,
# frees those locks) under host:port when the port is not 8089: any other
# port leaves a dead conductor's locks held for good.
#
# Needs a server database: IRONIC_DB (an SQLAlchemy URL), or else a private
# PostgreSQL on IRONIC_PG_PORT (default 15432) is started with start-postgres.sh.
# A running set with the same configuration is reused; otherwise whatever runs
# on PORT (this or start-ironic.sh's) is stopped first. Stop with
# stop-ironic.sh PORT.
#
# Written in STATE=$BMHCTL_LAB_DIR/ironic-PORT: bmhctl.env, split/<name>.conf,
# split/<name>.log, split/<name>.pid (name: api, conductor-K or ironic-K).
#
# Environment: IRONIC_DB, IRONIC_PG_PORT, IRONIC_RPC_PORT, IRONIC_FRESH, IRONIC_AUTOMATED_CLEAN,
# IRONIC_DEBUG, IRONIC_EXTRA_CONF, IRONIC_READY_TIMEOUT as for start-ironic.sh.
# Authentication is noauth only.
set -euo pipefail
LAB_TAG=start-ironic-split
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() { die "usage: $0 PORT [--conductors N] [--shape split|ha] (--help: the whole story)"; }
# --help: the comment at the top of this file, which is the whole story.
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
  exit 0
fi
[[ $# -ge 1 && $1 =~ ^[0-9]+$ ]] || usage
PORT=$1
shift
N=2
SHAPE=split
while [[ $# -gt 0 ]]; do
  case $1 in
    --conductors) [[ ${2:-} =~ ^[1-9][0-9]?$ ]] || die "--conductors takes a number from 1 to 99"; N=$2; shift 2 ;;
    --shape) [[ ${2:-} =~ ^(split|ha)$ ]] || die "--shape takes split or ha"; SHAPE=$2; shift 2 ;;
    *) usage ;;
  esac
done
RPC_PORT=${IRONIC_RPC_PORT:-8089}
[[ $RPC_PORT =~ ^[0-9]+$ ]] || die "IRONIC_RPC_PORT must be a port number"
HTTP_PORT=$((PORT + 1))
STATE=$LAB_DIR/ironic-$PORT
SPLIT=$STATE/split
IMG_URL=http://127.0.0.1:$HTTP_PORT
if [[ $SHAPE == split ]]; then API_IP=127.0.0.1; else API_IP=127.0.0.2; fi
URL=http://$API_IP:$PORT

if [[ -z ${IRONIC_DB:-} ]]; then
  DB_URL=$("$LAB_SCRIPTS/start-postgres.sh" "${IRONIC_PG_PORT:-15432}")
else
  DB_URL=$IRONIC_DB
fi
[[ $DB_URL != sqlite* ]] || die "IRONIC_DB: several Ironic processes need a server database, not SQLite"

"$LAB_SCRIPTS/install.sh" ironic ipmitool
lab_hardware_types
PY=$IRONIC_VENV/bin/python
VERSION=$(pinned "$IRONIC_REQ" ironic)

# --- configuration -----------------------------------------------------------

# how soon the others see a killed conductor as offline and take its nodes
HEARTBEAT='heartbeat_interval = 5
heartbeat_timeout = 30'

# conf ROLE HOST NAME: ROLE api | conductor | all (API and conductor in one)
conf() {
  local role=$1 host=$2
  cat <<EOF
# Written by scripts/ironic/start-ironic-split.sh on every start: do not edit.
[DEFAULT]
host = $host
auth_strategy = noauth
rpc_transport = json-rpc
debug = $([[ ${IRONIC_DEBUG:-0} == 1 ]] && echo true || echo false)
use_stderr = false
log_file = $SPLIT/$3.log
minimum_memory_warning_only = true
$(ironic_conf_interfaces)

[api]
host_ip = $([[ $role == all ]] && echo "$host" || echo "$API_IP")
port = $PORT
api_workers = 1

[json_rpc]
auth_strategy = noauth
host_ip = $host
port = $RPC_PORT

[database]
connection = $DB_URL

$(ironic_conf_common "$HEARTBEAT")

[oslo_concurrency]
lock_path = $STATE/locks/$3
EOF
  if [[ -n ${IRONIC_EXTRA_CONF:-} ]]; then
    echo "# --- $IRONIC_EXTRA_CONF"
    cat "$IRONIC_EXTRA_CONF"
  fi
}

# the processes: NAME ROLE HOST BINARY
PROCS=()
if [[ $SHAPE == split ]]; then
  PROCS+=("api api bmhctl-lab-api ironic-api")
  for ((k = 1; k <= N; k++)); do PROCS+=("conductor-$k conductor 127.0.0.$((k + 1)) ironic-conductor"); done
else
  for ((k = 1; k <= N; k++)); do PROCS+=("ironic-$k all 127.0.0.$((k + 1)) ironic"); done
fi
ALL_CONF=""
for p in "${PROCS[@]}"; do
  read -r name role host _ <<<"$p"
  ALL_CONF+="$(conf "$role" "$host" "$name")"$'\n'
done
FINGERPRINT=$(printf '%s\n%s\n%s\n' "$VERSION" "$SHAPE $N" "$ALL_CONF" | sha256sum | cut -d' ' -f1)

all_up() {
  local p name
  for p in "${PROCS[@]}"; do
    read -r name _ <<<"$p"
    owns "$SPLIT/$name.pid" "$SPLIT/$name.conf" || return 1
  done
  owns "$STATE/http.pid" "$STATE/httpboot" && curl -fsS -o /dev/null --max-time 5 "$URL/"
}
if [[ ${IRONIC_FRESH:-0} != 1 ]] && all_up &&
  [[ $(cat "$SPLIT/fingerprint" 2>/dev/null) == "$FINGERPRINT" ]]; then
  log "already running ($SHAPE, $N conductors)"
  echo "$URL"
  exit 0
fi

"$LAB_SCRIPTS/stop-ironic.sh" "$PORT" >&2
for ip in "$API_IP" $(for ((k = 1; k <= N; k++)); do echo "127.0.0.$((k + 1))"; done); do
  if curl -s -o /dev/null --max-time 2 "http://$ip:$PORT/"; then die "port $ip:$PORT is in use by another program"; fi
done
for ((k = 1; k <= N; k++)); do
  if curl -s -o /dev/null --max-time 2 "http://127.0.0.$((k + 1)):$RPC_PORT/"; then
    die "port 127.0.0.$((k + 1)):$RPC_PORT (JSON-RPC) is in use by another program"
  fi
done

if [[ ${IRONIC_FRESH:-0} == 1 ]]; then
  log "IRONIC_FRESH=1: wiping $STATE and the database"
  rm -rf "$STATE"
  "$PY" - "$DB_URL" <<'EOF'
import sys, sqlalchemy as sa
engine = sa.create_engine(sys.argv[1])
meta = sa.MetaData()
meta.reflect(engine)
meta.drop_all(engine)
EOF
fi
mkdir -p "$SPLIT" "$STATE"/{httpboot/images,tftpboot/master_images,images,master_images}
for p in "${PROCS[@]}"; do
  read -r name role host _ <<<"$p"
  mkdir -p "$STATE/locks/$name"
  conf "$role" "$host" "$name" >"$SPLIT/$name.conf"
done
rm -rf "$STATE/auth"
FIRST_CONF=$SPLIT/$(read -r name _ <<<"${PROCS[0]}"; echo "$name").conf

# --- database ----------------------------------------------------------------
STAMP="$VERSION $DB_URL"
if [[ $(cat "$STATE/db.stamp" 2>/dev/null) != "$STAMP" ]]; then
  t0=$(now)
  has_schema=$("$PY" - "$DB_URL" <<'EOF'
import sys, sqlalchemy as sa
print(int(sa.inspect(sa.create_engine(sys.argv[1])).has_table("alembic_version")))
EOF
  )
  if [[ $has_schema == 1 ]]; then step=upgrade; else step=create_schema; fi
  "$IRONIC_VENV/bin/ironic-dbsync" --config-file "$FIRST_CONF" $step >>"$STATE/dbsync.log" 2>&1 ||
    die "ironic-dbsync $step failed (log: $STATE/dbsync.log)"
  echo "$STAMP" >"$STATE/db.stamp"
  log "database: $step in $(since "$t0")s"
fi

# --- image web server (as start-ironic.sh) ---------------------------------------
image_server "$STATE" "$HTTP_PORT"

# --- Ironic processes ------------------------------------------------------------
[[ -z ${NO_IPMI:-} ]] || log "$NO_IPMI"
t0=$(now)
for p in "${PROCS[@]}"; do
  read -r name _ _ bin <<<"$p"
  touch "$SPLIT/$name.log"
  setsid "$IRONIC_VENV/bin/$bin" --config-file "$SPLIT/$name.conf" \
    >>"$SPLIT/$name.stdout.log" 2>&1 </dev/null &
  echo $! >"$SPLIT/$name.pid"
done

fail() {
  local p name
  log "$1; end of the logs:"
  for p in "${PROCS[@]}"; do
    read -r name _ <<<"$p"
    grep -hE "ERROR|CRITICAL" "$SPLIT/$name.log" "$SPLIT/$name.stdout.log" 2>/dev/null | tail -n 5 | sed "s/^/$name: /" >&2 || true
  done
  "$LAB_SCRIPTS/stop-ironic.sh" "$PORT" >&2 || true
  exit 1
}
# ready: the API answers and lists every conductor as alive
alive() {
  curl -fsS --max-time 2 -H 'X-OpenStack-Ironic-API-Version: latest' "$URL/v1/conductors?fields=hostname,alive" 2>/dev/null |
    "$PY" -c 'import json, sys; print(sum(1 for c in json.load(sys.stdin)["conductors"] if c["alive"]))' 2>/dev/null
}
deadline=$(($(date +%s) + ${IRONIC_READY_TIMEOUT:-120}))
until [[ $(alive) == "$N" ]]; do
  for p in "${PROCS[@]}"; do
    read -r name _ <<<"$p"
    kill -0 "$(<"$SPLIT/$name.pid")" 2>/dev/null || fail "$name exited during start-up"
  done
  (($(date +%s) < deadline)) || fail "$N conductors not alive within ${IRONIC_READY_TIMEOUT:-120}s (alive: $(alive))"
  sleep 0.2
done
ready=$(since "$t0")
curl -fsS -o /dev/null --max-time 5 "$IMG_URL/images/fake-boot.iso" ||
  fail "the image server on 127.0.0.1:$HTTP_PORT does not answer (port taken? see $STATE/http.log)"
echo "$FINGERPRINT" >"$SPLIT/fingerprint"

{
  echo "IRONIC_ENDPOINT=$URL/v1/"
  echo "DEPLOY_ISO_URL=$IMG_URL/images/fake-boot.iso"
  echo "METAL3_AUTH_ROOT_DIR=$STATE/auth"
} >"$STATE/bmhctl.env"

log "ready in ${ready}s: $SHAPE, $N conductors (127.0.0.2..127.0.0.$((N + 1)), JSON-RPC :$RPC_PORT), $DB_URL, state $STATE"
log "for bmhctl: set -a; . $STATE/bmhctl.env; set +a"
echo "$URL"
