#!/usr/bin/env bash
# Start a standalone OpenStack Ironic on 127.0.0.1 for labs and tests: one
# all-in-one process (API + conductor, no RPC bus, no Keystone, no DHCP),
# SQLite by default. Prints the endpoint (http://127.0.0.1:PORT) on stdout.
#
# usage: scripts/ironic/start-ironic.sh [PORT]        (default 6385)
#
# Idempotent: installs the venv if needed, writes the config, creates or
# upgrades the database, starts Ironic in the background, waits until GET /
# answers. When the same configuration is already running it returns at once.
# A change of configuration (auth, DB, ...) restarts it.
# Exits non-zero, with the tail of the log, when Ironic does not come up.
#
# Also started: a static web server on 127.0.0.1:PORT+1 serving the
# directory Ironic publishes virtual-media ISOs into, plus a tiny ISO to use
# as the deploy ISO or a live-iso image:
#   http://127.0.0.1:PORT+1/images/fake-boot.iso
#
# Written for bmhctl, in STATE=$BMHCTL_LAB_DIR/ironic-PORT:
#   bmhctl.env     IRONIC_ENDPOINT, DEPLOY_ISO_URL, METAL3_AUTH_ROOT_DIR (KEY=VALUE)
#   auth/ironic/   username and password files (http_basic only), as BMO reads them
#   ironic.log     Ironic's log;  ironic.conf  the generated config
#
# Environment (all optional):
#   IRONIC_AUTH=noauth         noauth | http_basic
#   IRONIC_USER=admin IRONIC_PASSWORD=password     credentials for http_basic
#   IRONIC_DB=sqlite           sqlite | an SQLAlchemy URL, e.g. the one printed
#                              by start-postgres.sh
#   IRONIC_FRESH=0             1 = stop, wipe the database and logs, start anew
#   IRONIC_AUTOMATED_CLEAN=true        [conductor]automated_clean
#   IRONIC_DEBUG=0             1 = debug logging
#   IRONIC_EXTRA_CONF=FILE     appended to ironic.conf (e.g. a [fake] section
#                              with power_delay / deploy_delay)
#   IRONIC_READY_TIMEOUT=120   seconds to wait for GET /
#   BMHCTL_LAB_DIR             state dir (default <repo>/.state/ironic)
set -euo pipefail
LAB_TAG=start-ironic
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PORT=${1:-6385}
[[ $PORT =~ ^[0-9]+$ ]] || die "usage: $0 [PORT]"
HTTP_PORT=$((PORT + 1))
AUTH=${IRONIC_AUTH:-noauth}
USER_=${IRONIC_USER:-admin}
PASS_=${IRONIC_PASSWORD:-password}
DB=${IRONIC_DB:-sqlite}
STATE=$LAB_DIR/ironic-$PORT
URL=http://127.0.0.1:$PORT
IMG_URL=http://127.0.0.1:$HTTP_PORT
case $AUTH in noauth | http_basic) ;; *) die "IRONIC_AUTH must be noauth or http_basic" ;; esac

"$LAB_SCRIPTS/install.sh" ironic ipmitool
lab_hardware_types
PY=$IRONIC_VENV/bin/python
VERSION=$(pinned "$IRONIC_REQ" ironic)

ironic_up() { owns "$STATE/ironic.pid" "$STATE/ironic.conf" && curl -fsS -o /dev/null --max-time 5 "$URL/"; }
images_up() { owns "$STATE/http.pid" "$STATE/httpboot"; }

# --- configuration -----------------------------------------------------------
if [[ $DB == sqlite ]]; then DB_URL=sqlite:///$STATE/ironic.sqlite; else DB_URL=$DB; fi

conf() {
  cat <<EOF
# Written by scripts/ironic/start-ironic.sh on every start: do not edit.
[DEFAULT]
host = bmhctl-lab
auth_strategy = $AUTH
http_basic_auth_user_file = $STATE/htpasswd
# API and conductor in one process
rpc_transport = none
debug = $([[ ${IRONIC_DEBUG:-0} == 1 ]] && echo true || echo false)
use_stderr = false
log_file = $STATE/ironic.log
minimum_memory_warning_only = true
$(ironic_conf_interfaces)

[api]
host_ip = 127.0.0.1
port = $PORT

[database]
connection = $DB_URL

$(ironic_conf_common)

[oslo_concurrency]
lock_path = $STATE/locks
EOF
  if [[ -n ${IRONIC_EXTRA_CONF:-} ]]; then
    echo "# --- $IRONIC_EXTRA_CONF"
    cat "$IRONIC_EXTRA_CONF"
  fi
}
NEW_CONF=$(conf)
# what decides whether a running Ironic can be reused (credentials included)
FINGERPRINT=$(printf '%s\n%s\n%s\n%s\n' "$VERSION" "$NEW_CONF" "$USER_" "$PASS_" | sha256sum | cut -d' ' -f1)

if [[ ${IRONIC_FRESH:-0} != 1 ]] && ironic_up && images_up &&
  [[ $(cat "$STATE/fingerprint" 2>/dev/null) == "$FINGERPRINT" ]]; then
  log "already running (pid $(<"$STATE/ironic.pid"))"
  echo "$URL"
  exit 0
fi

# stop what runs with another config (or everything, for a fresh start)
if owns "$STATE/ironic.pid" "$STATE/ironic.conf" || images_up; then
  "$LAB_SCRIPTS/stop-ironic.sh" "$PORT" >&2
fi
if curl -s -o /dev/null --max-time 2 "$URL/"; then
  die "port $PORT is in use by another program"
fi

