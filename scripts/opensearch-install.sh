# OpenSearch from Maven Central, assembled once into the install cache.
# Sourced by scripts/dev-cluster.sh (its settings and log/die helpers are in
# scope); not run on its own.
#   find_installed    set OPENSEARCH_HOME_DIR to an installed 2.19.N, if any
#   ensure_installed  download the minimal distribution and the modules, assemble;
#                     then add the k-NN plugin (ensure_knn_plugin) unless
#                     SEARCHENGINE_OPENSEARCH_KNN=0, also to an install made before
#                     the plugin was part of it

find_installed() {
    local v dir
    for v in $OS_VERSIONS; do
        dir="$OS_CACHE/opensearch-$v"
        if [[ -f "$dir/$INSTALLED_MARK" ]]; then
            printf '%s' "$dir"
            return 0
        fi
    done
    return 1
}

module_descriptor() {
    local name=$1 version=$2 classname description extended=""
    case "$name" in
        lang-painless)
            classname=org.opensearch.painless.PainlessPlugin
            description="An easy, safe and fast scripting language for OpenSearch" ;;
        analysis-common)
            classname=org.opensearch.analysis.common.CommonAnalysisPlugin
            description='Adds "built in" analyzers to OpenSearch.'
            extended=lang-painless ;;
        mapper-extras)
            classname=org.opensearch.index.mapper.MapperExtrasPlugin
            description="Adds advanced field mappers" ;;
        reindex)
            classname=org.opensearch.index.reindex.ReindexPlugin
            description="The Reindex module adds APIs to reindex from one index to another or update documents in place." ;;
        rank-eval)
            classname=org.opensearch.index.rankeval.RankEvalPlugin
            description="The Rank Eval module adds APIs to evaluate ranking quality." ;;
        lang-mustache)
            classname=org.opensearch.script.mustache.MustachePlugin
            description="Mustache scripting integration for OpenSearch" ;;
        *) die "no descriptor for module $name" ;;
    esac
    cat <<EOF
description=$description
version=$version
name=$name
classname=$classname
java.version=11
opensearch.version=$version
custom.foldername=
extended.plugins=$extended
has.native.controller=false
EOF
}

# The jars on Central lack the plugin-security.policy the full distribution ships;
# these grants are copied from the modules' sources (src/main/plugin-metadata).
module_policy() {
    case "$1" in
        lang-painless)
            cat <<'EOF'
grant {
  // needed to generate runtime classes
  permission java.lang.RuntimePermission "createClassLoader";
  // needed to find the classloader to load whitelisted classes from
  permission java.lang.RuntimePermission "getClassLoader";
};
EOF
            ;;
        reindex)
            cat <<'EOF'
grant {
  // reindex opens socket connections using the rest client
  permission java.net.SocketPermission "*", "connect";
};
grant codeBase "${codebase.opensearch-rest-client}" {
  // rest client uses system properties which gets the default proxy
  permission java.net.NetPermission "getProxySelector";
};
grant codeBase "${codebase.httpasyncclient}" {
  // rest client uses system properties which gets the default proxy
  permission java.net.NetPermission "getProxySelector";
};
EOF
            ;;
        lang-mustache)
            cat <<'EOF'
grant {
  // needed to do crazy reflection
  permission java.lang.RuntimePermission "accessDeclaredMembers";
};
EOF
            ;;
    esac
}

run_mvn() {
    local logfile=$1
    shift
    local repo=()
    [[ -z "${SEARCHENGINE_MAVEN_REPO:-}" ]] || repo=("-Dmaven.repo.local=$SEARCHENGINE_MAVEN_REPO")
    # -C (MVN_CHECKSUMS): fail on a checksum mismatch instead of Maven's default warning.
    # Maven runs seven times, each short: C1-only JIT and serial GC halve its start-up.
    # sed: Maven 3.8 prints colour resets even in batch mode.
    MAVEN_OPTS="${MAVEN_OPTS:--XX:TieredStopAtLevel=1 -XX:+UseSerialGC}" \
        mvn -B -q "${MVN_CHECKSUMS:--C}" -Dstyle.color=never "${repo[@]}" -f "$WORK/pom.xml" "$@" 2>&1 |
        sed 's/\x1b\[[0-9;]*m//g' >"$logfile"
}

