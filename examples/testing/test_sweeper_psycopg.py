"""The same service over PostgreSQL, tested with psycopg and leasegate
--test-mode: it stops working when its lease is lost and works again after
a new campaign, with no sleep (docs/testing.md)."""
from concurrent.futures import ThreadPoolExecutor

import psycopg

LEASE_MS = 30000


def connect(port):
    return psycopg.connect(host="127.0.0.1", port=port, user="app", dbname="app",
                           autocommit=True)


class Sweeper:
    """Leads `name` with leasegate.acquire and sweeps while it holds it."""

    def __init__(self, port, name="order-sweeper"):
        self.db = connect(port)
        self.name = name
        self.token = None
        self.swept = 0

    def campaign(self):
        """Waits until this instance holds the lock (wait_ms 0: forever)."""
        self.token = self.db.execute("SELECT leasegate.acquire(%s, %s, 0)",
                                     (self.name, LEASE_MS)).fetchone()[0]
        return self.token

    def sweep(self):
        """One round of work, only while holding: False once the lease is lost."""
        if self.token is None:
            return False
        try:  # a lost lease is this call's error, SQLSTATE 55000
            self.db.execute("SELECT leasegate.state(%s)", (self.name,))
        except psycopg.errors.ObjectNotInPrerequisiteState:
            self.token = None
            return False
        self.swept += 1
        return True


def test_stops_on_lost_and_resumes_after_a_new_campaign(leasegate):
    port = leasegate["pg"]
    svc = Sweeper(port)
    t = connect(port)  # the test's own session
    assert svc.campaign() == 1
    assert svc.sweep()

    row = t.execute("SELECT leasegate.simulate_holder(%s, %s, 'another-pod')",
                    (svc.name, LEASE_MS)).fetchone()
    assert row[0] == 2
    t.execute("SELECT leasegate.clock_advance(%s)", (LEASE_MS // 3,))
    assert not svc.sweep()  # lost at its next renewal: the service stopped

    # take the refusal wait before the new campaign starts (libpq's send)
    waiter = connect(port)
    waiter.pgconn.send_query(b"SELECT leasegate.wait_refusal('order-sweeper')")
    with ThreadPoolExecutor(1) as pool:
        again = pool.submit(svc.campaign)
        refused = waiter.pgconn.get_result()
        assert refused.get_value(0, 0) == b"t"  # the campaign waits on the other holder
        while waiter.pgconn.get_result() is not None:
            pass
        t.execute("SELECT leasegate.clock_advance(%s)", (LEASE_MS,))
        assert again.result(timeout=10) == 3  # taken over after a whole lease
    assert svc.sweep()
    assert svc.swept == 2
