#!/bin/sh
# deploy_manifests: docker/'s Kubernetes manifests, checked without a
# cluster by deploy/check.mjs: the plain YAML (docker/kubernetes/
# leasegate.yaml), the Kustomize base and the example overlay as
# `kubectl kustomize` renders them (offline). What the checks compare with
# comes from the binary and docker/: `$LG_BIN --options` (flags, variables,
# defaults), `--version`, the admin port of a running $LG_BIN answering the
# manifests' probe and scrape paths, the Dockerfile's EXPOSE and USER,
# build-image.sh's image name, main.c's shutdown bound. First, --selftest:
# each check fails on a copy of the base broken the way it looks for.
# kubernetes-models and yaml come from deploy/package-lock.json (`npm ci`
# into a copy under $LG_WORK). Prints `ok <n> <what>`.
set -u
: "${LG_BIN:?LG_BIN must name the leasegate binary}"
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d "${LG_WORK:-/tmp}/deploy_manifests.XXXXXX")
gw=
cleanup() {
	[ -n "$gw" ] && kill "$gw" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM
fail() {
	echo "not ok 0 $1"
	[ -n "${2:-}" ] && [ -f "$work/$2" ] && sed 's/^/# /' "$work/$2"
	exit 1
}
command -v kubectl >/dev/null || fail "kubectl (its kustomize) is on PATH"
command -v node >/dev/null || fail "node is on PATH"

. "$(dirname "$0")/../support/gw.sh"
admin=$(gw_free_port)
"$LG_BIN" --port 0 --pg-port 0 --admin-port "$admin" >"$work/gw.log" 2>&1 &
gw=$!

mkdir "$work/node"
cp "$here/deploy/package.json" "$here/deploy/package-lock.json" "$here/deploy/check.mjs" "$work/node/"
(cd "$work/node" && npm ci --no-audit --no-fund --prefer-offline --loglevel=error) \
	>"$work/npm.log" 2>&1 || fail "npm ci" npm.log

kubectl kustomize "$root/docker/kubernetes" >"$work/kustomize-base.yaml" 2>"$work/kz.log" ||
	fail "kubectl kustomize docker/kubernetes" kz.log
kubectl kustomize "$root/docker/overlays/example" >"$work/example.yaml" 2>"$work/kz.log" ||
	fail "kubectl kustomize docker/overlays/example" kz.log

# what the binary and docker/ say
"$LG_BIN" --options >"$work/options.tsv" || fail "leasegate --options"
version=$("$LG_BIN" --version | awk '{ print $2 }')
image=$(sed -n 's/^IMAGE=${IMAGE:-\(.*\)}$/\1/p' "$root/docker/build-image.sh")
image=${image##*/}
image=${image%%:*}
expose=$(awk '$1 == "EXPOSE" { $1 = ""; print }' "$root/docker/Dockerfile")
user=$(awk '$1 == "USER" { split($2, a, ":"); print a[1] }' "$root/docker/Dockerfile")
bound=$(sed -n 's/^#define SHUTDOWN_BOUND_S \([0-9]*\).*/\1/p' "$root/gateway/main.c")
[ -n "$image" ] && [ -n "$expose" ] && [ -n "$user" ] && [ -n "$bound" ] ||
	fail "read docker/ (image '$image', EXPOSE '$expose', USER '$user') and main.c (bound '$bound')"
i=0
until curl -s -o /dev/null "http://127.0.0.1:$admin/healthz"; do
	i=$((i + 1))
	[ $i -gt 200 ] && fail "leasegate's admin port did not open" gw.log
	sleep 0.05
done
# the paths the manifests name, kept when the binary answers them 200
served=
for p in $(sed -n 's/.*\(path: \|prometheus.io\/path: \)\(\/[a-z]*\).*/\2/p' \
	"$root/docker/kubernetes/leasegate.yaml" "$work/example.yaml" | sort -u); do
	[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$admin$p")" = 200 ] &&
		served="$served $p"
done
export LG_DEPLOY_CTX
LG_DEPLOY_CTX=$(python3 - "$work/options.tsv" "$version" "$image" "$expose" "$user" "$bound" "$served" <<'PY'
import json, sys
opts = {}
for line in open(sys.argv[1]):
    name, typ, env, choices, default = line.rstrip("\n").split("\t")
    opts[name] = {"type": typ, "env": env, "def": default}
print(json.dumps({"options": opts, "version": sys.argv[2], "imageName": sys.argv[3],
                  "expose": [int(p) for p in sys.argv[4].split()], "user": sys.argv[5],
                  "shutdownBound": int(sys.argv[6]), "served": sys.argv[7].split()}))
PY
) || fail "the context for check.mjs"
echo "# binary $version: $(wc -l <"$work/options.tsv") options; served:$served; image $image; EXPOSE$expose; USER $user"

cd "$work/node" || exit 1
node check.mjs --selftest "$root/docker/kubernetes/leasegate.yaml" >"$work/selftest.out"
rc=$?
cat "$work/selftest.out"
[ $rc -eq 0 ] || exit 1
LG_N0=$(grep -c '^ok ' "$work/selftest.out") node check.mjs base="$root/docker/kubernetes/leasegate.yaml" \
	kustomize="$work/kustomize-base.yaml" example="$work/example.yaml"
