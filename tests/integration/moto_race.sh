#!/bin/sh
# moto_race: why this suite runs on tests/moto_serial.py — simultaneous
# conditional first writes of one fresh item double-grant on stock threaded
# moto_server (reported) and never on the serialized moto of the suite
# ($LG_MOTO, asserted). The test is tests/moto_race.py.
exec python3 "$(dirname "$0")/../moto_race.py"
