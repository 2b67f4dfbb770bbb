// check.mjs: what can be checked of docker/'s Kubernetes manifests without
// a cluster (run by tests/integration/deploy_manifests.sh, which passes
// what it learnt from the binary and docker/ as JSON in LG_DEPLOY_CTX):
//   - every object validates against the Kubernetes API's schemas
//     (kubernetes-models, offline);
//   - the Deployment's flags, LEASEGATE_* variables (env and ConfigMap),
//     ports and probe paths exist in the binary (`leasegate --options`,
//     its admin port answering the paths), its ports agree with what the
//     options make them, and with the Dockerfile's EXPOSE and USER;
//   - the image is the one docker/build-image.sh names, at the binary's
//     version; restricted Pod Security Standard fields, requests and
//     limits, a grace period longer than preStop + the shutdown bound;
//   - the Service, PodDisruptionBudget and ServiceAccount point at the pods;
//     the clients' Service exposes no admin port (probes and /metrics are
//     scraped per pod, through the prometheus.io annotations);
//   - applicable as it is to an empty cluster: every Secret and ConfigMap
//     the pods use is made here or marked optional; one namespace for all
//     objects, made by a Namespace object here, and named by the text's
//     commands (--namespace, -n, NAME.NS.svc); on the embedded store (no
//     LEASEGATE_TABLE) one replica; docs/kubernetes.md's `kubectl create secret`
//     lines (ctx.readmeSecrets) make the Secrets an overlay uses, in its
//     namespace.
// Usage: node check.mjs NAME=FILE... (each FILE a YAML stream; NAME=base
// is checked for the base's values, NAME=example for the overlay's);
// node check.mjs --selftest BASEFILE: each check fails on a broken copy.
// LG_N0: the number of the last test printed before (numbering goes on).
// Prints `ok <n> <what>` / `not ok <n> <what>`.
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";
import { Deployment } from "kubernetes-models/apps/v1/Deployment";
import { Service } from "kubernetes-models/v1/Service";
import { ServiceAccount } from "kubernetes-models/v1/ServiceAccount";
import { ConfigMap } from "kubernetes-models/v1/ConfigMap";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1/PodDisruptionBudget";
import { Namespace } from "kubernetes-models/v1/Namespace";

const models = {
  "apps/v1/Deployment": Deployment,
  "v1/Service": Service,
  "v1/ServiceAccount": ServiceAccount,
  "v1/ConfigMap": ConfigMap,
  "policy/v1/PodDisruptionBudget": PodDisruptionBudget,
  "v1/Namespace": Namespace,
};
const ctx = JSON.parse(process.env.LG_DEPLOY_CTX);
// options: name -> {type, env, def}; env -> name
// A container's option value: default < ConfigMap (envFrom) < env < args.
function optionValue(objs, c, name) {
  const cms = new Map(find(objs, "ConfigMap").map((x) => [x.metadata.name, x]));
  let v = ctx.options[name].def;
  for (const ef of c.envFrom ?? []) {
    const x = cms.get(ef.configMapRef?.name)?.data?.[ctx.options[name].env];
    if (x !== undefined) v = x;
  }
  for (const e of c.env ?? []) if (e.name === ctx.options[name].env && e.value !== undefined) v = e.value;
  const args = c.args ?? [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === `--${name}`) v = args[i + 1];
    if (args[i].startsWith(`--${name}=`)) v = args[i].slice(name.length + 3);
  }
  return String(v);
}

// A duration option's text ("15s", "500ms", "2m", "0") in seconds.
function seconds(text) {
  const m = /^(\d+)(ms|s|m|h)?$/.exec(text ?? "0");
  if (!m) return Infinity;
  return Number(m[1]) * { ms: 0.001, s: 1, m: 60, h: 3600 }[m[2] ?? "ms"];
}

