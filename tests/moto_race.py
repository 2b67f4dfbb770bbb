"""Why the integration suite runs on tests/moto_serial.py, not stock moto.

The race of a fresh lock: N clients at once send the conditional first
write of an acquire (UpdateItem `SET owner ... ADD fence 1` if
`attribute_not_exists(owner)`) to one item that does not exist yet.
DynamoDB grants exactly one. Over TRIALS fresh items this counts the
trials in which more than one write succeeded (a double grant):

  - on stock `python3 -m moto.server` (started here): reported, not
    asserted — the emulator's conditional writes are not atomic, so it can
    happen, more or less often depending on the machine's load;
  - on the serialized moto the suite runs on ($LG_MOTO with $LG_AK/$LG_SK,
    from tests/run-integration.sh; or one started here from
    tests/moto_serial.py when LG_MOTO is unset): must be 0.

Prints `ok <n> <what>` / `not ok <n> <what>` lines; exits 1 on a failure.
Settings: MOTO_RACE_TRIALS (default 60), MOTO_RACE_CLIENTS (default 6).
"""
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request

import boto3
from botocore.config import Config

HERE = os.path.dirname(os.path.abspath(__file__))
TRIALS = int(os.environ.get("MOTO_RACE_TRIALS", "60"))
CLIENTS = int(os.environ.get("MOTO_RACE_CLIENTS", "6"))
REGION = "us-east-1"

n_checks = 0
failed = False


def check(ok, what):
    global n_checks, failed
    n_checks += 1
    print(f"{'ok' if ok else 'not ok'} {n_checks} {what}", flush=True)
    if not ok:
        failed = True


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start(argv, port):
    """Starts a moto server (argv) on port; returns the process once it answers."""
    log = open(os.path.join(os.environ.get("LG_WORK", "/tmp"), f"moto-race-{port}.log"), "w")
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/moto-api/"
    for _ in range(300):
        try:
            urllib.request.urlopen(url, timeout=1).read()
            return proc
        except OSError:
            if proc.poll() is not None:
                break
            time.sleep(0.1)
    proc.kill()
    sys.exit(f"not ok 0 {' '.join(argv)} did not start (see {log.name})")


def race(endpoint, ak, sk, label):
    """Runs TRIALS races of CLIENTS first writes; returns the double grants."""
    cfg = Config(retries={"max_attempts": 1}, max_pool_connections=2)
    clients = [boto3.client("dynamodb", endpoint_url=endpoint, region_name=REGION,
                            aws_access_key_id=ak, aws_secret_access_key=sk, config=cfg)
               for _ in range(CLIENTS)]
    table = f"race-{os.getpid()}-{label}"
    clients[0].create_table(TableName=table,
                            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                            BillingMode="PAY_PER_REQUEST")
    doubles = 0
    most = 0
    for trial in range(TRIALS):
        barrier = threading.Barrier(CLIENTS)
        granted = []
        errors = []

        def acquire(i):
            c = clients[i]
            barrier.wait()
            try:
                r = c.update_item(
                    TableName=table, Key={"pk": {"S": f"LOCK#fresh-{trial}"}},
                    UpdateExpression="SET #o = :me, #t = :lock ADD #f :one",
                    ConditionExpression="attribute_not_exists(#o)",
                    ExpressionAttributeNames={"#o": "owner", "#t": "_type", "#f": "fence"},
                    ExpressionAttributeValues={":me": {"S": f"client-{i}"},
                                               ":lock": {"S": "LOCK"}, ":one": {"N": "1"}},
                    ReturnValues="UPDATED_NEW")
                granted.append((i, r["Attributes"]["fence"]["N"]))
            except c.exceptions.ConditionalCheckFailedException:
                pass
            except Exception as e:  # anything else is a broken run, not a refusal
                errors.append(f"client {i}: {e!r}")

        threads = [threading.Thread(target=acquire, args=(i,)) for i in range(CLIENTS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            check(False, f"{label}: trial {trial}: {errors[0]}")
            return None
        if not granted:
            check(False, f"{label}: trial {trial}: nobody was granted a free item")
            return None
        if len(granted) > 1:
            doubles += 1
            most = max(most, len(granted))
    print(f"# {label}: {doubles} of {TRIALS} trials granted one fresh item more than once "
          f"({CLIENTS} clients at once; most grants in one trial: {most or 1})", flush=True)
    return doubles


def main():
    procs = []
    try:
        port = free_port()
        procs.append(start([sys.executable, "-m", "moto.server", "-H", "127.0.0.1",
                            "-p", str(port)], port))
        stock = race(f"http://127.0.0.1:{port}", "test", "test", "stock threaded moto")
        if stock is not None:
            # A demonstration, not a requirement: it depends on thread timing.
            check(True, f"stock threaded moto: {stock} double grant(s) in {TRIALS} trials "
                        "(reported, not asserted)")

        if os.environ.get("LG_MOTO"):
            ep, ak, sk = os.environ["LG_MOTO"], os.environ["LG_AK"], os.environ["LG_SK"]
            label = "serialized moto of the suite ($LG_MOTO)"
        else:
            sport = free_port()
            procs.append(start([sys.executable, os.path.join(HERE, "moto_serial.py"),
                                "-H", "127.0.0.1", "-p", str(sport)], sport))
            ep, ak, sk = f"http://127.0.0.1:{sport}", "test", "test"
            label = "serialized moto (tests/moto_serial.py)"
        serial = race(ep, ak, sk, label)
        if serial is not None:
            check(serial == 0, f"{label}: 0 double grants in {TRIALS} trials (got {serial})")
    finally:
        for p in procs:
            p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
