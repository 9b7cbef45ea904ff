# Shared by the bench scripts (source it): a private PostgreSQL server in $WORK/pg on a free loopback port,
# made with Debian's initdb (as the postgres user when run as root: initdb refuses root). Sets PG_PORT,
# PG_PID (the postmaster) and PG_URL_BASE; pg_stop stops it. Durable settings (fsync on): figures are real.
pg_start() {
  local bin
  bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  [ -x "$bin/initdb" ] || { echo "PostgreSQL server not installed (make deps installs it)"; exit 1; }
  PG_DIR="$WORK/pg"
  mkdir -p "$PG_DIR"
  local as=()
  if [ "$(id -u)" = 0 ]; then chown -R postgres:postgres "$PG_DIR"; chmod 755 "$WORK"; as=(runuser -u postgres --); fi
  "${as[@]}" "$bin/initdb" -D "$PG_DIR/data" -A trust -U postgres -E UTF8 --locale=C.UTF-8 > "$PG_DIR/initdb.log"
  PG_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  "${as[@]}" "$bin/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/log" -w -o "-p $PG_PORT -k $PG_DIR -c listen_addresses=127.0.0.1 -c shared_buffers=256MB -c max_wal_size=4GB ${PG_EXTRA:-}" start > /dev/null
  PG_PID=$(head -1 "$PG_DIR/data/postmaster.pid")
  PG_URL_BASE="postgres://postgres@127.0.0.1:$PG_PORT"
  PG_AS=("${as[@]}")
  PG_BIN=$bin
}

pg_stop() { [ -n "${PG_PID:-}" ] && "${PG_AS[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m fast -w stop > /dev/null 2>&1 || true; PG_PID=; }

pg_createdb() { psql -X -q -h 127.0.0.1 -p "$PG_PORT" -U postgres -c "CREATE DATABASE $1" postgres; }

# CPU ticks used by the server so far: the postmaster, its live backends, and backends already reaped
# (the postmaster's cutime/cstime).
pg_cpu_ticks() {
  local total
  total=$(awk '{print $14 + $15 + $16 + $17}' "/proc/$PG_PID/stat")
  for child in $(cat "/proc/$PG_PID/task/$PG_PID/children" 2>/dev/null); do
    [ -r "/proc/$child/stat" ] && total=$(( total + $(awk '{print $14 + $15}' "/proc/$child/stat") ))
  done
  echo "$total"
}