const byEnv = new Map(Object.entries(ctx.options).map(([n, o]) => [o.env, n]));
// the AWS variables leasegate reads (README "Point it at DynamoDB")
const awsVars = new Set(["AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL",
  "AWS_ENDPOINT_URL_DYNAMODB", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
  "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN",
  "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"]);

export function load(text) {
  const objs = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length) throw new Error(`YAML: ${doc.errors[0].message}`);
    const o = doc.toJS();
    if (o !== null) objs.push(o);
  }
  return objs;
}

const find = (objs, kind) => objs.filter((o) => o.kind === kind);
const one = (objs, kind, problems) => {
  const l = find(objs, kind);
  if (l.length !== 1) problems.push(`${l.length} ${kind} objects, not 1`);
  return l[0];
};
const matches = (sel, labels) =>
  sel && Object.keys(sel).length > 0 &&
  Object.entries(sel).every(([k, v]) => labels && labels[k] === v);

// Each check returns the list of its problems (empty: passed).
export const checks = {
  "every object validates against the Kubernetes schemas"(objs) {
    const p = [];
    for (const o of objs) {
      const M = models[`${o.apiVersion}/${o.kind}`];
      if (!M) { p.push(`no schema for ${o.apiVersion} ${o.kind}`); continue; }
      try { new M(o).validate(); } catch (e) { p.push(`${o.kind} ${o.metadata?.name}: ${e.message}`); }
    }
    return p;
  },

  "flags, LEASEGATE_* variables and ConfigMap keys are options of the binary"(objs, raw) {
    const p = [];
    const d = one(objs, "Deployment", p);
    const cms = new Map(find(objs, "ConfigMap").map((c) => [c.metadata.name, c]));
    for (const c of d?.spec.template.spec.containers ?? []) {
      for (const a of [...(c.command ?? []), ...(c.args ?? [])])
        if (a.startsWith("--") && !ctx.options[a.slice(2).split("=")[0]])
          p.push(`flag ${a} is not an option`);
      for (const e of c.env ?? [])
        if (!byEnv.has(e.name) && !awsVars.has(e.name)) p.push(`env ${e.name} is not read`);
      for (const ef of c.envFrom ?? []) {
        const cm = cms.get(ef.configMapRef?.name);
        if (!cm) { p.push(`envFrom names ConfigMap ${ef.configMapRef?.name}, not in the files`); continue; }
        for (const k of Object.keys(cm.data ?? {}))
          if (!byEnv.has(k) && !awsVars.has(k)) p.push(`ConfigMap key ${k} is not read`);
      }
    }
    // flags in comments too (the TLS example): "--name" in quotes
    for (const m of raw.matchAll(/"--([a-z][a-z0-9-]*)"/g))
      if (!ctx.options[m[1]]) p.push(`flag --${m[1]} (in the file's text) is not an option`);
    return p;
  },

  "container ports are the ports the options make, probes and scrapes the admin port's paths"(objs) {
    const p = [];
    const d = one(objs, "Deployment", p);
    if (!d) return p;
    const c = d.spec.template.spec.containers[0];
    const value = (name) => optionValue(objs, c, name);
    const named = Object.fromEntries((c.ports ?? []).map((x) => [x.name, x.containerPort]));
    for (const [pn, opt] of [["redis", "port"], ["postgresql", "pg-port"], ["admin", "admin-port"]])
      if (String(named[pn]) !== value(opt))
        p.push(`containerPort ${pn} is ${named[pn]}, --${opt} makes it ${value(opt)}`);
    for (const [what, pr] of [["readiness", c.readinessProbe], ["liveness", c.livenessProbe]]) {
      const g = pr?.httpGet;
      if (!g) { p.push(`no ${what} httpGet probe`); continue; }
      if (g.port !== "admin" && String(g.port) !== value("admin-port")) p.push(`${what} probe port ${g.port} is not the admin port`);
      if (!ctx.served.includes(g.path)) p.push(`${what} probe path ${g.path} is not served (served: ${ctx.served})`);
    }
    const ann = d.spec.template.metadata.annotations ?? {};
    if (ann["prometheus.io/port"] !== value("admin-port")) p.push(`prometheus.io/port ${ann["prometheus.io/port"]} is not the admin port`);
    if (!ctx.served.includes(ann["prometheus.io/path"])) p.push(`prometheus.io/path ${ann["prometheus.io/path"]} is not served`);
    if (!(c.readinessProbe?.httpGet?.path === "/readyz" && c.livenessProbe?.httpGet?.path === "/healthz"))
      p.push("readiness is not /readyz or liveness not /healthz");
    return p;
  },

  "the image and ports agree with docker/ (build-image.sh's name, the version, EXPOSE, USER)"(objs, raw, name) {
    const p = [];
    const d = one(objs, "Deployment", p);
    if (!d) return p;
    const c = d.spec.template.spec.containers[0];
    const m = /^(?:(.*)\/)?([^/:]+):([^/:]+)$/.exec(c.image ?? "");
    if (!m) p.push(`image ${c.image} has no repository name and tag`);
    else {
      if (m[2] !== ctx.imageName) p.push(`image ${c.image} is not ${ctx.imageName}`);
      if (m[3] !== ctx.version) p.push(`image tag ${m[3]} is not the version ${ctx.version}`);
      if (!m[1] || !m[1].includes(".")) p.push(`image ${c.image} names no registry`);
    }
    if (name === "base") {
      const ports = (c.ports ?? []).map((x) => x.containerPort).sort();
      if (JSON.stringify(ports) !== JSON.stringify([...ctx.expose].sort()))
        p.push(`container ports ${ports} are not the Dockerfile's EXPOSE ${ctx.expose}`);
    }
    const uid = d.spec.template.spec.securityContext?.runAsUser;
    if (String(uid) !== ctx.user) p.push(`runAsUser ${uid} is not the Dockerfile's USER ${ctx.user}`);
    return p;
  },

  "restricted Pod Security Standard, requests and limits, grace period, preStop, spread, rollout"(objs, raw, name) {
    const p = [];
    const d = one(objs, "Deployment", p);
    if (!d) return p;
    const s = d.spec.template.spec;
    if (s.securityContext?.runAsNonRoot !== true) p.push("pod runAsNonRoot is not true");
    if (s.securityContext?.seccompProfile?.type !== "RuntimeDefault") p.push("no RuntimeDefault seccompProfile");
    if (s.hostNetwork || s.hostPID || s.hostIPC) p.push("host namespaces");
    for (const c of s.containers) {
      const sc = c.securityContext ?? {};
      if (sc.allowPrivilegeEscalation !== false) p.push(`${c.name}: allowPrivilegeEscalation is not false`);
      if (sc.readOnlyRootFilesystem !== true) p.push(`${c.name}: readOnlyRootFilesystem is not true`);
      if (!(sc.capabilities?.drop ?? []).includes("ALL")) p.push(`${c.name}: capabilities not dropped`);
      if ((sc.capabilities?.add ?? []).length) p.push(`${c.name}: capabilities added`);
      if (sc.privileged) p.push(`${c.name}: privileged`);
      for (const k of ["requests", "limits"])
        for (const r of ["cpu", "memory"])
          if (!c.resources?.[k]?.[r]) p.push(`${c.name}: no ${r} in ${k}`);
      if ((c.ports ?? []).some((x) => x.hostPort)) p.push(`${c.name}: hostPort`);
      const pre = c.lifecycle?.preStop?.sleep?.seconds;
      if (!(pre > 0)) p.push(`${c.name}: no preStop sleep`);
      const grace = s.terminationGracePeriodSeconds;
      const drain = seconds(optionValue(objs, c, "drain-grace"));
      if (!(grace > (pre ?? 0) + drain + ctx.shutdownBound))
        p.push(`terminationGracePeriodSeconds ${grace} is not longer than preStop ${pre} + drain grace ${drain} + shutdown bound ${ctx.shutdownBound}`);
      const stop = seconds(optionValue(objs, c, "stop-timeout"));
      if (stop !== 0 && stop !== grace - (pre ?? 0))
        p.push(`stop-timeout ${stop}s is not terminationGracePeriodSeconds ${grace} minus preStop ${pre}: the gateway checks its drain against the wrong SIGKILL`);
    }
    const tsc = s.topologySpreadConstraints ?? [];
    for (const key of ["topology.kubernetes.io/zone", "kubernetes.io/hostname"])
      if (!tsc.some((t) => t.topologyKey === key && matches(t.labelSelector?.matchLabels, d.spec.template.metadata.labels)))
        p.push(`no topology spread over ${key} selecting the pods`);
    if (d.spec.strategy?.rollingUpdate?.maxUnavailable !== 0) p.push("a rollout may take a ready replica away first");
    return p;
  },

  "the Service, PodDisruptionBudget and ServiceAccount point at the pods"(objs) {
    const p = [];
    const d = one(objs, "Deployment", p);
    const svc = one(objs, "Service", p);
    const pdb = one(objs, "PodDisruptionBudget", p);
    const sa = one(objs, "ServiceAccount", p);
    if (!d || !svc || !pdb || !sa) return p;
    const labels = d.spec.template.metadata.labels;
    if (!matches(d.spec.selector.matchLabels, labels)) p.push("the Deployment's selector misses its pods");
    if (!matches(svc.spec.selector, labels)) p.push("the Service's selector misses the pods");
    if (!matches(pdb.spec.selector?.matchLabels, labels)) p.push("the PodDisruptionBudget's selector misses the pods");
    if (svc.spec.sessionAffinity && svc.spec.sessionAffinity !== "None") p.push("session affinity set");
    const cports = d.spec.template.spec.containers[0].ports ?? [];
    for (const sp of svc.spec.ports) {
      const target = cports.find((x) => x.name === sp.targetPort || x.containerPort === sp.targetPort);
      if (!target) p.push(`Service port ${sp.name} targets ${sp.targetPort}, no container port`);
    }
    for (const need of ["redis", "postgresql"])
      if (!svc.spec.ports.some((x) => x.targetPort === need)) p.push(`the Service has no ${need} port`);
    // the admin port is not for clients: a Service that reaches it lets
    // them hold its connections (--admin-maxclients) and read /metrics
    const admin = cports.find((x) => x.name === "admin");
    for (const sp of svc.spec.ports)
      if (sp.targetPort === "admin" || (admin && sp.targetPort === admin.containerPort) ||
          (admin && sp.targetPort === undefined && sp.port === admin.containerPort))
        p.push(`the clients' Service exposes the admin port (${sp.name ?? sp.port})`);
    if (d.spec.template.spec.serviceAccountName !== sa.metadata.name) p.push("serviceAccountName is not the ServiceAccount");
    if (!/^arn:aws:iam::\d{12}:role\/.+/.test(sa.metadata.annotations?.["eks.amazonaws.com/role-arn"] ?? ""))
      p.push("the ServiceAccount has no IRSA role-arn annotation");
    if (!(pdb.spec.maxUnavailable >= 1 || pdb.spec.minAvailable !== undefined)) p.push("the PodDisruptionBudget allows nothing");
    return p;
  },

  // (a Secret docs/kubernetes.md's commands make in the objects' namespace counts
  // as made: the TLS component's, which it needs)
  "every Secret and ConfigMap the pods use is made here or marked optional"(objs) {
    const p = [];
    const ns = objs.find((o) => !clusterScoped.has(o.kind))?.metadata.namespace;
    const have = new Set(objs.map((o) => `${o.kind}/${o.metadata.name}`));
    for (const s of ctx.readmeSecrets ?? []) if (ns !== undefined && s.ns === ns) have.add(`Secret/${s.name}`);
    for (const r of podRefs(objs))
      if (!r.optional && !have.has(`${r.kind}/${r.name}`))
        p.push(`${r.where} needs ${r.kind} ${r.name}, neither made here (or by docs/kubernetes.md in ${ns ?? "its namespace"}) nor optional`);
    return p;
  },

  "one namespace, made here when set, and the one the text's commands name"(objs, raw) {
    const p = [];
    const spaced = objs.filter((o) => !clusterScoped.has(o.kind));
    const nss = new Set(spaced.map((o) => o.metadata.namespace));
    if (nss.size > 1) p.push(`objects in several namespaces: ${[...nss].join(", ")}`);
    const ns = [...nss][0];
    if (nss.size === 1 && ns !== undefined &&
        !objs.some((o) => o.kind === "Namespace" && o.metadata.name === ns))
      p.push(`the objects are in namespace ${ns}, and no Namespace ${ns} is made here`);
    // a namespace the comments' commands name: this one, or a placeholder
    for (const m of raw.matchAll(/(?:--namespace[ =]|\s-n )([A-Za-z0-9-]+)|\.([a-z0-9-]+)\.svc\b/g)) {
      const named = m[1] ?? m[2];
      if (named !== ns && named !== named.toUpperCase())
        p.push(`the text names namespace ${named}, the objects are in ${ns ?? "none (the current one)"}`);
    }
    return p;
  },

  "on the embedded store (no LEASEGATE_TABLE), one replica: each would have its own locks"(objs) {
    const p = [];
    const d = one(objs, "Deployment", p);
    if (!d) return p;
    const c = d.spec.template.spec.containers[0];
    const cms = new Map(find(objs, "ConfigMap").map((x) => [x.metadata.name, x]));
    const table = [...(c.envFrom ?? []).map((ef) => cms.get(ef.configMapRef?.name)?.data?.LEASEGATE_TABLE),
      ...(c.env ?? []).filter((e) => e.name === "LEASEGATE_TABLE").map((e) => e.value ?? "(from a reference)"),
      ...(c.args ?? []).filter((a, i, all) => a.startsWith("--table=") || all[i - 1] === "--table")]
      .filter((v) => v !== undefined && v !== "");
    if (table.length === 0 && (d.spec.replicas ?? 1) !== 1)
      p.push(`no table (the embedded store) and ${d.spec.replicas} replicas`);
    return p;
  },
};

