#!/bin/bash
# A singleton job on leasegate with redis-cli: run any number of copies; one
# leads and works, the others wait, and one of them takes over when the
# leader stops, crashes or loses its lease.
#
#   singleton.sh [name] [lease-ms]      (LEASEGATE_HOST, LEASEGATE_PORT)
name=${1:-nightly-report}
lease=${2:-30000}
step=${STEP:-0.5}

# One redis-cli for the whole run: a term belongs to the connection that
# campaigned, and closing it hands the lock on.
coproc LG { exec redis-cli --no-raw -h "${LEASEGATE_HOST:-127.0.0.1}" -p "${LEASEGATE_PORT:-6379}"; }
# Sends a command and reads its one-line reply, skipping the "(1.52s)"
# lines redis-cli prints after a command that took a while.
ask() {
	echo "$*" >&"${LG[1]}" || return 1
	while read -r reply <&"${LG[0]}"; do
		case $reply in "("[0-9]*"s)") ;; *) return 0 ;; esac
	done
	return 1
}

stopping= campaigning=
# A signal while campaigning ends redis-cli (blocked on the reply, it would
# not see its input close) and the script: the close cancels the campaign.
# While leading, it ends the work and resigns.
trap 'stopping=1; [ -n "$campaigning" ] && { kill "$LG_PID"; exit 0; }' TERM INT
while [ -z "$stopping" ]; do
	# Blocks until this connection leads.
	campaigning=1
	ask LEADER.CAMPAIGN "$name" "$lease" HOLDER "$(hostname):$$" || exit 1
	campaigning=
	case $reply in
	"(integer) "*) token=${reply#"(integer) "} ;;
	*) echo "campaign: $reply" >&2; exit 1 ;;
	esac
	echo "leading token=$token"
	while [ -z "$stopping" ]; do
		echo "working token=$token" # one unit of work, with the token
		sleep "$step"
		# Still leading? While it leads, CAMPAIGN answers this term's token
		# at once; a lost term answers (error) LOST <reason> once.
		ask LEADER.CAMPAIGN "$name" "$lease"
		if [ "$reply" != "(integer) $token" ]; then
			echo "lost: ${reply#"(error) "}; campaigning again"
			continue 2
		fi
	done
	ask LEADER.RESIGN "$name" # stopping while leading: hand on now
	echo "resigned token=$token"
done