# Dies unless $1 has the sha1 that Maven recorded from Central for it ($2: its path in the
# local repository). Maven checked the download (-C); this checks the file used, in
# case the local repository copy was damaged later. Prints the sha1.
check_sha1() {
    local file=$1 sha_file want got
    sha_file="${SEARCHENGINE_MAVEN_REPO:-$HOME/.m2/repository}/$2.sha1"
    got=$(sha1sum "$file" | cut -d' ' -f1)
    if [[ -r "$sha_file" ]]; then
        want=$(tr -dc '0-9a-f' <"$sha_file" | cut -c1-40)
        [[ "$want" == "$got" ]] || die "sha1 of $file is $got, Maven Central says $want"
        log "  sha1 $got matches Maven Central's"
    else
        log "  warning: no $sha_file to compare sha1 $got with; relying on Maven's own check"
    fi
    printf '%s' "$got"
}

# Download (once) and assemble OpenSearch into $OS_CACHE/opensearch-<version>, then
# make sure it has the k-NN plugin (unless SEARCHENGINE_OPENSEARCH_KNN=0).
ensure_installed() {
    local home
    OS_CACHE=$(abs_dir "$OS_CACHE" SEARCHENGINE_OPENSEARCH_HOME)
    exec 7>"$OS_CACHE/.lock"
    flock -w 1800 7 || die "another dev-cluster.sh is installing into $OS_CACHE"
    if home=$(find_installed); then
        OPENSEARCH_HOME_DIR=$home
    else
        assemble_distribution
    fi
    ensure_knn_plugin
}

# Version of the installed server (from the install mark).
installed_version() {
    sed -n 's/^version=//p' "$OPENSEARCH_HOME_DIR/$INSTALLED_MARK"
}

# sha1 of k-NN plugin zips, taken when first fetched: Central has no checksum files
# (nor a pom) for them, so Maven cannot check the download; a zip of a version listed
# here must match, one of another version is used with a warning.
declare -A KNN_SHA1=([2.19.6.0]=3f9fcc3784f9a731912e651d4926626695132eaf)

# The k-NN plugin (knn_vector fields, knn queries), installed with the distribution's
# own bin/opensearch-plugin from the zip Central serves for the same 2.19.N (as
# 2.19.N.0). The zip has no native libraries, so only the "lucene" engine of
# knn_vector works; "faiss" and "nmslib" mappings crash the node. Runs under the
# install lock; nodes already running keep what they started with.
ensure_knn_plugin() {
    local version plugin_version zip work got
    if [[ "${SEARCHENGINE_OPENSEARCH_KNN:-1}" == 0 ]]; then
        [[ -d "$OPENSEARCH_HOME_DIR/plugins/opensearch-knn" ]] &&
            log "note: SEARCHENGINE_OPENSEARCH_KNN=0, but $OPENSEARCH_HOME_DIR already has the k-NN plugin"
        return 0
    fi
    [[ ! -f "$OPENSEARCH_HOME_DIR/plugins/opensearch-knn/plugin-descriptor.properties" ]] || return 0
    version=$(installed_version)
    [[ -n "$version" ]] || die "$OPENSEARCH_HOME_DIR/$INSTALLED_MARK names no version; run '$0 reset' and remove $OPENSEARCH_HOME_DIR"
    plugin_version="$version.0"
    command -v mvn >/dev/null || die "mvn (Maven) is needed to fetch the k-NN plugin (or set SEARCHENGINE_OPENSEARCH_KNN=0)"
    [[ -r "$POM" ]] || die "missing $POM"
    [[ -n "$JAVA_HOME_DIR" ]] || pick_java
    work=$(mktemp -d "$OS_CACHE/.knn.XXXXXX")
    # shellcheck disable=SC2064 # expand $work now: it is local
    trap "rm -rf '$work'" EXIT
    cp "$POM" "$work/pom.xml"
    log "fetching the k-NN plugin org.opensearch.plugin:opensearch-knn:$plugin_version:zip from Maven Central"
    # -c: no checksums to check (see KNN_SHA1); -U: retry a fetch that failed before.
    if ! MVN_CHECKSUMS=-c WORK=$work run_mvn "$work/mvn-knn.log" -U -P knn -Dopensearch.version="$version" \
        dependency:copy-dependencies -DoutputDirectory="$work/knn"; then
        tail -n 20 "$work/mvn-knn.log" >&2
        die "Maven could not fetch opensearch-knn $plugin_version; set SEARCHENGINE_OPENSEARCH_KNN=0 to run without vector fields"
    fi
    zip="$work/knn/opensearch-knn-$plugin_version.zip"
    [[ -f "$zip" ]] || die "Maven reported success but $zip is missing"
    got=$(sha1sum "$zip" | cut -d' ' -f1)
    if [[ -n "${KNN_SHA1[$plugin_version]:-}" ]]; then
        [[ "$got" == "${KNN_SHA1[$plugin_version]}" ]] ||
            die "sha1 of $zip is $got, expected ${KNN_SHA1[$plugin_version]}"
        log "  sha1 $got is the known one"
    else
        log "  warning: no known sha1 for opensearch-knn $plugin_version (Central publishes none); it is $got"
    fi
    # The tool checks the plugin against this server's version and jars (jar hell) and
    # moves it into plugins/ only when whole.
    if ! OPENSEARCH_JAVA_HOME="$JAVA_HOME_DIR" OPENSEARCH_PATH_CONF="$OPENSEARCH_HOME_DIR/config" \
        "$OPENSEARCH_HOME_DIR/bin/opensearch-plugin" install --batch "file://$zip" \
        </dev/null >"$work/plugin-install.log" 2>&1 7>&- 8>&-; then
        tail -n 20 "$work/plugin-install.log" >&2
        die "bin/opensearch-plugin could not install opensearch-knn $plugin_version; set SEARCHENGINE_OPENSEARCH_KNN=0 to run without it"
    fi
    rm -rf "$work"
    trap - EXIT
    log "installed the k-NN plugin $plugin_version in $OPENSEARCH_HOME_DIR/plugins/opensearch-knn"
}