// Kinds without a namespace.
const clusterScoped = new Set(["Namespace", "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition"]);

// The Secrets and ConfigMaps the pods of the Deployment read:
// {kind, name, optional, where}.
function podRefs(objs) {
  const refs = [];
  for (const d of find(objs, "Deployment")) {
    const s = d.spec.template.spec;
    for (const c of [...(s.initContainers ?? []), ...s.containers]) {
      for (const e of c.env ?? []) {
        const sk = e.valueFrom?.secretKeyRef, ck = e.valueFrom?.configMapKeyRef;
        if (sk) refs.push({ kind: "Secret", name: sk.name, optional: sk.optional === true, where: `env ${e.name}` });
        if (ck) refs.push({ kind: "ConfigMap", name: ck.name, optional: ck.optional === true, where: `env ${e.name}` });
      }
      for (const ef of c.envFrom ?? []) {
        if (ef.secretRef) refs.push({ kind: "Secret", name: ef.secretRef.name, optional: ef.secretRef.optional === true, where: "envFrom" });
        if (ef.configMapRef) refs.push({ kind: "ConfigMap", name: ef.configMapRef.name, optional: ef.configMapRef.optional === true, where: "envFrom" });
      }
    }
    for (const v of s.volumes ?? []) {
      if (v.secret) refs.push({ kind: "Secret", name: v.secret.secretName, optional: v.secret.optional === true, where: `volume ${v.name}` });
      if (v.configMap) refs.push({ kind: "ConfigMap", name: v.configMap.name, optional: v.configMap.optional === true, where: `volume ${v.name}` });
      for (const src of v.projected?.sources ?? []) {
        if (src.secret) refs.push({ kind: "Secret", name: src.secret.name, optional: src.secret.optional === true, where: `volume ${v.name}` });
        if (src.configMap) refs.push({ kind: "ConfigMap", name: src.configMap.name, optional: src.configMap.optional === true, where: `volume ${v.name}` });
      }
    }
  }
  return refs;
}

