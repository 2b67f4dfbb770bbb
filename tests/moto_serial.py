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

It also keeps what moto leaves out of TransactWriteItems and DynamoDB
documents ("Idempotency", transaction-apis): a request whose
ClientRequestToken was used by a successful one in the last 10 minutes is
answered that success again, without applying it, when its other
parameters are the same, and IdempotentParameterMismatchException when they
differ. leasegate's retries, and the client request ids of fenced writes
(LOCK.TRANSACT ... REQUEST id), rely on it.

Usage: python3 tests/moto_serial.py [-H HOST] [-p PORT]
"""
import argparse
import io
import json
import os
import signal
import sys
import threading
import time

from werkzeug.serving import run_simple


IDEMPOTENCY_WINDOW_S = 600
JSON_TYPE = [("Content-Type", "application/x-amz-json-1.0")]


def client_token(environ, raw):
    """(token, the other parameters as canonical JSON) of a TransactWriteItems
    with a ClientRequestToken, else None."""
    if not environ.get("HTTP_X_AMZ_TARGET", "").endswith(".TransactWriteItems"):
        return None
    try:
        req = json.loads(raw)
    except ValueError:
        return None
    token = req.pop("ClientRequestToken", None) if isinstance(req, dict) else None
    if not token:
        return None
    return token, json.dumps(req, sort_keys=True)


class SerialApp:
    """A WSGI app that lets one call of `app` run at a time."""

    def __init__(self, app):
        self.app = app
        self.lock = threading.Lock()
        self.tokens = {}  # ClientRequestToken -> (params, expiry, status, headers, body)

    def replay(self, tok, start_response):
        """The answer to a token seen in the window, or None."""
        now = time.monotonic()
        for k in [k for k, v in self.tokens.items() if v[1] < now]:
            del self.tokens[k]
        seen = self.tokens.get(tok[0])
        if seen is None:
            return None
        if seen[0] != tok[1]:
            start_response("400 Bad Request", JSON_TYPE)
            return [json.dumps({
                "__type": "com.amazonaws.dynamodb.v20120810#IdempotentParameterMismatchException",
                "message": "Request parameters do not match the parameters of the request "
                           "with this ClientRequestToken"}).encode()]
        start_response(seen[2], seen[3])
        return [seen[4]]

    def __call__(self, environ, start_response):
        # The request body is read before taking the lock: a client slow
        # to send its body holds up nobody.
        length = environ.get("CONTENT_LENGTH")
        raw = b""
        if length and length.isdigit():
            raw = environ["wsgi.input"].read(int(length))
            environ["wsgi.input"] = io.BytesIO(raw)
        tok = client_token(environ, raw)
        answer = {}

        def keep(status, headers, exc_info=None):
            answer["status"], answer["headers"] = status, list(headers)
            return start_response(status, headers, exc_info)

        with self.lock:
            if tok is not None:
                replayed = self.replay(tok, start_response)
                if replayed is not None:
                    return replayed
            body = self.app(environ, keep)
            try:
                # The body is read under the lock too: a lazy body could
                # still touch moto's state.
                out = b"".join(body)
            finally:
                close = getattr(body, "close", None)
                if close is not None:
                    close()
            if tok is not None and answer.get("status", "").startswith("200"):
                self.tokens[tok[0]] = (tok[1], time.monotonic() + IDEMPOTENCY_WINDOW_S,
                                       answer["status"], answer["headers"], out)
            return [out]


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
