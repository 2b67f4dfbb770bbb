#!/bin/sh
# The PostgreSQL drivers' tests (psql, psycopg2, psycopg 3, asyncpg, pgjdbc,
# node-postgres, pgx and the examples) against leasegate: see pg/run_drivers.sh.
exec "$(dirname "$0")/pg/run_drivers.sh" "$@"