if [[ ${IRONIC_FRESH:-0} == 1 ]]; then
  log "IRONIC_FRESH=1: wiping $STATE"
  rm -rf "$STATE"
  if [[ $DB != sqlite ]]; then
    # a server database: drop every table (Ironic's and alembic's)
    "$PY" - "$DB_URL" <<'EOF'
import sys, sqlalchemy as sa
engine = sa.create_engine(sys.argv[1])
meta = sa.MetaData()
meta.reflect(engine)
meta.drop_all(engine)
EOF
  fi
fi
mkdir -p "$STATE"/{locks,httpboot/images,tftpboot/master_images,images,master_images}
printf '%s\n' "$NEW_CONF" >"$STATE/ironic.conf"
rm -rf "$STATE/auth"
if [[ $AUTH == http_basic ]]; then
  # Ironic accepts only bcrypt entries in its htpasswd file
  "$PY" - "$USER_" "$PASS_" >"$STATE/htpasswd" <<'EOF'
import sys, bcrypt
user, password = sys.argv[1:]
print(f"{user}:{bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=5)).decode()}")
EOF
  # the files BMO (and bmhctl) read under METAL3_AUTH_ROOT_DIR
  mkdir -p "$STATE/auth/ironic"
  printf '%s' "$USER_" >"$STATE/auth/ironic/username"
  printf '%s' "$PASS_" >"$STATE/auth/ironic/password"
fi

# --- database ----------------------------------------------------------------
# Each ironic-dbsync call costs about 4 s of imports: skip it when the stamp
# says this database is already at this Ironic version.
STAMP="$VERSION $DB_URL"
if [[ $(cat "$STATE/db.stamp" 2>/dev/null) != "$STAMP" ]]; then
  t0=$(now)
  has_schema=$("$PY" - "$DB_URL" <<'EOF'
import sys, sqlalchemy as sa
print(int(sa.inspect(sa.create_engine(sys.argv[1])).has_table("alembic_version")))
EOF
  )
  # create_schema fails on an existing schema; upgrade works on both but
  # replays every migration on an empty database (slow)
  if [[ $has_schema == 1 ]]; then step=upgrade; else step=create_schema; fi
  if ! "$IRONIC_VENV/bin/ironic-dbsync" --config-file "$STATE/ironic.conf" $step \
    >>"$STATE/dbsync.log" 2>&1; then
    tail -n 20 "$STATE/dbsync.log" >&2
    die "ironic-dbsync $step failed (log: $STATE/dbsync.log)"
  fi
  if [[ $DB == sqlite && $step == create_schema ]]; then
    # Ironic means to put SQLite in WAL mode but its hook never fires; WAL
    # (persistent in the file) lets readers run while the conductor writes
    "$PY" -c 'import sqlite3, sys; sqlite3.connect(sys.argv[1]).execute("PRAGMA journal_mode=WAL")' \
      "$STATE/ironic.sqlite"
  fi
  echo "$STAMP" >"$STATE/db.stamp"
  log "database: $step in $(since "$t0")s"
fi

# --- image web server ----------------------------------------------------------
image_server "$STATE" "$HTTP_PORT"

# --- Ironic --------------------------------------------------------------------
[[ -z ${NO_IPMI:-} ]] || log "$NO_IPMI"
touch "$STATE/ironic.log"
mark=$(wc -l <"$STATE/ironic.log")
t0=$(now)
setsid "$IRONIC_VENV/bin/ironic" --config-file "$STATE/ironic.conf" \
  >>"$STATE/stdout.log" 2>&1 </dev/null &
PID=$!
echo $PID >"$STATE/ironic.pid"

fail() {
  log "$1; end of the logs:"
  tail -n 15 "$STATE/stdout.log" >&2 || true
  tail -n +"$((mark + 1))" "$STATE/ironic.log" | grep -E "ERROR|CRITICAL" | tail -n 15 >&2 || true
  tail -n 5 "$STATE/ironic.log" >&2 || true
  "$LAB_SCRIPTS/stop-ironic.sh" "$PORT" >&2 || true
  exit 1
}
deadline=$(($(date +%s) + ${IRONIC_READY_TIMEOUT:-120}))
until curl -fsS -o /dev/null --max-time 2 "$URL/" 2>/dev/null; do
  kill -0 "$PID" 2>/dev/null || fail "Ironic exited during start-up"
  # the master survives a worker that dies at start and forks it again forever
  if tail -n +"$((mark + 1))" "$STATE/ironic.log" | grep -q "exited with status"; then
    fail "Ironic's worker keeps dying"
  fi
  (($(date +%s) < deadline)) || fail "Ironic did not answer within ${IRONIC_READY_TIMEOUT:-120}s"
  sleep 0.1
done
ready=$(since "$t0")
images_up && curl -fsS -o /dev/null --max-time 5 "$IMG_URL/images/fake-boot.iso" ||
  fail "the image server on 127.0.0.1:$HTTP_PORT does not answer (port taken? see $STATE/http.log)"
echo "$FINGERPRINT" >"$STATE/fingerprint"

{
  echo "IRONIC_ENDPOINT=$URL/v1/"
  echo "DEPLOY_ISO_URL=$IMG_URL/images/fake-boot.iso"
  # an absent <root>/ironic means noauth, as in BMO
  echo "METAL3_AUTH_ROOT_DIR=$STATE/auth"
} >"$STATE/bmhctl.env"

log "ready in ${ready}s: pid $PID, auth $AUTH, $([[ $DB == sqlite ]] && echo SQLite || echo "$DB_URL"), state $STATE"
log "images: $IMG_URL/images/fake-boot.iso; for bmhctl: set -a; . $STATE/bmhctl.env; set +a"
echo "$URL"
