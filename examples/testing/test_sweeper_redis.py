"""A service that works while it leads, tested with leasegate --test-mode
and redis-py: it stops working when its lease is lost (LOST) and works
again after a new campaign, with no sleep (docs/testing.md)."""
from concurrent.futures import ThreadPoolExecutor

import redis

LEASE_MS = 30000


class Sweeper:
    """The service under test: leads `name` and sweeps while it leads."""

    def __init__(self, port, name="order-sweeper"):
        self.r = redis.Redis(host="127.0.0.1", port=port)
        self.name = name
        self.token = None
        self.swept = 0

    def campaign(self):
        """Waits until this instance leads; its fencing token."""
        self.token = self.r.execute_command("LEADER.CAMPAIGN", self.name, LEASE_MS, "WAIT", 0)
        return self.token

    def sweep(self):
        """One round of work, only while leading: False once the term is lost."""
        if self.token is None:
            return False
        try:  # answered at once while this term lasts, -LOST once it is lost
            self.r.execute_command("LEADER.CAMPAIGN", self.name, LEASE_MS)
        except redis.ResponseError as e:
            if not str(e).startswith("LOST"):
                raise
            self.token = None
            return False
        self.swept += 1
        return True


def test_stops_on_lost_and_resumes_after_a_new_campaign(leasegate):
    port = leasegate["redis"]
    svc = Sweeper(port)
    t = redis.Redis(host="127.0.0.1", port=port)  # the test's own connection: the lock world's controls
    assert svc.campaign() == 1
    assert svc.sweep()

    # another pod takes the lock, as a crashed holder that never renews
    assert t.execute_command("LOCK.SIMULATE", "HOLDER", svc.name, LEASE_MS, "another-pod") == 2
    t.execute_command("DEBUG.CLOCK", "ADVANCE", LEASE_MS // 3)  # the next renewal runs
    assert not svc.sweep()  # LOST: the service stopped working
    assert svc.swept == 1

    # take the refusal wait before the new campaign starts, on a connection
    # that is open already (a new one could be read after the campaign)
    waiter = redis.Connection(host="127.0.0.1", port=port)
    waiter.send_command("PING")
    assert waiter.read_response() == b"PONG"
    waiter.send_command("LOCK.WAITREFUSAL", svc.name)
    with ThreadPoolExecutor(1) as pool:
        again = pool.submit(svc.campaign)
        assert waiter.read_response() == 1  # the campaign found the lock held and waits
        assert not again.done()
        # a whole lease of the crashed holder's: the campaign takes the lock over
        t.execute_command("DEBUG.CLOCK", "ADVANCE", LEASE_MS)
        assert again.result(timeout=10) == 3
    assert svc.sweep()
    assert svc.swept == 2
    waiter.disconnect()
