#!/bin/sh
# deploy_aws: the AWS side of the deployment (docker/iam-policy.json,
# docker/cloudformation.yaml, docs/dynamodb.md):
#   - the policy names exactly the IAM actions of the DynamoDB operations
#     the binary sends (core/store/dynamodb/store_dynamodb.c's targets; DeleteItem
#     only from core/lt_testing.c, the tests' helper, checked too);
#   - the CloudFormation template passes cfn-lint, parses (with its !Ref,
#     !GetAtt, !Sub, !If tags) and its role has the policy's statements,
#     same Sids and actions, all but LeasegateCreateTable (it makes the
#     table: on demand, key pk, TTL);
#   - `aws cloudformation deploy` of the template on moto: the resolved
#     role policy is the policy file's (but LeasegateCreateTable), the
#     trust names IRSA's OIDC subject and Pod Identity's service;
#   - docs/dynamodb.md's `aws dynamodb create-table` / `update-time-to-live`
#     block runs as written against moto; the gateway then works on that
#     table with keys whose IAM user has the policy's LeasegateLocks
#     statement's actions alone (moto checks actions, not resources or
#     conditions: the fenced statements are not exercised here), its items carry the TTL
#     attribute, and without dynamodb:Scan `LOCK.LIST TABLE` is refused.
# Needs $LG_MOTO, $LG_AK/$LG_SK (tests/run-integration.sh), the aws CLI,
# cfn-lint and PyYAML of the machine's python3. Prints `ok <n> <what>`.
set -u
: "${LG_BIN:?LG_BIN must name the leasegate binary}"
: "${LG_MOTO:?LG_MOTO must name the moto endpoint}"
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d "${LG_WORK:-/tmp}/deploy_aws.XXXXXX")
gw=
cleanup() {
	[ -n "$gw" ] && kill "$gw" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM
n=0
ok() {
	n=$((n + 1))
	echo "ok $n $1"
}
fail() {
	n=$((n + 1))
	echo "not ok $n $1"
	for f in "$work"/*.log "$work"/*.out; do
		[ -f "$f" ] && sed "s|^|# $(basename "$f"): |" "$f"
	done
	exit 1
}
. "$(dirname "$0")/../support/gw.sh"

# --- the policy and the template, against the binary's operations
python3 - "$root" >"$work/policy.out" 2>&1 <<'PY' || fail "the policy and the template name the binary's actions"
import json, re, subprocess, sys, yaml
root = sys.argv[1]
src = open(f"{root}/core/store/dynamodb/store_dynamodb.c").read()
ops = set(re.findall(r'TARGET_PREFIX "(\w+)"', src))
# an operation leasegate sends -> the policy's statement and actions
need = {
    "DescribeTable": ("LeasegateLocks", {"DescribeTable"}),
    "GetItem": ("LeasegateLocks", {"GetItem"}),
    "UpdateItem": ("LeasegateLocks", {"UpdateItem"}),
    "Scan": ("LeasegateLocks", {"Scan"}),
    # the header and slots of a name held shared
    "BatchGetItem": ("LeasegateLocks", {"BatchGetItem"}),
    "CreateTable": ("LeasegateCreateTable", {"CreateTable"}),
    "UpdateTimeToLive": ("LeasegateCreateTable", {"UpdateTimeToLive"}),
    # the check on the lock item, then the clients' items
    "TransactWriteItems": ("LeasegateFencedWritesLockCheck", {"ConditionCheckItem"}),
    # --heartbeat replica: its revocations on a table with a sort key, read
    # (Query) and deleted once acted on (DeleteItem; the tests' helper,
    # lt_testing.c, deletes items too)
    "Query": ("LeasegateReplicaHeartbeat", {"Query"}),
    "DeleteItem": ("LeasegateReplicaHeartbeat", {"DeleteItem"}),
}
unmapped = ops - set(need)
assert not unmapped, f"operations sent without a policy action: {unmapped}"
policy = json.load(open(f"{root}/docker/iam-policy.json"))
stmts = {s["Sid"]: s for s in policy["Statement"]}
acts = lambda s: {a.split(":")[1] for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])}
want = {}
for op in ops:
    sid, a = need[op]
    want.setdefault(sid, set()).update(a)
want["LeasegateFencedWritesTables"] = {"PutItem", "UpdateItem", "DeleteItem", "ConditionCheckItem"}
got = {sid: acts(s) for sid, s in stmts.items()}
assert got == want, f"policy {got} != the binary's {want}"
for sid in ("LeasegateFencedWritesLockCheck", "LeasegateFencedWritesTables"):
    assert stmts[sid]["Condition"] == {"ForAnyValue:StringEquals": {
        "dynamodb:EnclosingOperation": ["TransactWriteItems"]}}, sid
locks = "arn:aws:dynamodb:REGION:ACCOUNT:table/locks"
assert all(stmts[s]["Resource"] == locks for s in
           ("LeasegateLocks", "LeasegateCreateTable", "LeasegateFencedWritesLockCheck"))
print(f"# operations sent: {sorted(ops)}; policy: {sorted((k, sorted(v)) for k, v in got.items())}")

class Loader(yaml.SafeLoader):
    pass
def tag(name):
    def build(loader, node):
        if isinstance(node, yaml.ScalarNode):
            v = loader.construct_scalar(node)
            if name == "GetAtt":
                v = v.split(".")
        elif isinstance(node, yaml.SequenceNode):
            v = loader.construct_sequence(node, deep=True)
        else:
            v = loader.construct_mapping(node, deep=True)
        return {"Ref" if name == "Ref" else "Fn::" + name: v}
    return build
for t in ("Ref", "GetAtt", "Sub", "If", "Not", "Equals"):
    Loader.add_constructor("!" + t, tag(t))
cfn = yaml.load(open(f"{root}/docker/cloudformation.yaml"), Loader=Loader)
res = cfn["Resources"]
table = res["LockTable"]["Properties"]
assert res["LockTable"]["Type"] == "AWS::DynamoDB::Table"
assert table["BillingMode"] == "PAY_PER_REQUEST"
assert table["KeySchema"] == [{"AttributeName": "pk", "KeyType": "HASH"}]
assert table["AttributeDefinitions"] == [{"AttributeName": "pk", "AttributeType": "S"}]
assert table["TimeToLiveSpecification"] == {"AttributeName": {"Ref": "TtlAttribute"}, "Enabled": True}
role = res["Role"]
assert role["Type"] == "AWS::IAM::Role"
trust = json.dumps(role["Properties"]["AssumeRolePolicyDocument"])
for t in ("pods.eks.amazonaws.com", "sts:TagSession", "sts:AssumeRoleWithWebIdentity",
          "system:serviceaccount:${Namespace}:${ServiceAccountName}"):
    assert t in trust, f"trust policy without {t}"
cstmts = {}
for s in role["Properties"]["Policies"][0]["PolicyDocument"]["Statement"]:
    if "Fn::If" in s:
        s = s["Fn::If"][1]
    cstmts[s["Sid"]] = s
cgot = {sid: acts(s) for sid, s in cstmts.items()}
pwant = {sid: a for sid, a in got.items() if sid != "LeasegateCreateTable"}
assert cgot == pwant, f"template {cgot} != policy {pwant}"
assert cstmts["LeasegateLocks"]["Resource"] == {"Fn::GetAtt": ["LockTable", "Arn"]}
for sid in ("LeasegateFencedWritesLockCheck", "LeasegateFencedWritesTables"):
    assert cstmts[sid]["Condition"] == stmts[sid]["Condition"], sid
assert cfn["Outputs"]["RoleArn"]["Value"] == {"Fn::GetAtt": ["Role", "Arn"]}
print(f"# template role: {sorted((k, sorted(v)) for k, v in cgot.items())}")
PY
sed -n 's/^# /# /p' "$work/policy.out"
ok "docker/iam-policy.json names exactly the actions of the operations the binary sends"
ok "the CloudFormation template's role has the policy's statements (but CreateTable); its table is on demand, key pk, TTL"
cfn-lint "$root/docker/cloudformation.yaml" >"$work/cfn-lint.out" 2>&1 ||
	fail "cfn-lint docker/cloudformation.yaml"
ok "cfn-lint finds nothing in docker/cloudformation.yaml"

# --- docs/dynamodb.md's commands against moto
export AWS_ACCESS_KEY_ID="$LG_AK" AWS_SECRET_ACCESS_KEY="$LG_SK" AWS_ENDPOINT_URL="$LG_MOTO"
export AWS_DEFAULT_REGION=eu-west-2 AWS_REGION=eu-west-2
awk '/^<!-- tests\/integration\/deploy_aws.sh runs this block -->$/ { on = 1; next }
	on && /^```sh$/ { take = 1; next }
	take && /^```$/ { exit }
	take' "$root/docs/dynamodb.md" >"$work/table.sh"
grep -q 'aws dynamodb create-table' "$work/table.sh" && grep -q 'update-time-to-live' "$work/table.sh" ||
	fail "docs/dynamodb.md has the create-table and update-time-to-live block"
# the page's region, where this run's table lives
sed -i 's/^REGION=.*/REGION=eu-west-2/' "$work/table.sh"
sh -eu "$work/table.sh" >"$work/table.log" 2>&1 || fail "docs/dynamodb.md's create-table block runs against moto"
aws dynamodb describe-time-to-live --table-name locks >"$work/ttl.out" 2>&1 || fail "describe-time-to-live"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))["TimeToLiveDescription"]
assert d["TimeToLiveStatus"] == "ENABLED" and d["AttributeName"] == "expiresAt", d' "$work/ttl.out" ||
	fail "the table's TTL is on, on expiresAt"
