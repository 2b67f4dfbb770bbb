#!/bin/sh
# build-image.sh: builds leasegate's container image with podman from
# docker/Dockerfile.
#
#   docker/build-image.sh            IMAGE (default localhost/leasegate:<version>)
#
# With a registry at hand, docker or podman build the Dockerfile as it is
# (its BASE defaults to debian:bookworm-slim). Where no registry is reached
# (these machines), BASE=local (the default here) first makes a minimal
# Debian 12 of the machine's own apt source with debootstrap and imports
# it as localhost/debian:bookworm-min, once (kept for later builds), then
# builds on it. BASE=debian:bookworm-slim uses the registry's image.
#
# podman runs with runc (crun refuses the hybrid cgroups of these
# machines), the host network (apt-get in the build reaches the same
# source) and the rlimits the process already has (raising them is not
# permitted here): PODMAN_FLAGS has them, for `podman run` too.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
version=$(sed -n 's/^#define LG_VERSION "\(.*\)"$/\1/p' "$root/gateway/config.h")
IMAGE=${IMAGE:-localhost/leasegate:$version}
BASE=${BASE:-local}
LOCAL_BASE=localhost/debian:bookworm-min
PODMAN_FLAGS=${PODMAN_FLAGS:---runtime runc}
BUILD_FLAGS="--network host --ulimit nofile=1024:1024 --ulimit nproc=1000:1000"

# The URI of the machine's Debian source (deb822 or one-line format).
apt_uri() {
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk '/^URIs:/ && $2 ~ /\/debian\/?$/ { print $2; exit }' "$f"
	done
	[ -f /etc/apt/sources.list ] &&
		awk '$1 == "deb" && $3 == "bookworm" { print $2; exit }' /etc/apt/sources.list
	return 0
}

if [ "$BASE" = local ]; then
	BASE=$LOCAL_BASE
	if ! podman image exists "$BASE"; then
		command -v debootstrap >/dev/null || {
			echo "build-image.sh: debootstrap is missing (apt-get install debootstrap)" >&2
			exit 1
		}
		uri=$(apt_uri | head -n 1)
		[ -n "$uri" ] || {
			echo "build-image.sh: no Debian apt source found in /etc/apt" >&2
			exit 1
		}
		dir=$(mktemp -d /tmp/leasegate-base.XXXXXX)
		trap 'rm -rf "$dir"' EXIT
		echo "build-image.sh: debootstrap bookworm from $uri (once)"
		debootstrap --variant=minbase bookworm "$dir" "$uri" >"$dir.log" 2>&1 || {
			tail -20 "$dir.log" >&2
			exit 1
		}
		rm -f "$dir.log"
		# apt-get inside the build uses the same source
		printf 'deb %s bookworm main\n' "$uri" >"$dir/etc/apt/sources.list"
		rm -rf "$dir/var/cache/apt/archives/"*.deb "$dir/var/lib/apt/lists/"*
		tar -C "$dir" -c . | podman import - "$BASE" >/dev/null
	fi
fi

# shellcheck disable=SC2086
podman $PODMAN_FLAGS build $BUILD_FLAGS --format docker --build-arg BASE="$BASE" \
	-f "$root/docker/Dockerfile" -t "$IMAGE" "$root"
echo "build-image.sh: built $IMAGE on $BASE"
