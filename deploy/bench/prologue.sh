# The start every deploy/bench script shares (sourced, not run): options, a release build, a private PostgreSQL with the
# service's environment, the service itself, and the cleanup on exit.
#
#   source "$(dirname "$0")/prologue.sh"       sets root (the repository, also the working directory), work (a scratch
#                                               folder removed on exit) and results (deploy/bench/results)
#   bench_options NAME... -- "$@"               accepts --NAME VALUE for each NAME (set its default before), else exits 2
#   bench_build                                 release build of reclaim from $tree (default: this checkout; another one,
#                                               e.g. main's, for a before/after) in $scratch (empty: .build); sets reclaim
#   bench_database [PGPORT]                     a cluster in $work/pg with database reclaim_bench, keys, migrated; exports
#                                               DATABASE_URL (the service's login, which owns nothing; pgbench runs the
#                                               service's statements as it), RECLAIM_MIGRATION_DATABASE_URL (the schema's
#                                               owner: seeding, VACUUM, bench tables), pg_superuser (CHECKPOINT) and the
#                                               RECLAIM_* settings ($tree's Public/ and Migrations/; the service listens
#                                               on $port)
#   bench_serve [ARGS...]                       starts `reclaim serve ARGS` (log: $work/service.log), waits for /readyz
#   bench_stop                                  stops it
#   bench_p99 WRK-OUTPUT                        wrk's 99th percentile, in ms
# On exit the service, every pid in $bench_pids and the cluster are stopped, and $work is removed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
root=$PWD
results="$root/deploy/bench/results"
mkdir -p "$results"
work=$(mktemp -d "/tmp/reclaim-bench-$(basename "$0").XXXXXX")
chmod 755 "$work"  # the postgres user must reach the cluster inside it
tree=$root
service_pid=""
bench_pids=""

bench_stop() {
    [[ -n "$service_pid" ]] && kill -TERM "$service_pid" 2>/dev/null && wait "$service_pid" 2>/dev/null || true
    service_pid=""
}

bench_cleanup() {
    bench_stop
    for pid in $bench_pids; do kill -KILL "$pid" 2>/dev/null || true; done
    [[ -d "$work/pg" ]] && deploy/pg destroy "$work/pg" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap bench_cleanup EXIT

bench_options() {
    local names=() name known
    while [[ "$1" != "--" ]]; do names+=("$1"); shift; done
    shift
    while [[ $# -gt 0 ]]; do
        name=${1#--}
        known=""
        for candidate in "${names[@]}"; do [[ "$candidate" == "$name" ]] && known=1; done
        [[ -n "$known" && "$1" == "--$name" && $# -ge 2 ]] || { echo "bench: unknown option $1" >&2; exit 2; }
        printf -v "$name" '%s' "$2"
        shift 2
    done
}

bench_build() {
    tree=$(cd "$tree" && pwd)
    local place=(--package-path "$tree")
    [[ -n "${scratch:-}" ]] && place+=(--scratch-path "$scratch")
    swift build -c release "${place[@]}" --product reclaim >&2
    reclaim="$(swift build -c release "${place[@]}" --show-bin-path)/reclaim"
}

bench_database() {
    pg_superuser=$(deploy/pg start "$work/pg" ${1:+"$1"})
    # The roles as in production (docs/operations.md, "Database roles"): `reclaim db roles`, run by deploy/pg.
    RECLAIM_BIN="$reclaim" deploy/pg database "$work/pg" reclaim_bench
    DATABASE_URL=$(deploy/pg conninfo "$work/pg" reclaim reclaim_bench)
    RECLAIM_MIGRATION_DATABASE_URL=$(deploy/pg conninfo "$work/pg" reclaim_owner reclaim_bench)
    export DATABASE_URL RECLAIM_MIGRATION_DATABASE_URL
    export RECLAIM_KEY_FILE="$work/keys"
    export RECLAIM_ADDRESS="127.0.0.1:$port"
    export RECLAIM_PUBLIC_DIR="$tree/Public"
    export RECLAIM_MIGRATIONS_DIR="$tree/Migrations"
    export RECLAIM_LOG_LEVEL="${RECLAIM_LOG_LEVEL:-error}"
    # The delivery worker runs as in production: without SMTP it writes each mail as an .eml file here.
    export RECLAIM_DATA_DIR="$work/data"
    "$reclaim" keys generate --output "$RECLAIM_KEY_FILE" >/dev/null
    "$reclaim" migrate >/dev/null 2>&1
}

bench_serve() {
    "$reclaim" serve "$@" >>"$work/service.log" 2>&1 &
    service_pid=$!
    for _ in $(seq 1 100); do curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && return; sleep 0.1; done
    echo "bench: the service did not start" >&2
    tail -20 "$work/service.log" >&2
    exit 1
}

bench_p99() {
    awk '$1 == "99%" {v=$2; if (v ~ /us$/) {sub(/us/,"",v); v=v/1000} else if (v ~ /ms$/) {sub(/ms/,"",v)} else if (v ~ /s$/) {sub(/s/,"",v); v=v*1000}; print v}' <<<"$1"
}
