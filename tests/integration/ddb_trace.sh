#!/bin/sh
# ddb_trace: tests/stress/ddb_trace.py, the reader of the stress run's
# DynamoDB traces (STRESS_TRACE=1), on a crafted trace: requests cut into
# chunks and sharing chunks, answers matched in order, one never
# answered, a refused condition's item. Needs no moto; run by
# tests/run-integration.sh. Under a second.
exec /usr/bin/python3 "$(dirname "$0")/../stress/ddb_trace.py" --selftest
