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
# the example with the TLS component, as its comment says to add it
mkdir "$work/tls-overlay"
printf 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [%s]\ncomponents: [%s]\n' \
	"$(python3 -c 'import os, sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' "$root/docker/overlays/example" "$work/tls-overlay")" \
	"$(python3 -c 'import os, sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' "$root/docker/components/tls" "$work/tls-overlay")" \
	>"$work/tls-overlay/kustomization.yaml"
kubectl kustomize "$work/tls-overlay" >"$work/tls.yaml" 2>"$work/kz.log" ||
	fail "kubectl kustomize (docker/overlays/example + docker/components/tls)" kz.log
# the `kubectl create secret generic NAME ... [-n NS]` lines of
# docs/kubernetes.md (the page a user follows): name TAB namespace
awk '/kubectl create secret generic/ {
		name = ""; ns = ""
		for (i = 1; i <= NF; i++) {
			if ($i == "generic") name = $(i + 1)
			if ($i == "-n" || $i == "--namespace") ns = $(i + 1)
			if ($i ~ /^--namespace=/) ns = substr($i, 13)
		}
		print name "\t" ns
	}' "$root/docs/kubernetes.md" >"$work/readme-secrets.tsv"
[ -s "$work/readme-secrets.tsv" ] || fail "docs/kubernetes.md has no kubectl create secret line"

# what the binary and docker/ say
"$LG_BIN" --options >"$work/options.tsv" || fail "leasegate --options"
version=$("$LG_BIN" --version | awk '{ print $2 }')
image=$(sed -n 's/^IMAGE=${IMAGE:-\(.*\)}$/\1/p' "$root/docker/build-image.sh")
image=${image##*/}
image=${image%%:*}
expose=$(awk '$1 == "EXPOSE" { $1 = ""; print }' "$root/docker/Dockerfile")
user=$(awk '$1 == "USER" { split($2, a, ":"); print a[1] }' "$root/docker/Dockerfile")
bound=$(sed -n 's/^#define CFG_SHUTDOWN_BOUND_S \([0-9]*\).*/\1/p' "$root/gateway/config.h")
[ -n "$image" ] && [ -n "$expose" ] && [ -n "$user" ] && [ -n "$bound" ] ||
	fail "read docker/ (image '$image', EXPOSE '$expose', USER '$user') and config.h (bound '$bound')"
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
LG_DEPLOY_CTX=$(python3 - "$work/options.tsv" "$version" "$image" "$expose" "$user" "$bound" "$served" "$work/readme-secrets.tsv" <<'PY'
import json, sys
opts = {}
for line in open(sys.argv[1]):
    name, typ, env, choices, default = line.rstrip("\n").split("\t")
    opts[name] = {"type": typ, "env": env, "def": default}
secrets = []
for line in open(sys.argv[8]):
    name, ns = line.rstrip("\n").split("\t")
    secrets.append({"name": name, "ns": ns or None})
print(json.dumps({"options": opts, "version": sys.argv[2], "imageName": sys.argv[3],
                  "expose": [int(p) for p in sys.argv[4].split()], "user": sys.argv[5],
                  "shutdownBound": int(sys.argv[6]), "served": sys.argv[7].split(),
                  "readmeSecrets": secrets}))
PY
) || fail "the context for check.mjs"
echo "# binary $version: $(wc -l <"$work/options.tsv") options; served:$served; image $image; EXPOSE$expose; USER $user"
echo "# docs/kubernetes.md secrets: $(tr '\t\n' '/ ' <"$work/readme-secrets.tsv")"

cd "$work/node" || exit 1
node check.mjs --selftest "$root/docker/kubernetes/leasegate.yaml" >"$work/selftest.out"
rc=$?
cat "$work/selftest.out"
[ $rc -eq 0 ] || exit 1
LG_N0=$(grep -c '^ok ' "$work/selftest.out") node check.mjs base="$root/docker/kubernetes/leasegate.yaml" \
	kustomize="$work/kustomize-base.yaml" example="$work/example.yaml" tls="$work/tls.yaml" \
	>"$work/checks.out"
rc=$?
cat "$work/checks.out"
n=$(grep -c '^\(not \)\?ok ' "$work/selftest.out" "$work/checks.out" | awk -F: '{ s += $2 } END { print s }')

# The base as it is, on an empty cluster: its container's environment (the
# ConfigMap, env values; the optional Secrets absent) is ready on the
# embedded store. Ports and address moved to free ones on loopback.
node check.mjs --env "$root/docker/kubernetes/leasegate.yaml" >"$work/base.env" || rc=1
kill "$gw" 2>/dev/null; wait "$gw" 2>/dev/null; gw=
admin=$(gw_free_port)
env -i PATH="$PATH" $(cat "$work/base.env") LEASEGATE_BIND=127.0.0.1 LEASEGATE_PORT=0 \
	LEASEGATE_PG_PORT=0 LEASEGATE_ADMIN_PORT="$admin" "$LG_BIN" >"$work/base.log" 2>&1 &
gw=$!
i=0 code=
until [ "$code" = 200 ] || [ $i -gt 100 ]; do
	i=$((i + 1)); sleep 0.05
	code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$admin/readyz")
done
n=$((n + 1))
if [ "$code" = 200 ]; then
	echo "ok $n the base's environment ($(tr '\n' ' ' <"$work/base.env")) is ready: /readyz 200"
else
	echo "not ok $n the base's environment is not ready (/readyz $code)"; sed 's/^/# /' "$work/base.log"; rc=1
fi
exit $rc
