#!/bin/sh
# monitoring.sh: monitoring/ against the real binary. The alert rules pass
# `promtool check rules` and their tests (`promtool test rules`, one per
# alert); the dashboard is JSON whose queries parse as PromQL; and every
# metric a rule or a panel names is one the gateway exports on moto's
# DynamoDB (`up` aside: Prometheus makes it). "ok N - what" / "not ok N".
set -u
: "${LG_BIN:?LG_BIN must name the leasegate binary}"
root=$(cd "$(dirname "$0")/../.." && pwd)
mon=$root/monitoring
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); echo "not ok $n - $1"; fail=1; }
work=$(mktemp -d /tmp/lg-mon.XXXXXX)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT

promtool check rules "$mon/alerts.yml" >"$work/check" 2>&1 && ok "promtool check rules" ||
	{ bad "promtool check rules"; cat "$work/check"; }
(cd "$mon" && promtool test rules alerts_test.yml) >"$work/test" 2>&1 && ok "promtool test rules" ||
	{ bad "promtool test rules"; cat "$work/test"; }
# one test per alert
python3 - "$mon" <<'PY'
import re, sys
mon = sys.argv[1]
alerts = set(re.findall(r'^\s*- alert: (\w+)', open(mon + '/alerts.yml').read(), re.M))
tested = set(re.findall(r'alertname: (\w+)', open(mon + '/alerts_test.yml').read()))
missing = alerts - tested
if missing:
    print("untested:", sorted(missing)); sys.exit(1)
PY
[ $? -eq 0 ] && ok "a rules test per alert" || bad "an alert without a test"

# the dashboard's queries, as a rules file promtool parses
python3 - "$mon" "$work" <<'PY'
import json, sys
mon, work = sys.argv[1], sys.argv[2]
d = json.load(open(mon + '/grafana-dashboard.json'))
exprs = [t['expr'] for p in d['panels'] for t in p.get('targets', [])]
assert len(exprs) >= 10, exprs
with open(work + '/dash.yml', 'w') as f:
    f.write('groups:\n  - name: dashboard\n    rules:\n')
    for i, e in enumerate(exprs):
        e = e.replace('$__rate_interval', '5m').replace('$instance', '.*')
        f.write('      - record: dashboard:q%d\n        expr: %s\n' % (i, json.dumps(e)))
PY
[ $? -eq 0 ] && ok "dashboard: JSON with its queries" || bad "dashboard JSON"
promtool check rules "$work/dash.yml" >"$work/dcheck" 2>&1 && ok "dashboard queries parse (promtool)" ||
	{ bad "dashboard queries parse"; cat "$work/dcheck"; }

# a gateway on moto, with a lease taken and released, then its /metrics
if [ -z "${LG_MOTO:-}" ]; then
	bad "needs moto (tests/run-integration.sh sets LG_MOTO)"
	exit 1
fi
. "$(dirname "$0")/../support/gw.sh"
port=$(gw_free_port) admin=$(gw_free_port)
AWS_ACCESS_KEY_ID=$LG_AK AWS_SECRET_ACCESS_KEY=$LG_SK AWS_ENDPOINT_URL_DYNAMODB=$LG_MOTO \
	AWS_REGION=us-east-1 "$LG_BIN" --port "$port" --pg-port 0 --admin-port "$admin" \
	--table "lg-mon-$$" --create-table 2>"$work/log" &
pid=$!
gw_ready "$port" || { bad "gateway did not start"; cat "$work/log"; exit 1; }
redis-cli -p "$port" LOCK.ACQUIRE mon 30000 >/dev/null
redis-cli -p "$port" LOCK.RELEASE mon >/dev/null
curl -s "http://127.0.0.1:$admin/metrics" >"$work/metrics"
promtool check metrics <"$work/metrics" >"$work/pm" 2>&1 && ok "promtool check metrics: silent" ||
	{ bad "promtool check metrics"; cat "$work/pm"; }
python3 - "$mon" "$work" >"$work/names" 2>&1 <<'PY'
import json, re, sys
mon, work = sys.argv[1], sys.argv[2]
exported = set()
for line in open(work + '/metrics'):
    m = re.match(r'# TYPE (\S+) (\S+)', line)
    if m:
        exported.add(m.group(1))
        if m.group(2) == 'histogram':
            exported |= {m.group(1) + s for s in ('_bucket', '_sum', '_count')}
exprs = re.findall(r'expr: (.*(?:\n\s{12,}.*)*)', open(mon + '/alerts.yml').read())
d = json.load(open(mon + '/grafana-dashboard.json'))
exprs += [t['expr'] for p in d['panels'] for t in p.get('targets', [])]
exprs += [v['query'] for v in d['templating']['list'] if v.get('type') == 'query']
keywords = {'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'offset',
            'and', 'or', 'unless', 'le', 'inf', 'nan'}
missing, named = set(), set()
for e in exprs:
    e = re.sub(r'"[^"]*"', '', e)              # strings
    e = re.sub(r'\{[^}]*\}', '', e)            # label matchers
    e = re.sub(r'\[[^\]]*\]', '', e)           # ranges
    e = re.sub(r'\b(by|without|on|ignoring)\s*\([^)]*\)', '', e)
    e = re.sub(r'label_values\(([^,)]*),[^)]*\)', r'\1', e)
    for m in re.finditer(r'[A-Za-z_:][A-Za-z0-9_:]*', e):
        name = m.group(0)
        if re.match(r'\s*\(', e[m.end():]):
            continue  # a function
        if name.lower() in keywords or re.fullmatch(r'[0-9.e]+', name):
            continue
        named.add(name)
        if name == 'up':
            continue  # Prometheus's own series of a scrape
        if name not in exported:
            missing.add(name)
if missing:
    print("not exported:", sorted(missing)); sys.exit(1)
print("metrics named:", len(named))
PY
if [ $? -eq 0 ]; then
	ok "every metric of the rules and the dashboard is exported ($(cat "$work/names"))"
else
	bad "a rule or panel names a metric the gateway does not export"
	cat "$work/names"
fi
grep -q 'dynasharp_' "$work/metrics" "$mon/alerts.yml" "$mon/grafana-dashboard.json" &&
	bad "a dynasharp_ name is left" || ok "one prefix: no dynasharp_ name"
exit $fail
