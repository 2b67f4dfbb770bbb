#!/bin/bash
# A singleton job on leasegate with redis-cli: run any number of copies; one
# leads and works, the others wait, and one of them takes over when the
# leader stops, crashes or loses its lease. A leader whose gateway restarts
# (a rolling update, --drain-grace) reconnects and adopts its term: it goes
# on working with the same token.
#
#   singleton.sh [name] [lease-ms]      (LEASEGATE_HOST, LEASEGATE_PORT;
#                                        LEASEGATE_ALSO=host:port,... more
#                                        gateways to reconnect to)
name=${1:-nightly-report}
lease=${2:-30000}
step=${STEP:-0.5}
servers=("${LEASEGATE_HOST:-127.0.0.1}:${LEASEGATE_PORT:-6379}" ${LEASEGATE_ALSO//,/ })
turn=0

# One redis-cli at a time: a term belongs to the connection that campaigned
# (or adopted it), and closing it hands the lock on.
connect() {
	[ -n "${LG_PID:-}" ] && kill "$LG_PID" 2>/dev/null && wait "$LG_PID" 2>/dev/null
	local s=${servers[turn % ${#servers[@]}]}
	turn=$((turn + 1))
	coproc LG { exec redis-cli --no-raw -h "${s%:*}" -p "${s##*:}" 2>&1; } # its errors as replies
}
# Sends a command and reads its reply: one line, or the two lines of
# [token, secret] ($secret_reply then), skipping the "(1.52s)" lines
# redis-cli prints after a command that took a while.
ask() {
	secret_reply=
	echo "$*" >&"${LG[1]}" || return 1
	while read -r reply <&"${LG[0]}"; do
		case $reply in
		"("[0-9]*"s)") ;;
		"1) "*)
			read -r secret_reply <&"${LG[0]}" || return 1
			secret_reply=${secret_reply#'2) "'}
			secret_reply=${secret_reply%'"'}
			return 0
			;;
		*) return 0 ;;
		esac
	done
	return 1
}
# The connection is gone (its gateway restarted): redis-cli says so.
gone() { case $reply in "Error: "* | "Could not connect"* | "") return 0 ;; esac; return 1; }

# A new connection adopts the term (token $token, secret $secret): true
# with the new secret in $secret. Tries a few seconds: the old gateway
# marks the term adoptable as it closes its connections.
adopt() {
	local i
	for i in $(seq 50); do
		connect
		ask LEADER.ADOPT "$name" "$token" "$secret"
		if [ -n "$secret_reply" ]; then
			secret=$secret_reply
			return 0
		fi
		sleep 0.1
	done
	return 1
}

stopping= campaigning=
# A signal while campaigning ends redis-cli (blocked on the reply, it would
# not see its input close) and the script: the close cancels the campaign.
# While leading, it ends the work and resigns.
trap 'stopping=1; [ -n "$campaigning" ] && { kill "$LG_PID"; exit 0; }' TERM INT
connect
while [ -z "$stopping" ]; do
	# Blocks until this connection leads: [token, secret]. The secret lets
	# a new connection adopt the term if this one's gateway restarts.
	campaigning=1
	ask LEADER.CAMPAIGN "$name" "$lease" HOLDER "$(hostname):$$" ADOPTABLE || exit 1
	campaigning=
	case $reply in
	"1) (integer) "*) token=${reply#"1) (integer) "} secret=$secret_reply ;;
	*) echo "campaign: $reply" >&2; exit 1 ;;
	esac
	echo "leading token=$token"
	while [ -z "$stopping" ]; do
		echo "working token=$token" # one unit of work, with the token
		sleep "$step"
		# Still leading? While it leads, CAMPAIGN answers this term's token
		# at once; a lost term answers (error) LOST <reason> once.
		ask LEADER.CAMPAIGN "$name" "$lease"
		if gone; then
			if adopt; then
				echo "adopted token=$token"
				continue
			fi
			echo "lost: connection, the term not adoptable; campaigning again"
			continue 2
		fi
		if [ "$reply" != "(integer) $token" ]; then
			echo "lost: ${reply#"(error) "}; campaigning again"
			continue 2
		fi
	done
	ask LEADER.RESIGN "$name" # stopping while leading: hand on now
	echo "resigned token=$token"
done
