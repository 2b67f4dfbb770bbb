"""pytest fixtures of the leasegate test-mode examples: a leasegate started
with --test-mode on free loopback ports for each test, stopped after it.
$LG_BIN names the binary (default: leasegate on PATH). No sleeps: the start
is awaited by reading its "ready" log line."""
import faulthandler
import os
import socket
import subprocess

import pytest


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(autouse=True)
def watchdog():
    """A test that hangs fails after a minute, with every thread's stack."""
    faulthandler.dump_traceback_later(60, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


@pytest.fixture
def leasegate():
    ports = {"redis": free_port(), "pg": free_port()}
    proc = subprocess.Popen(
        [os.environ.get("LG_BIN", "leasegate"), "--test-mode", "--port", str(ports["redis"]),
         "--pg-port", str(ports["pg"]), "--admin-port", "0"],
        stderr=subprocess.PIPE, text=True)
    for line in proc.stderr:  # ready once it says so
        if " ready: " in line:
            break
    else:
        raise RuntimeError("leasegate did not start")
    yield ports
    proc.terminate()
    proc.wait()
    proc.stderr.close()
