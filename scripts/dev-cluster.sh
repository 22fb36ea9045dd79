#!/usr/bin/env bash
# Local OpenSearch 2.19.x cluster on loopback, for development, tests and failure drills.
#
#   scripts/dev-cluster.sh start [--clean] [NODES]   start NODES nodes (default 3), wait for green
#   scripts/dev-cluster.sh stop [--all]              stop the nodes of this cluster directory
#   scripts/dev-cluster.sh status                    per-node state, health, other clusters
#   scripts/dev-cluster.sh kill NODE_INDEX           kill -9 one node (failure drills)
#   scripts/dev-cluster.sh restart-node NODE_INDEX   start that node again, wait for green
#   scripts/dev-cluster.sh reset                     stop, then delete all node data and logs
#   scripts/dev-cluster.sh install                   only download and assemble OpenSearch
#
# Nodes are numbered from 0: node-i serves HTTP on PORT+i and transport on PORT+100+i.
# OpenSearch comes from Maven Central (the only place this machine kind can get it):
# the minimal distribution zip plus module jars, and the k-NN plugin zip installed with
# bin/opensearch-plugin, see scripts/opensearch-pom.xml.
# Everything downloaded or written lives outside the repository:
#   SEARCHENGINE_OPENSEARCH_HOME  install cache   (default ~/.cache/searchengine/opensearch-2.19.x)
#   SEARCHENGINE_CLUSTER_DIR      config/data/logs (default ~/.cache/searchengine/dev-cluster)
# Other settings (environment):
#   SEARCHENGINE_CLUSTER_PORT            first HTTP port (default 9200)
#   SEARCHENGINE_CLUSTER_TRANSPORT_PORT  first transport port (default PORT+100)
#   SEARCHENGINE_CLUSTER_NAME            cluster.name (default searchengine-dev)
#   SEARCHENGINE_OPENSEARCH_HEAP         heap per node, -Xms = -Xmx (default 512m)
#   SEARCHENGINE_OPENSEARCH_JAVA_OPTS    extra JVM options per node
#   SEARCHENGINE_CLUSTER_NODE_SETTINGS   extra opensearch.yml lines for every node, separated
#                                        by ';' (e.g. "thread_pool.write.size: 1;
#                                        thread_pool.write.queue_size: 1" to provoke 429s)
#   SEARCHENGINE_OPENSEARCH_VERSION      2.19.N to use, or a list to try in order
#                                        (default "2.19.6 2.19.5 ... 2.19.0")
#   SEARCHENGINE_OPENSEARCH_KNN          1 (default): install the k-NN plugin (knn_vector
#                                        fields, "lucene" engine only: the zip has no native
#                                        libraries); 0: skip it. An install made without it
#                                        gets it at the next start or install.
#   SEARCHENGINE_JAVA_HOME               JDK 11-21 to run it (default: first such JDK found)
#   SEARCHENGINE_CLUSTER_WAIT            seconds to wait for green (default 180)
#   SEARCHENGINE_CLUSTER_STOP_TIMEOUT    seconds before TERM becomes KILL (default 30)
#   SEARCHENGINE_MAVEN_REPO              Maven local repository (default ~/.m2/repository)
# Data survives stop/start like a real cluster; `start --clean` or `reset` wipes it.
# Running clusters are found wherever their directory is, by the config path on each
# node's command line (DIR/node-N/config, next to DIR/cluster.env): `status` lists the
# others; `stop` with a directory where nothing runs stops the one cluster that runs
# elsewhere (the one on SEARCHENGINE_CLUSTER_PORT, if that is set), or lists them and
# exits 1 when there are several; `stop --all` stops every one of this user's.
# As root (sandboxes, CI containers) JNA is switched off so OpenSearch's root check passes.
# Exit status: 0 success; 1 failure; 2 usage; status exits 3 unless every node is running.
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(dirname "$SCRIPT_DIR")
POM="$SCRIPT_DIR/opensearch-pom.xml"

OS_CACHE="${SEARCHENGINE_OPENSEARCH_HOME:-$HOME/.cache/searchengine/opensearch-2.19.x}"
CLUSTER_DIR="${SEARCHENGINE_CLUSTER_DIR:-$HOME/.cache/searchengine/dev-cluster}"
START_TIMEOUT="${SEARCHENGINE_CLUSTER_WAIT:-180}"
STOP_TIMEOUT="${SEARCHENGINE_CLUSTER_STOP_TIMEOUT:-30}"
# Newest first; an older 2.19.N is fetched only if a newer one cannot be.
OS_VERSIONS="${SEARCHENGINE_OPENSEARCH_VERSION:-2.19.6 2.19.5 2.19.4 2.19.3 2.19.2 2.19.1 2.19.0}"
# Modules added to the minimal distribution (which only has transport-netty4).
# lang-painless first: analysis-common extends it.
MODULES=(lang-painless analysis-common mapper-extras reindex rank-eval lang-mustache)
INSTALLED_MARK=".dev-cluster-installed"
STOPPED=0  # nodes the last stop_locked stopped
MAIN_CLASS="org.opensearch.bootstrap.OpenSearch"