// An overlay applied by following docs/kubernetes.md: its `kubectl create secret`
// lines make every Secret the pods read (optional ones too: docs/kubernetes.md
// says to make them), in the overlay's namespace.
const readmeSecrets = (objs) => {
  const p = [];
  const ns = objs.find((o) => !clusterScoped.has(o.kind))?.metadata.namespace;
  const made = ctx.readmeSecrets ?? [];
  for (const r of podRefs(objs).filter((x) => x.kind === "Secret")) {
    const m = made.filter((x) => x.name === r.name);
    if (m.length === 0) p.push(`docs/kubernetes.md makes no Secret ${r.name}`);
    else if (!m.some((x) => x.ns === ns)) p.push(`docs/kubernetes.md makes Secret ${r.name} in ${m.map((x) => x.ns ?? "the current namespace")}, not ${ns}`);
  }
  return p;
};

// The overlay's values reached the objects.
const overlayValues = (objs) => {
  const p = [];
  const d = find(objs, "Deployment")[0];
  const cm = find(objs, "ConfigMap")[0];
  const svc = find(objs, "Service")[0];
  if (d?.spec.replicas !== 5) p.push(`replicas ${d?.spec.replicas}, not the overlay's 5`);
  if (cm?.data?.LEASEGATE_TABLE !== "prod-locks") p.push("table not the overlay's");
  if (cm?.data?.LEASEGATE_REGION !== "us-east-2") p.push("region not the overlay's");
  if (cm?.data?.LEASEGATE_LOG_FORMAT !== "json") p.push("the base's ConfigMap keys were not kept (merge)");
  if (!svc?.spec.ports.some((x) => x.port === 6390)) p.push("the Service's Redis port is not the overlay's 6390");
  if (d?.spec.template.spec.containers[0].resources.limits.memory !== "512Mi") p.push("resources not the overlay's");
  if (!objs.every((o) => clusterScoped.has(o.kind) || o.metadata.namespace === "locking")) p.push("namespace not set on every object");
  if (!objs.some((o) => o.kind === "Namespace" && o.metadata.name === "locking")) p.push("no Namespace locking");
  return p;
};

