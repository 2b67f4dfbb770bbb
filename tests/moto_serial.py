"""moto_server that applies one request at a time.

Stock `python3 -m moto.server` serves moto's WSGI app from a thread per
connection, and moto's DynamoDB does a conditional write as a read, a check
and a write in Python with no lock: two simultaneous UpdateItems with
`attribute_not_exists(owner)` on one fresh item can both succeed. A test run
on it cannot tell a double grant by leasegate from one by the emulator.

This launcher serves the very same app (moto.server's DomainDispatcherApplication)
with the same options (-H host, -p port; INITIAL_NO_AUTH_ACTION_COUNT and
the other moto settings from the environment), still one thread per
connection, so that a slow or idle keep-alive connection never blocks the
others, but with every call of the app, up to its whole response body,
under one lock: requests are applied one at a time, in arrival order.
tests/moto_race.py shows the difference.

Usage: python3 tests/moto_serial.py [-H HOST] [-p PORT]
"""
import argparse
import io
import os
import signal
import sys
import threading

from werkzeug.serving import run_simple


class SerialApp:
    """A WSGI app that lets one call of `app` run at a time."""

    def __init__(self, app):
        self.app = app
        self.lock = threading.Lock()

    def __call__(self, environ, start_response):
        # The request body is read before taking the lock: a client slow
        # to send its body holds up nobody.
        length = environ.get("CONTENT_LENGTH")
        if length and length.isdigit():
            environ["wsgi.input"] = io.BytesIO(environ["wsgi.input"].read(int(length)))
        with self.lock:
            body = self.app(environ, start_response)
            try:
                # The body is read under the lock too: a lazy body could
                # still touch moto's state.
                return [b"".join(body)]
            finally:
                close = getattr(body, "close", None)
                if close is not None:
                    close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-H", "--host", default="127.0.0.1")
    parser.add_argument("-p", "--port", type=int, default=int(os.environ.get("MOTO_PORT", 5000)))
    args = parser.parse_args()
    # moto builds some URLs (e.g. in IAM and STS answers) from MOTO_PORT.
    os.environ.setdefault("MOTO_PORT", str(args.port))

    # Imported after MOTO_PORT is set, as moto.server does.
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    signal.signal(signal.SIGINT, lambda *_: sys.exit(0))
    app = DomainDispatcherApplication(create_backend_app)
    app.debug = True
    run_simple(args.host, args.port, SerialApp(app), threaded=True)


if __name__ == "__main__":
    main()