# Cluster settings; `start` takes them from the environment, the other commands from
# the state file written by `start`, so they talk to the cluster that actually runs.
NODES=""
HTTP_BASE=""
TRANSPORT_BASE=""
CLUSTER_NAME=""
HEAP=""
EXTRA_JAVA_OPTS=""
NODE_SETTINGS=""
OPENSEARCH_HOME_DIR=""
JAVA_HOME_DIR=""

log() { printf 'dev-cluster: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
usage() {
    sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

is_uint() { [[ "$1" =~ ^[0-9]+$ ]]; }

# Absolute path of directory $1 (created), so paths in configs and process command
# lines are stable and comparable. Servers, jars and node data never go into the
# repository (it is committed from), so a path inside it is refused before creation.
abs_dir() {
    local dir=$1 what=$2 real_repo
    real_repo=$(cd "$REPO_DIR" && pwd -P)
    case "$(realpath -m "$dir")/" in
        "$real_repo"/*) die "$what ($dir) is inside the repository $REPO_DIR; point it elsewhere" ;;
        *) ;;
    esac
    mkdir -p "$dir"
    (cd "$dir" && pwd)
}

# --- processes ------------------------------------------------------------------

node_dir() { printf '%s/node-%s' "$CLUSTER_DIR" "$1"; }
node_name() { printf 'node-%s' "$1"; }
http_port() { printf '%s' $((HTTP_BASE + $1)); }
transport_port() { printf '%s' $((TRANSPORT_BASE + $1)); }

# Alive and not a zombie: a daemonised node is reparented, and a container's pid 1 may
# never reap it, so `kill -0` alone would call a dead node alive.
pid_alive() {
    local state
    [[ -r "/proc/$1/stat" ]] || return 1
    state=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1) || return 1
    [[ -n "$state" && "$state" != Z ]]
}

# True if pid $1 is an OpenSearch JVM started with config directory $2. Pids get
# reused, so a pid file alone is not proof; the config path is unique to this cluster.
pid_is_node() {
    local pid=$1 conf=$2 arg has_conf=0 has_main=0
    pid_alive "$pid" || return 1
    while IFS= read -r -d '' arg; do
        [[ "$arg" == "-Dopensearch.path.conf=$conf" ]] && has_conf=1
        [[ "$arg" == "$MAIN_CLASS" ]] && has_main=1
    done <"/proc/$pid/cmdline" 2>/dev/null || true
    ((has_conf && has_main))
}

# Pids of OpenSearch JVMs whose config directory is under this cluster directory
# (a node whose pid file was never written or got lost still shows up here).
scan_cluster_pids() {
    local d pid arg
    for d in /proc/[0-9]*; do
        pid=${d#/proc/}
        [[ -r "$d/cmdline" ]] || continue
        while IFS= read -r -d '' arg; do
            if [[ "$arg" == "-Dopensearch.path.conf=$CLUSTER_DIR/node-"* ]]; then
                pid_is_node "$pid" "${arg#-Dopensearch.path.conf=}" && printf '%s\n' "$pid"
                break
            fi
        done <"$d/cmdline" 2>/dev/null || true
    done
}

# Pid of node $1 if it runs: its pid file first, else a scan for its config path.
node_pid() {
    local dir pid arg d
    dir=$(node_dir "$1")
    if [[ -r "$dir/opensearch.pid" ]]; then
        pid=$(tr -dc '0-9' <"$dir/opensearch.pid")
        if [[ -n "$pid" ]] && pid_is_node "$pid" "$dir/config"; then
            printf '%s' "$pid"
            return 0
        fi
    fi
    for d in /proc/[0-9]*; do
        pid=${d#/proc/}
        [[ -r "$d/cmdline" ]] || continue
        while IFS= read -r -d '' arg; do
            if [[ "$arg" == "-Dopensearch.path.conf=$dir/config" ]]; then
                pid_is_node "$pid" "$dir/config" && { printf '%s' "$pid"; return 0; }
                break
            fi
        done <"$d/cmdline" 2>/dev/null || true
    done
    return 1
}

# Wait until none of the given pids is alive; false on timeout.
wait_gone() {
    local timeout=$1 deadline pid alive
    shift
    deadline=$((SECONDS + timeout))
    while :; do
        alive=0
        for pid in "$@"; do
            pid_alive "$pid" && alive=1
        done
        ((alive)) || return 0
        ((SECONDS < deadline)) || return 1
        sleep 0.5
    done
}

port_in_use() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# Directories of this user's dev clusters with a node running, one a line: found by the
# config path on each OpenSearch JVM's command line (DIR/node-N/config) where DIR holds
# this script's state file, so whatever SEARCHENGINE_CLUSTER_DIR their `start` had.
running_cluster_dirs() {
    local d pid arg conf dir seen=$'\n'
    for d in /proc/[0-9]*; do
        [[ -O "$d" && -r "$d/cmdline" ]] || continue
        pid=${d#/proc/}
        while IFS= read -r -d '' arg; do
            if [[ "$arg" == -Dopensearch.path.conf=/*/node-*/config ]]; then
                conf=${arg#-Dopensearch.path.conf=}
                dir=${conf%/node-*/config}
                if [[ "$seen" != *$'\n'"$dir"$'\n'* && -r "$dir/cluster.env" ]] &&
                    pid_is_node "$pid" "$conf"; then
                    seen+="$dir"$'\n'
                    printf '%s\n' "$dir"
                fi
                break
            fi
        done <"$d/cmdline" 2>/dev/null || true
    done
}

# "DIR<tab>HTTP_BASE<tab>one line describing it" for the cluster of directory $1.
describe_cluster() (
    local i up=0 last
    CLUSTER_DIR=$1
    load_state 2>/dev/null || exit 1
    for ((i = 0; i < NODES; i++)); do
        node_pid "$i" >/dev/null && up=$((up + 1))
    done
    last=$((HTTP_BASE + NODES - 1))
    printf '%s\t%s\tcluster %s, %s of %s node(s) running, http 127.0.0.1:%s%s, dir %s\n' \
        "$CLUSTER_DIR" "$HTTP_BASE" "'$CLUSTER_NAME'" "$up" "$NODES" "$HTTP_BASE" \
        "$( ((NODES > 1)) && printf -- '-%s' "$last")" "$CLUSTER_DIR"
)

# Running clusters other than this directory's, described (see describe_cluster); only
# those on port $1 when it is given.
other_clusters() {
    local dir line
    while IFS= read -r dir; do
        [[ "$dir" != "$CLUSTER_DIR" ]] || continue
        line=$(describe_cluster "$dir") || continue
        if [[ -z "${1:-}" || "$(cut -f2 <<<"$line")" == "$1" ]]; then
            printf '%s\n' "$line"
        fi
    done < <(running_cluster_dirs)
}

# Stop the cluster of directory $1 under its own lock (a subshell: this one's settings stay).
stop_cluster_in() (
    CLUSTER_DIR=$1
    lock_cluster
    stop_locked
)

# --- state file -----------------------------------------------------------------

state_file() { printf '%s/cluster.env' "$CLUSTER_DIR"; }

save_state() {
    local var
    {
        echo "# written by scripts/dev-cluster.sh start; read by its other commands"
        for var in NODES HTTP_BASE TRANSPORT_BASE CLUSTER_NAME HEAP EXTRA_JAVA_OPTS NODE_SETTINGS \
            OPENSEARCH_HOME_DIR JAVA_HOME_DIR; do
            printf '%s=%q\n' "$var" "${!var}"
        done
    } >"$(state_file)"
}

# Loads the state file; false if there is none.
load_state() {
    [[ -r "$(state_file)" ]] || return 1
    # shellcheck source=/dev/null
    source "$(state_file)"
    if ! is_uint "$NODES" || ! is_uint "$HTTP_BASE" || ! is_uint "$TRANSPORT_BASE"; then
        die "$(state_file) is damaged; run '$0 reset'"
    fi
}

settings_from_env() {
    HTTP_BASE="${SEARCHENGINE_CLUSTER_PORT:-9200}"
    is_uint "$HTTP_BASE" || die "SEARCHENGINE_CLUSTER_PORT must be a port number"
    TRANSPORT_BASE="${SEARCHENGINE_CLUSTER_TRANSPORT_PORT:-$((HTTP_BASE + 100))}"
    is_uint "$TRANSPORT_BASE" || die "SEARCHENGINE_CLUSTER_TRANSPORT_PORT must be a port number"
    CLUSTER_NAME="${SEARCHENGINE_CLUSTER_NAME:-searchengine-dev}"
    HEAP="${SEARCHENGINE_OPENSEARCH_HEAP:-512m}"
    [[ "$HEAP" =~ ^[0-9]+[kKmMgG]$ ]] || die "SEARCHENGINE_OPENSEARCH_HEAP must look like 512m or 1g"
    EXTRA_JAVA_OPTS="${SEARCHENGINE_OPENSEARCH_JAVA_OPTS:-}"
    NODE_SETTINGS="${SEARCHENGINE_CLUSTER_NODE_SETTINGS:-}"
}

# One `start`/`stop`/... at a time per cluster directory (tests may race).
lock_cluster() {
    CLUSTER_DIR=$(abs_dir "$CLUSTER_DIR" SEARCHENGINE_CLUSTER_DIR)
    exec 8>"$CLUSTER_DIR/.lock"
    flock -w 600 8 || die "another dev-cluster.sh holds $CLUSTER_DIR/.lock"
}

# --- Java -----------------------------------------------------------------------

java_major() {
    local v
    v=$("$1/bin/java" -XshowSettings:properties -version 2>&1 |
        sed -n 's/^ *java\.specification\.version = //p') || return 1
    v=${v#1.}
    is_uint "$v" && printf '%s' "$v"
}

# OpenSearch 2.19 runs on Java 11-21; 24+ removed the security manager it needs.
pick_java() {
    local cand major from_path=""
    if [[ -n "${SEARCHENGINE_JAVA_HOME:-}" ]]; then
        major=$(java_major "$SEARCHENGINE_JAVA_HOME") ||
            die "SEARCHENGINE_JAVA_HOME=$SEARCHENGINE_JAVA_HOME has no working bin/java"
        ((major >= 11 && major <= 21)) ||
            die "SEARCHENGINE_JAVA_HOME is Java $major; OpenSearch 2.19 needs Java 11-21"
        JAVA_HOME_DIR=$SEARCHENGINE_JAVA_HOME
        return 0
    fi
    if command -v java >/dev/null; then
        from_path=$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")
    fi
    for cand in "${JAVA_HOME:-}" "$from_path" /usr/lib/jvm/*; do
        [[ -n "$cand" && -x "$cand/bin/java" ]] || continue
        major=$(java_major "$cand") || continue
        if ((major >= 11 && major <= 21)); then
            JAVA_HOME_DIR=$cand
            return 0
        fi
    done
    die "no Java 11-21 found (OpenSearch 2.19 does not run on 24+); set SEARCHENGINE_JAVA_HOME"
}

# --- install (scripts/opensearch-install.sh) ----------------------------------------

# shellcheck source=scripts/opensearch-install.sh
. "$SCRIPT_DIR/opensearch-install.sh"

# --- node config and launch -------------------------------------------------------

yaml_list() {
    local out="" item
    for item in "$@"; do
        out+="${out:+, }\"$item\""
    done
    printf '[%s]' "$out"
}

write_node_config() {
    local i=$1 dir conf j seeds=() names=() extra=() setting
    dir=$(node_dir "$i")
    conf="$dir/config"
    mkdir -p "$conf/jvm.options.d" "$dir/data" "$dir/logs" "$dir/tmp"
    for ((j = 0; j < NODES; j++)); do
        seeds+=("127.0.0.1:$(transport_port "$j")")
        names+=("$(node_name "$j")")
    done
    {
        echo "# Generated by scripts/dev-cluster.sh on every start; edits are overwritten."
        echo "cluster.name: \"$CLUSTER_NAME\""
        echo "node.name: \"$(node_name "$i")\""
        echo "path.data: \"$dir/data\""
        echo "path.logs: \"$dir/logs\""
        # Loopback only: no exposure, and OpenSearch stays in development mode, where
        # the production bootstrap checks (vm.max_map_count, fds) only warn.
        echo "network.host: 127.0.0.1"
        echo "http.port: $(http_port "$i")"
        echo "transport.port: $(transport_port "$i")"
        if ((NODES == 1)); then
            echo "discovery.type: single-node"
        else
            echo "discovery.seed_hosts: $(yaml_list "${seeds[@]}")"
            # Only read when the cluster first forms; ignored once data exists.
            echo "cluster.initial_cluster_manager_nodes: $(yaml_list "${names[@]}")"
        fi
        # A nearly full developer disk must not leave replicas unassigned (never green).
        echo "cluster.routing.allocation.disk.threshold_enabled: false"
        IFS=';' read -ra extra <<<"$NODE_SETTINGS"
        for setting in "${extra[@]}"; do
            setting="${setting#"${setting%%[![:space:]]*}"}"
            if [[ -n "$setting" ]]; then echo "$setting"; fi
        done
    } >"$conf/opensearch.yml"
    cp "$OPENSEARCH_HOME_DIR/config/log4j2.properties" "$conf/log4j2.properties"
    # The shipped jvm.options writes gc.log, hs_err and heap dumps relative to the working
    # directory (the shared install); point them at this node's logs, and drop its
    # 1g heap in favour of ours.
    sed -e "s#^-Xm[sx].*##" \
        -e "s#file=logs/gc.log#file=$dir/logs/gc.log#" \
        -e "s#-XX:ErrorFile=logs/#-XX:ErrorFile=$dir/logs/#" \
        -e "s#-XX:HeapDumpPath=data#-XX:HeapDumpPath=$dir/logs#" \
        "$OPENSEARCH_HOME_DIR/config/jvm.options" >"$conf/jvm.options"
    printf -- '-Xms%s\n-Xmx%s\n' "$HEAP" "$HEAP" >"$conf/jvm.options.d/heap.options"
    rm -f "$conf/jvm.options.d/root.options"
    if ((EUID == 0)); then
        # OpenSearch refuses to run as root ("can not run opensearch as root"), and it
        # asks the OS through JNA. Sandboxes and CI containers here only have root, so
        # keep JNA's native library from loading: the node then skips the root check,
        # plus mlockall and the seccomp filter, which a loopback dev node does without.
        printf -- '%s\n' '-Djna.nosys=true' '-Djna.nounpack=true' '-Djna.boot.library.path=' \
            >"$conf/jvm.options.d/root.options"
    fi
}

node_log() { printf '%s/logs/%s.log' "$(node_dir "$1")" "$CLUSTER_NAME"; }

# Byte offset of each node's log when this run launched it: the log is appended to
# across runs, and an old run's lines would mislead.
declare -A LOG_OFFSET=()

show_node_logs() {
    local i=$1 dir file new
    dir=$(node_dir "$i")
    file=$(node_log "$i")
    if [[ -s "$dir/logs/launcher.out" ]]; then
        log "--- $(node_name "$i") launcher output ($dir/logs/launcher.out):"
        tail -n 15 "$dir/logs/launcher.out" >&2
    fi
    if [[ -s "$file" ]]; then
        new=$(tail -c "+$((${LOG_OFFSET[$i]:-0} + 1))" "$file" | tail -n 30)
        if [[ -n "$new" ]]; then
            log "--- last lines of $file:"
            printf '%s\n' "$new" >&2
        fi
    fi
}

# Fail unless the ports of the given nodes are free (checked before launching any,
# so a clash does not leave half a cluster running).
check_ports() {
    local i port line
    for i in "$@"; do
        for port in "$(http_port "$i")" "$(transport_port "$i")"; do
            if port_in_use "$port"; then
                line=$(other_clusters "$HTTP_BASE" | head -n1)
                [[ -z "$line" ]] ||
                    die "port $port (for $(node_name "$i")) is taken by the dev $(cut -f3 <<<"$line"); stop it, or set SEARCHENGINE_CLUSTER_PORT or SEARCHENGINE_CLUSTER_DIR"
                die "port $port (for $(node_name "$i")) is taken by another process; set SEARCHENGINE_CLUSTER_PORT"
            fi
        done
    done
}

# Launch node $1 in the background (-d) and wait until its JVM has written the pid file.
# Returns 1 (after showing its logs) if it does not get that far.
launch_node() {
    local i=$1 dir t0 pid
    dir=$(node_dir "$i")
    [[ -f "$dir/config/opensearch.yml" ]] || die "$(node_name "$i") has no config; run '$0 start'"
    rm -f "$dir/opensearch.pid"
    mkdir -p "$dir/tmp" "$dir/logs"
    LOG_OFFSET[$i]=$(stat -c %s "$(node_log "$i")" 2>/dev/null || echo 0)
    # cwd = install dir: bin/opensearch calls bin/opensearch-keystore by a relative path.
    # OPENSEARCH_TMPDIR is set so it does not create a fresh /tmp directory each start.
    # Fds 7 and 8 hold this script's locks; the daemon must not inherit them.
    # Soft fd limit up to the hard one: fewer bootstrap warnings, room for many segments.
    if ! (cd "$OPENSEARCH_HOME_DIR" &&
        { ulimit -n "$(ulimit -Hn)" 2>/dev/null || true; } &&
        env OPENSEARCH_HOME="$OPENSEARCH_HOME_DIR" \
            OPENSEARCH_PATH_CONF="$dir/config" \
            OPENSEARCH_JAVA_HOME="$JAVA_HOME_DIR" \
            OPENSEARCH_TMPDIR="$dir/tmp" \
            OPENSEARCH_JAVA_OPTS="$EXTRA_JAVA_OPTS" \
            ./bin/opensearch -d -p "$dir/opensearch.pid") </dev/null >"$dir/logs/launcher.out" 2>&1 7>&- 8>&-; then
        show_node_logs "$i"
        log "$(node_name "$i") failed to launch"
        return 1
    fi
    # The JVM writes the pid file early in bootstrap; a JVM that is gone after a few
    # seconds without one failed before that (bad JVM option, jar hell, ...).
    t0=$SECONDS
    until [[ -s "$dir/opensearch.pid" ]] && pid=$(node_pid "$i"); do
        if ((SECONDS - t0 >= 180)) || { ((SECONDS - t0 >= 5)) && ! node_pid "$i" >/dev/null; }; then
            show_node_logs "$i"
            log "$(node_name "$i") exited during startup"
            return 1
        fi
        sleep 0.5
    done
    log "$(node_name "$i") started (pid $pid, http $(http_port "$i"), transport $(transport_port "$i"))"
}

# Health of the cluster as seen by the first node that answers; empty if none does.
cluster_health() {
    local params=${1:-} i body
    for ((i = 0; i < NODES; i++)); do
        body=$(curl -s --max-time 15 "http://127.0.0.1:$(http_port "$i")/_cluster/health?$params" 2>/dev/null) || continue
        [[ "$body" == *'"cluster_name"'* ]] && { printf '%s' "$body"; return 0; }
    done
    return 1
}

json_field() {
    sed -n "s/.*\"$1\":\"\{0,1\}\([^\",}]*\).*/\1/p" <<<"$2"
}

# Wait for green with all NODES nodes; on failure show why and return 1.
wait_for_green() {
    local t0=$1 deadline body status count i
    deadline=$((t0 + START_TIMEOUT))
    while ((SECONDS < deadline)); do
        for ((i = 0; i < NODES; i++)); do
            if ! node_pid "$i" >/dev/null; then
                show_node_logs "$i"
                log "$(node_name "$i") died while the cluster was forming"
                return 1
            fi
        done
        body=$(cluster_health "wait_for_status=green&wait_for_nodes=$NODES&timeout=5s") || body=""
        status=$(json_field status "$body")
        count=$(json_field number_of_nodes "$body")
        if [[ "$status" == green && "$count" == "$NODES" ]]; then
            log "cluster '$CLUSTER_NAME' is green with $NODES node(s) after $((SECONDS - t0)) s"
            return 0
        fi
        [[ -n "$body" ]] || sleep 1
    done
    log "cluster not green after ${START_TIMEOUT} s; last health: ${body:-no node answered}"
    for ((i = 0; i < NODES; i++)); do
        show_node_logs "$i"
    done
    return 1
}

# --- commands ---------------------------------------------------------------------

cmd_install() {
    ensure_installed
    printf '%s\n' "$OPENSEARCH_HOME_DIR"
}

cmd_start() {
    local clean=0 want=3 arg i running=() missing=() t0 launched=() failed=0 body status
    for arg in "$@"; do
        case "$arg" in
            --clean) clean=1 ;;
            *)
                if ! is_uint "$arg" || ((arg < 1 || arg > 50)); then usage; fi
                want=$arg
                ;;
        esac
    done
    lock_cluster
    ((clean)) && reset_locked

    if load_state; then
        for ((i = 0; i < NODES; i++)); do
            if node_pid "$i" >/dev/null; then running+=("$i"); else missing+=("$i"); fi
        done
        if ((${#running[@]} > 0)); then
            ((NODES == want)) ||
                die "a $NODES-node cluster is running from $CLUSTER_DIR; '$0 stop' it first"
            if ((${#missing[@]} == 0)); then
                body=$(cluster_health) || body=""
                status=$(json_field status "$body")
                log "already running: $NODES node(s), health ${status:-unknown}"
                printf 'http://127.0.0.1:%s\n' "$HTTP_BASE"
                return 0
            fi
        elif ((NODES != want)) && compgen -G "$CLUSTER_DIR/node-*/data/nodes" >/dev/null; then
            # The voting configuration in the data needs the old node count.
            die "$CLUSTER_DIR holds data of a $NODES-node cluster; use 'start --clean $want' or 'reset'"
        fi
    fi

    if ((${#running[@]} == 0)); then
        # Nothing runs: (re)write configs from the environment, which may have changed.
        settings_from_env
        NODES=$want
        ensure_installed
        pick_java
        ((EUID != 0)) ||
            log "running as root: OpenSearch's native (JNA) features are disabled so it starts"
        for ((i = 0; i < NODES; i++)); do
            write_node_config "$i"
        done
        save_state
        missing=()
        for ((i = 0; i < NODES; i++)); do missing+=("$i"); done
        log "OpenSearch $(basename "$OPENSEARCH_HOME_DIR") on Java $(java_major "$JAVA_HOME_DIR"), heap $HEAP per node, data in $CLUSTER_DIR"
    else
        log "${#running[@]} of $NODES node(s) running; starting node(s) ${missing[*]}"
    fi

    check_ports "${missing[@]}"
    t0=$SECONDS
    for i in "${missing[@]}"; do
        launched+=("$i")
        if ! launch_node "$i"; then
            failed=1
            break
        fi
    done
    if ((failed)) || ! wait_for_green "$t0"; then
        # Leave nothing behind that this call started; logs stay for reading.
        stop_nodes "${launched[@]}"
        die "start failed; logs are under $CLUSTER_DIR/node-*/logs"
    fi
    printf 'http://127.0.0.1:%s\n' "$HTTP_BASE"
}

# TERM the given nodes, KILL what outlives STOP_TIMEOUT, remove their pid files.
stop_nodes() {
    local i pid pids=()
    for i in "$@"; do
        if pid=$(node_pid "$i"); then pids+=("$pid"); fi
    done
    stop_pids "${pids[@]}"
    for i in "$@"; do
        rm -f "$(node_dir "$i")/opensearch.pid"
    done
}

stop_pids() {
    local pid survivors=()
    (($# > 0)) || return 0
    kill -TERM "$@" 2>/dev/null || true
    if ! wait_gone "$STOP_TIMEOUT" "$@"; then
        for pid in "$@"; do pid_alive "$pid" && survivors+=("$pid"); done
        log "still running after ${STOP_TIMEOUT} s, sending KILL to: ${survivors[*]}"
        kill -KILL "${survivors[@]}" 2>/dev/null || true
        wait_gone 15 "${survivors[@]}" || die "could not stop pid(s) ${survivors[*]}"
    fi
}

stop_locked() {
    local i pid pids=() all=()
    if load_state; then
        for ((i = 0; i < NODES; i++)); do
            if pid=$(node_pid "$i"); then pids+=("$pid"); fi
        done
    fi
    # Also any node of this cluster directory whose pid file was lost (or an older,
    # larger cluster); matched by its config path, so nothing else is touched.
    mapfile -t all < <(scan_cluster_pids)
    for pid in "${all[@]}"; do
        [[ " ${pids[*]} " == *" $pid "* ]] || pids+=("$pid")
    done
    STOPPED=${#pids[@]}
    if ((${#pids[@]} == 0)); then
        log "no node running (cluster dir $CLUSTER_DIR)"
    else
        log "stopping ${#pids[@]} node(s) of $CLUSTER_DIR: pid ${pids[*]}"
        stop_pids "${pids[@]}"
        log "stopped"
    fi
    rm -f "$CLUSTER_DIR"/node-*/opensearch.pid
}

# Without --all: this directory's nodes. If none runs here, the one cluster running
# elsewhere is stopped when this directory is not the one meant (it never held a
# cluster, or SEARCHENGINE_CLUSTER_PORT names another port); several are listed, exit 1.
cmd_stop() {
    local all=0 arg port="${SEARCHENGINE_CLUSTER_PORT:-}" here=0 others=() line dir
    for arg in "$@"; do
        case "$arg" in
            --all) all=1 ;;
            *) usage ;;
        esac
    done
    STOPPED=0
    lock_cluster
    [[ -r "$(state_file)" ]] && here=1
    stop_locked
    if ((all)); then
        while IFS= read -r line; do
            dir=$(cut -f1 <<<"$line")
            log "stopping the cluster in $dir"
            stop_cluster_in "$dir"
        done < <(other_clusters)
        return 0
    fi
    ((STOPPED == 0)) || return 0
    # A port in the environment that this directory's cluster does not use means
    # the user has another cluster in mind.
    if ((here)) && [[ -n "$port" && "$port" != "$HTTP_BASE" ]]; then here=0; fi
    mapfile -t others < <(other_clusters "$port")
    ((${#others[@]} > 0)) || return 0
    if ((!here && ${#others[@]} == 1)); then
        dir=$(cut -f1 <<<"${others[0]}")
        log "no cluster in $CLUSTER_DIR; stopping the one running elsewhere: $(cut -f3 <<<"${others[0]}")"
        stop_cluster_in "$dir"
        return 0
    fi
    log "still running elsewhere:"
    for line in "${others[@]}"; do
        log "  $(cut -f3 <<<"$line")"
        log "    stop it with: SEARCHENGINE_CLUSTER_DIR=$(printf '%q' "$(cut -f1 <<<"$line")") $0 stop"
    done
    log "or stop them all with: $0 stop --all"
    ((here)) || exit 1
}

reset_locked() {
    stop_locked
    # Only what this script creates, never the whole directory blindly.
    rm -rf "$CLUSTER_DIR"/node-[0-9]* "$(state_file)"
    log "removed node data, logs and config under $CLUSTER_DIR"
}

cmd_reset() {
    lock_cluster
    reset_locked
}

# Other running clusters, for status (stdout).
list_other_clusters() {
    local others=() line
    mapfile -t others < <(other_clusters)
    ((${#others[@]} > 0)) || return 0
    echo "other dev clusters running (set SEARCHENGINE_CLUSTER_DIR to address one):"
    for line in "${others[@]}"; do
        printf '  %s\n' "$(cut -f3 <<<"$line")"
    done
}

cmd_status() {
    local i pid up=0 body
    CLUSTER_DIR=$(abs_dir "$CLUSTER_DIR" SEARCHENGINE_CLUSTER_DIR)
    if ! load_state; then
        echo "no dev cluster configured in $CLUSTER_DIR"
        list_other_clusters
        return 3
    fi
    echo "cluster '$CLUSTER_NAME', $NODES node(s), $(basename "$OPENSEARCH_HOME_DIR"), dir $CLUSTER_DIR"
    for ((i = 0; i < NODES; i++)); do
        if pid=$(node_pid "$i"); then
            up=$((up + 1))
            printf '  %s  running  pid %-8s http 127.0.0.1:%s  transport %s\n' \
                "$(node_name "$i")" "$pid" "$(http_port "$i")" "$(transport_port "$i")"
        else
            printf '  %s  stopped  %-12s http 127.0.0.1:%s  transport %s\n' \
                "$(node_name "$i")" "" "$(http_port "$i")" "$(transport_port "$i")"
        fi
    done
    if ((up > 0)) && body=$(cluster_health "timeout=5s"); then
        echo "health: status $(json_field status "$body"), nodes $(json_field number_of_nodes "$body"), active shards $(json_field active_shards "$body"), unassigned $(json_field unassigned_shards "$body")"
    elif ((up > 0)); then
        echo "health: no node answers HTTP yet"
    fi
    list_other_clusters
    ((up == NODES)) || return 3
}

node_index_arg() {
    if [[ $# -ne 1 ]] || ! is_uint "$1"; then usage; fi
    if ! load_state; then
        local line
        log "no dev cluster configured in $CLUSTER_DIR"
        while IFS= read -r line; do
            log "  running elsewhere: $(cut -f3 <<<"$line") (SEARCHENGINE_CLUSTER_DIR=$(printf '%q' "$(cut -f1 <<<"$line")"))"
        done < <(other_clusters)
        die "set SEARCHENGINE_CLUSTER_DIR to the cluster's directory, or run '$0 start'"
    fi
    (($1 < NODES)) || die "node index $1 out of range: the cluster has nodes 0..$((NODES - 1))"
}

cmd_kill() {
    local pid
    lock_cluster
    node_index_arg "$@"
    if ! pid=$(node_pid "$1"); then
        log "$(node_name "$1") is not running"
        return 0
    fi
    kill -KILL "$pid"
    wait_gone 15 "$pid" || die "pid $pid survived kill -9"
    rm -f "$(node_dir "$1")/opensearch.pid"
    log "killed $(node_name "$1") (pid $pid) with SIGKILL"
}

cmd_restart_node() {
    local pid t0
    lock_cluster
    node_index_arg "$@"
    if pid=$(node_pid "$1"); then
        log "$(node_name "$1") is already running (pid $pid)"
        return 0
    fi
    [[ -f "$OPENSEARCH_HOME_DIR/$INSTALLED_MARK" ]] ||
        die "OpenSearch install $OPENSEARCH_HOME_DIR is gone; run '$0 start'"
    check_ports "$1"
    t0=$SECONDS
    launch_node "$1" || die "could not start $(node_name "$1")"
    wait_for_green "$t0" || die "cluster did not get back to green; node log: $(node_log "$1")"
    printf 'http://127.0.0.1:%s\n' "$HTTP_BASE"
}

main() {
    (($# > 0)) || usage
    local cmd=$1
    shift
    case "$cmd" in
        start) cmd_start "$@" ;;
        stop) cmd_stop "$@" ;;
        status) [[ $# -eq 0 ]] || usage; cmd_status ;;
        kill) cmd_kill "$@" ;;
        restart-node) cmd_restart_node "$@" ;;
        reset) [[ $# -eq 0 ]] || usage; cmd_reset ;;
        install) [[ $# -eq 0 ]] || usage; cmd_install ;;
        -h | --help | help) usage ;;
        *) usage ;;
    esac
}

main "$@"