// The TLS component's objects reached the Deployment and the Service.
const tlsValues = (objs) => {
  const p = [];
  const d = find(objs, "Deployment")[0];
  const svc = find(objs, "Service")[0];
  const c = d?.spec.template.spec.containers[0];
  if (!(c?.ports ?? []).some((x) => x.name === "redis-tls" && x.containerPort === 6380)) p.push("no container port redis-tls 6380");
  if (!(svc?.spec.ports ?? []).some((x) => x.targetPort === "redis-tls")) p.push("the Service has no redis-tls port");
  if (!(c?.args ?? []).includes("--tls-port")) p.push("no --tls-port");
  if (!podRefs(objs).some((r) => r.kind === "Secret" && r.name === "leasegate-tls")) p.push("no Secret leasegate-tls mounted");
  return p;
};

// objects in kind/name order, keys sorted (kustomize reorders both)
const sortKeys = (v) => Array.isArray(v) ? v.map(sortKeys)
  : v && typeof v === "object" ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys(v[k])])) : v;
const canon = (objs) => JSON.stringify(sortKeys(
  [...objs].sort((a, b) => `${a.kind}/${a.metadata.name}`.localeCompare(`${b.kind}/${b.metadata.name}`))));

function run(sets, n) {
  let failed = 0;
  const parsed = {};
  for (const [name, text] of sets) {
    let objs;
    try { objs = load(text); } catch (e) {
      console.log(`not ok ${++n} ${name}: parses: ${e.message}`); failed++; continue;
    }
    console.log(`ok ${++n} ${name}: parses (${objs.map((o) => o.kind).join(", ")})`);
    parsed[name] = objs;
    const all = Object.entries(checks);
    if (name === "example") all.push(["the overlay's values (replicas, table, region, port, resources, namespace)", overlayValues]);
    if (name !== "base" && name !== "kustomize")
      all.push(["docs/kubernetes.md's kubectl create secret lines make its Secrets in its namespace", readmeSecrets]);
    if (name === "tls") all.push(["the TLS component: port 6380, the Secret leasegate-tls", tlsValues]);
    for (const [what, f] of all) {
      const p = f(objs, text, name);
      if (p.length) { failed++; console.log(`not ok ${++n} ${name}: ${what}`); for (const x of p) console.log(`#   ${x}`); }
      else console.log(`ok ${++n} ${name}: ${what}`);
    }
  }
  if (parsed.base && parsed.kustomize) {
    if (canon(parsed.base) === canon(parsed.kustomize)) console.log(`ok ${++n} the Kustomize base renders the plain YAML's objects`);
    else { failed++; console.log(`not ok ${++n} the Kustomize base renders other objects than the plain YAML`); }
  }
  return failed;
}