ok "docs/dynamodb.md's aws dynamodb create-table, wait, update-time-to-live run against moto: TTL ENABLED on expiresAt"

# the template deployed on moto (its CloudFormation resolves the tags):
# the role's policy is the policy file's, resolved, but CreateTable
aws cloudformation deploy --region eu-west-1 --template-file "$root/docker/cloudformation.yaml" \
	--stack-name leasegate --capabilities CAPABILITY_NAMED_IAM \
	--parameter-overrides OidcIssuer=oidc.eks.eu-west-1.amazonaws.com/id/EXAMPLE FencedTable=orders Heartbeat=replica \
	>"$work/cfn.log" 2>&1 || fail "aws cloudformation deploy of docker/cloudformation.yaml on moto"
python3 - "$root" "$LG_MOTO" "$LG_AK" "$LG_SK" >"$work/stack.out" 2>&1 <<'PY' || fail "the deployed stack's table and role"
import ast, json, sys, boto3
root, ep, ak, sk = sys.argv[1:]
kw = dict(endpoint_url=ep, region_name="eu-west-1", aws_access_key_id=ak, aws_secret_access_key=sk)
cfn = boto3.client("cloudformation", **kw)
res = {r["LogicalResourceId"]: r for r in
       cfn.describe_stack_resources(StackName="leasegate")["StackResources"]}
