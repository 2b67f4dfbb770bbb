#!/bin/sh
# The ORMs, pools and poolers applications reach PostgreSQL through
# (SQLAlchemy, Django, HikariCP, Go's database/sql + lib/pq and pgxpool,
# node-postgres's Pool, pgbouncer) and PostgreSQL 15's input strictness,
# against leasegate: see pg/run_drivers.sh. PG_TARGET=postgres runs them
# against a PostgreSQL 15 instead.
PG_DRIVERS=${PG_DRIVERS:-sqlalchemy django hikari gopool node-pool pgbouncer strict} \
	exec "$(dirname "$0")/pg/run_drivers.sh" "$@"