// Each check fails on a copy of the base broken the way it looks for.
function selftest(text, n) {
  const breakers = [
    ["every object validates", (o) => { o.Deployment.spec.replicas = "3"; }],
    ["every object validates", (o) => { o.Service.spec.ports[0].port = "redis"; }],
    ["flags, LEASEGATE_", (o) => { o.Deployment.spec.template.spec.containers[0].args = ["--no-such-flag", "1"]; }],
    ["flags, LEASEGATE_", (o) => { o.ConfigMap.data.LEASEGATE_TABEL = "x"; }],
    ["flags, LEASEGATE_", (o) => { o.Deployment.spec.template.spec.containers[0].env.push({ name: "LEASEGATE_NOPE", value: "1" }); }],
    ["container ports", (o) => { o.ConfigMap.data.LEASEGATE_PORT = "7000"; }],
    ["container ports", (o) => { o.Deployment.spec.template.spec.containers[0].readinessProbe.httpGet.path = "/ready"; }],
    ["container ports", (o) => { o.Deployment.spec.template.spec.containers[0].args = ["--admin-port", "9000"]; }],
    ["the image and ports", (o) => { o.Deployment.spec.template.spec.containers[0].image = "registry.example.com/leasegate:latest"; }],
    ["the image and ports", (o) => { o.Deployment.spec.template.spec.containers[0].image = "leasegate:0.1.0"; }],
    ["the image and ports", (o) => { o.Deployment.spec.template.spec.containers[0].ports.push({ name: "redis-tls", containerPort: 6380 }); }],
    ["restricted", (o) => { delete o.Deployment.spec.template.spec.containers[0].resources.limits; }],
    ["restricted", (o) => { o.Deployment.spec.template.spec.containers[0].securityContext.capabilities.drop = []; }],
    ["restricted", (o) => { o.Deployment.spec.template.spec.terminationGracePeriodSeconds = 8; }],
    ["restricted", (o) => { o.ConfigMap.data.LEASEGATE_DRAIN_GRACE = "25s"; }],
    ["restricted", (o) => { o.ConfigMap.data.LEASEGATE_STOP_TIMEOUT = "30s"; }],
    ["restricted", (o) => { o.Deployment.spec.template.spec.topologySpreadConstraints.pop(); }],
    ["the Service, PodDisruptionBudget", (o) => { o.PodDisruptionBudget.spec.selector.matchLabels = { app: "other" }; }],
    ["the Service, PodDisruptionBudget", (o) => { delete o.ServiceAccount.metadata.annotations; }],
    ["the Service, PodDisruptionBudget", (o) => { o.Service.spec.ports[0].targetPort = "resp"; }],
    ["the Service, PodDisruptionBudget", (o) => { o.Service.spec.ports.push({ port: 9464, targetPort: "admin", name: "admin" }); }],
    ["the Service, PodDisruptionBudget", (o) => { o.Service.spec.ports.push({ port: 8080, targetPort: 9464, name: "web" }); }],
    ["the Service, PodDisruptionBudget", (o) => { o.Service.spec.ports.push({ port: 9464, name: "m" }); }],
    ["every Secret and ConfigMap", (o) => { delete o.Deployment.spec.template.spec.containers[0].env[0].valueFrom.secretKeyRef.optional; }],
    ["every Secret and ConfigMap", (o) => { o.Deployment.spec.template.spec.volumes = [{ name: "tls", secret: { secretName: "leasegate-tls" } }]; }],
    ["every Secret and ConfigMap", (o) => { o.Deployment.spec.template.spec.containers[0].envFrom.push({ configMapRef: { name: "extra" } }); }],
    ["one namespace", (o) => { o.ConfigMap.metadata.namespace = "locking"; }],
    ["one namespace", (o, all) => { for (const x of all) x.metadata.namespace = "locking"; }],
    ["one namespace", () => "    #   --namespace default --service-account leasegate"],
    ["one namespace", () => "(names: leasegate.default.svc.cluster.local)"],
    ["on the embedded store", (o) => { o.Deployment.spec.replicas = 3; }],
  ];
  let failed = 0;
  for (const [prefix, brk] of breakers) {
    const objs = load(text);
    const byKind = Object.fromEntries(objs.map((o) => [o.kind, o]));
    const r = brk(byKind, objs);
    const [what, f] = Object.entries(checks).find(([w]) => w.startsWith(prefix));
    const p = f(objs, typeof r === "string" ? r : text, "base");
    if (p.length) console.log(`ok ${++n} selftest: "${what.slice(0, 40)}..." fails on ${brk.toString().slice(11, 90)}: ${p[0]}`);
    else { failed++; console.log(`not ok ${++n} selftest: "${what}" passes a broken copy: ${brk}`); }
  }
  // and all pass on the file as it is
  const objs = load(text);
  const bad = Object.entries(checks).filter(([, f]) => f(objs, text, "base").length);
  if (bad.length) { failed++; console.log(`not ok ${++n} selftest: the unbroken base fails ${bad.map(([w]) => w)}`); }
  else console.log(`ok ${++n} selftest: the unbroken base passes every check`);
  return failed;
}

const args = process.argv.slice(2);
const n0 = Number(process.env.LG_N0 ?? 0); // the number of the last test printed before
let failed;
// --env FILE: the literal environment of the Deployment's container
// (its ConfigMaps' data, then env values; references to Secrets left out),
// one NAME=VALUE a line, for a run of the binary as the pod would be.
if (args[0] === "--env") {
  const objs = load(readFileSync(args[1], "utf8"));
  const c = find(objs, "Deployment")[0].spec.template.spec.containers[0];
  const cms = new Map(find(objs, "ConfigMap").map((x) => [x.metadata.name, x]));
  const env = {};
  for (const ef of c.envFrom ?? []) Object.assign(env, cms.get(ef.configMapRef?.name)?.data ?? {});
  for (const e of c.env ?? []) if (e.value !== undefined) env[e.name] = e.value;
  for (const [k, v] of Object.entries(env)) console.log(`${k}=${v}`);
  process.exit(0);
}
if (args[0] === "--selftest") failed = selftest(readFileSync(args[1], "utf8"), n0);
else failed = run(args.map((a) => { const i = a.indexOf("="); return [a.slice(0, i), readFileSync(a.slice(i + 1), "utf8")]; }), n0);
process.exit(failed ? 1 : 0);