t = boto3.client("dynamodb", **kw).describe_table(TableName=res["LockTable"]["PhysicalResourceId"])["Table"]
assert t["KeySchema"] == [{"AttributeName": "pk", "KeyType": "HASH"}], t["KeySchema"]
assert t["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
iam = boto3.client("iam", **kw)
role = res["Role"]["PhysicalResourceId"]
doc = iam.get_role_policy(RoleName=role, PolicyName="leasegate")["PolicyDocument"]
if isinstance(doc, str):  # moto hands it back as Python's repr
    doc = ast.literal_eval(doc)
text = open(f"{root}/docker/iam-policy.json").read()
text = text.replace("REGION", "eu-west-1").replace("ACCOUNT", "123456789012")
want = [s for s in json.loads(text)["Statement"] if s["Sid"] != "LeasegateCreateTable"]
assert doc["Statement"] == want, f"deployed {doc['Statement']} != {want}"
trust = iam.get_role(RoleName=role)["Role"]["AssumeRolePolicyDocument"]
trust = json.dumps(trust if not isinstance(trust, str) else json.loads(trust))
for x in ('"pods.eks.amazonaws.com"', '"sts:TagSession"', "oidc-provider/oidc.eks.eu-west-1.amazonaws.com/id/EXAMPLE",
          '"oidc.eks.eu-west-1.amazonaws.com/id/EXAMPLE:sub": "system:serviceaccount:default:leasegate"'):
    assert x in trust, f"trust policy without {x}: {trust}"
PY
ok "the template deploys on moto: table pk/on demand, the role's policy is iam-policy.json's resolved (but CreateTable), trusted by IRSA and Pod Identity"

# an IAM user with the policy's LeasegateLocks statement only
python3 - "$root" "$LG_MOTO" "$LG_AK" "$LG_SK" >"$work/keys.out" 2>&1 <<'PY' || fail "IAM users with the policy"
import json, sys, boto3
root, ep, ak, sk = sys.argv[1:]
iam = boto3.client("iam", endpoint_url=ep, region_name="us-east-1",
                   aws_access_key_id=ak, aws_secret_access_key=sk)
text = open(f"{root}/docker/iam-policy.json").read()
text = text.replace("REGION", "eu-west-2").replace("ACCOUNT", "123456789012")
locks = [s for s in json.loads(text)["Statement"] if s["Sid"] == "LeasegateLocks"][0]
# moto matches a statement's actions, and its Resource against "*" alone
locks["Resource"] = "*"
noscan = dict(locks, Action=[a for a in locks["Action"] if a != "dynamodb:Scan"])
for user, stmt in (("deploy-policy", locks), ("deploy-noscan", noscan)):
    iam.create_user(UserName=user)
    iam.put_user_policy(UserName=user, PolicyName="leasegate", PolicyDocument=json.dumps(
        {"Version": "2012-10-17", "Statement": [stmt]}))
    k = iam.create_access_key(UserName=user)["AccessKey"]
    print(k["AccessKeyId"], k["SecretAccessKey"])
PY
set -- $(sed -n 1p "$work/keys.out")
pol_ak=$1 pol_sk=$2
set -- $(sed -n 2p "$work/keys.out")
noscan_ak=$1 noscan_sk=$2

start_gw() {
	port=$(gw_free_port)
	admin=$(gw_free_port)
	AWS_ACCESS_KEY_ID=$1 AWS_SECRET_ACCESS_KEY=$2 "$LG_BIN" --port "$port" --pg-port 0 \
		--admin-port "$admin" --table locks --region eu-west-2 --endpoint "$LG_MOTO" \
		--ttl-attribute expiresAt >"$work/gw.log" 2>&1 &
	gw=$!
	i=0
	until [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$admin/readyz")" = 200 ]; do
		i=$((i + 1))
		[ $i -gt 200 ] && fail "the gateway opens the page's table with the policy's keys (/readyz)"
		sleep 0.05
	done
}
stop_gw() {
	kill "$gw"
	wait "$gw"
	gw=
}
rc() { redis-cli -p "$port" "$@" 2>&1; }

start_gw "$pol_ak" "$pol_sk"
# one connection: a lease ends with the connection that took it
printf 'LOCK.ACQUIRE deploy-job 30000\nLOCK.STATE deploy-job\nLOCK.LIST TABLE\nLOCK.RELEASE deploy-job\n' |
	redis-cli -p "$port" >"$work/session.out" 2>&1
sed -n 1p "$work/session.out" | grep -qx '[0-9][0-9]*' || fail "LOCK.ACQUIRE with the policy's keys"
sed -n 2,3p "$work/session.out" | tr '\n' ' ' | grep -qx 'held 1 ' || fail "LOCK.STATE with the policy's keys"
sed -n '12,$p' "$work/session.out" | grep -qx deploy-job || fail "LOCK.LIST TABLE (Scan) with the policy's keys"
[ "$(tail -n 1 "$work/session.out")" = 1 ] || fail "LOCK.RELEASE with the policy's keys"
ok "with the policy's LeasegateLocks actions: DescribeTable at start, LOCK.ACQUIRE, LOCK.STATE, LOCK.LIST TABLE, LOCK.RELEASE"
aws dynamodb scan --table-name locks >"$work/scan.out" 2>&1 || fail "aws dynamodb scan"
grep -q '"expiresAt"' "$work/scan.out" || fail "the lock item carries the TTL attribute expiresAt"
ok "the lock item in the page's table carries expiresAt (--ttl-attribute)"
stop_gw

start_gw "$noscan_ak" "$noscan_sk"
r=$(rc LOCK.LIST TABLE)
case $r in *AccessDenied* | *"not authorized"* | *ERR*) ;; *) fail "LOCK.LIST TABLE without dynamodb:Scan is refused (got: $r)" ;; esac
t=$(rc LOCK.ACQUIRE deploy-job 30000)
case $t in '' | *[!0-9]*) fail "LOCK.ACQUIRE without dynamodb:Scan still works (got: $t)" ;; esac
ok "without dynamodb:Scan, LOCK.LIST TABLE is refused ($(echo "$r" | cut -c1-60)...) and locks still work"
stop_gw