# Fetch the minimal distribution and the modules; assemble them into the install cache.
assemble_distribution() {
    local v version="" work_home zip got m mdir jar base
    command -v mvn >/dev/null || die "mvn (Maven) is needed to fetch OpenSearch from Maven Central"
    command -v unzip >/dev/null || die "unzip is needed"
    [[ -r "$POM" ]] || die "missing $POM"

    WORK=$(mktemp -d "$OS_CACHE/.install.XXXXXX")
    trap 'rm -rf "$WORK"' EXIT
    # Maven runs on a copy, so it cannot write anything next to the repository's pom.
    cp "$POM" "$WORK/pom.xml"

    local t0=$SECONDS
    for v in $OS_VERSIONS; do
        log "fetching org.opensearch.distribution.integ-test-zip:opensearch:$v:zip from Maven Central"
        if run_mvn "$WORK/mvn-dist-$v.log" -P distribution -Dopensearch.version="$v" \
            dependency:copy-dependencies -DoutputDirectory="$WORK/dist"; then
            version=$v
            break
        fi
        log "  $v not available: $(grep -m1 -E 'ERROR' "$WORK/mvn-dist-$v.log" || tail -n1 "$WORK/mvn-dist-$v.log")"
    done
    [[ -n "$version" ]] || die "none of OpenSearch $OS_VERSIONS could be fetched from Maven Central"
    zip="$WORK/dist/opensearch-$version.zip"
    [[ -f "$zip" ]] || die "Maven reported success but $zip is missing"

    got=$(check_sha1 "$zip" "org/opensearch/distribution/integ-test-zip/opensearch/$version/opensearch-$version.zip")
    unzip -q "$zip" -d "$WORK/unpacked" || die "cannot unzip $zip"
    work_home="$WORK/unpacked/opensearch-$version"
    [[ -f "$work_home/lib/opensearch-$version.jar" ]] ||
        die "$zip does not contain lib/opensearch-$version.jar"

    for m in "${MODULES[@]}"; do
        log "fetching module $m $version"
        mdir="$work_home/modules/$m"
        run_mvn "$WORK/mvn-$m.log" -P "$m" -Dopensearch.version="$version" \
            dependency:copy-dependencies -DoutputDirectory="$mdir" ||
            { tail -n 20 "$WORK/mvn-$m.log" >&2; die "Maven could not fetch module $m $version"; }
        # A jar that lib/ already has would fail OpenSearch's jar-hell check at startup.
        for jar in "$mdir"/*.jar; do
            base=$(basename "$jar" | sed -E 's/-[0-9][^/]*\.jar$//')
            if compgen -G "$work_home/lib/$base-[0-9]*.jar" >/dev/null; then
                rm -f "$jar"
            fi
        done
        module_descriptor "$m" "$version" >"$mdir/plugin-descriptor.properties"
        if [[ -n "$(module_policy "$m")" ]]; then
            module_policy "$m" >"$mdir/plugin-security.policy"
        fi
    done

    printf 'version=%s\nzip_sha1=%s\nmodules=transport-netty4 %s\n' \
        "$version" "$got" "${MODULES[*]}" >"$work_home/$INSTALLED_MARK"
    rm -rf "${OS_CACHE:?}/opensearch-$version"
    mv "$work_home" "$OS_CACHE/opensearch-$version"
    rm -rf "$WORK"
    trap - EXIT
    OPENSEARCH_HOME_DIR="$OS_CACHE/opensearch-$version"
    log "installed OpenSearch $version in $OPENSEARCH_HOME_DIR ($((SECONDS - t0)) s)"
}
