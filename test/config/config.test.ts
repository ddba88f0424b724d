import { availableParallelism } from "node:os";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/infra/config.js";

describe("configuration", () => {
  it("defaults to the embedded mode on 127.0.0.1:4000 with ./data", () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ PORT: 4000, HOST: "127.0.0.1", DATA_DIR: "./data", mode: "embedded", BIND_TIMEOUT_S: 60 });
    expect([...c.roles].sort()).toEqual(["api", "binder", "projector"]);
  });

  it("switches to production when both EVENTSTORE_URL and REDIS_URL are set", () => {
    const c = loadConfig({ EVENTSTORE_URL: "esdb://localhost:2113?tls=false", REDIS_URL: "redis://localhost:6379" });
    expect(c).toMatchObject({ mode: "production", eventLog: "esdb", readModels: "redis" });
  });

  it("gives a clean stop 120 s by default (SHUTDOWN_TIMEOUT_S), and refuses a timeout that is not a whole number of seconds from 1 to 3600", () => {
    expect(loadConfig({}).SHUTDOWN_TIMEOUT_S).toBe(120);
    expect(loadConfig({ SHUTDOWN_TIMEOUT_S: "300" }).SHUTDOWN_TIMEOUT_S).toBe(300);
    for (const bad of ["0", "-5", "1.5", "soon", "3601"]) expect(() => loadConfig({ SHUTDOWN_TIMEOUT_S: bad })).toThrow(new RegExp(`SHUTDOWN_TIMEOUT_S="${bad}"`));
  });

  it("names the bad variable and the value it got", () => {
    expect(() => loadConfig({ PORT: "eighty" })).toThrow(ConfigError);
    expect(() => loadConfig({ PORT: "eighty" })).toThrow(/PORT="eighty"/);
    expect(() => loadConfig({ LOG_LEVEL: "loud" })).toThrow(/LOG_LEVEL="loud"/);
    expect(() => loadConfig({ REDIS_URL: "localhost:6379", EVENTSTORE_URL: "esdb://x" })).toThrow(/REDIS_URL/);
  });

  it("reads QUOTA_DEFAULTS as limits per resource class, and names what is wrong with it", () => {
    expect(loadConfig({}).QUOTA_DEFAULTS).toEqual({});
    expect(loadConfig({ QUOTA_DEFAULTS: '{"GPU":8,"FPGA":2}' }).QUOTA_DEFAULTS).toEqual({ GPU: 8, FPGA: 2 });
    for (const bad of ["{GPU:8}", '{"GPU":-1}', '{"gpu":1}', "[1]", '{"GPU":1.5}']) {
      expect(() => loadConfig({ QUOTA_DEFAULTS: bad })).toThrow(/QUOTA_DEFAULTS=.*JSON object of resource classes/);
    }
  });

  it("picks each store by its own variable", () => {
    expect(loadConfig({ REDIS_URL: "redis://localhost:6379" })).toMatchObject({ eventLog: "lmdb", readModels: "redis" });
    expect(loadConfig({ EVENTSTORE_URL: "esdb://localhost:2113" })).toMatchObject({ eventLog: "esdb", readModels: "memory" });
    expect(loadConfig({})).toMatchObject({ eventLog: "lmdb", readModels: "memory" });
  });

  it("takes REDIS_CLUSTER=true with one or more nodes in REDIS_URL, none with a database; several nodes only for a cluster", () => {
    const nodes = "redis://10.0.0.1:7000,redis://10.0.0.2:7000";
    expect(loadConfig({ REDIS_URL: nodes, REDIS_CLUSTER: "true" })).toMatchObject({ readModels: "redis", REDIS_CLUSTER: "true" });
    expect(loadConfig({ REDIS_URL: "redis://10.0.0.1:7000", REDIS_CLUSTER: "true" }).REDIS_CLUSTER).toBe("true");
    expect(loadConfig({ REDIS_URL: "redis://localhost:6379" }).REDIS_CLUSTER).toBe("false");
    expect(() => loadConfig({ REDIS_URL: nodes })).toThrow(/REDIS_URL=.*names several nodes: set REDIS_CLUSTER=true/);
    expect(() => loadConfig({ REDIS_URL: "redis://10.0.0.1:7000/4", REDIS_CLUSTER: "true" })).toThrow(/only database 0/);
    expect(() => loadConfig({ REDIS_CLUSTER: "true" })).toThrow(/REDIS_CLUSTER=true: .*needs REDIS_URL/);
    expect(() => loadConfig({ REDIS_URL: "redis://a:1,b:2", REDIS_CLUSTER: "true" })).toThrow(/REDIS_URL=/);
    expect(() => loadConfig({ REDIS_URL: "redis://a:1", REDIS_CLUSTER: "yes" })).toThrow(/REDIS_CLUSTER="yes"/);
  });

  it("takes EVENTSTORE_NAMESPACE with EVENTSTORE_URL only, and a name that cannot be confused with another stream", () => {
    const url = "esdb://localhost:2113?tls=false";
    expect(loadConfig({ EVENTSTORE_URL: url, EVENTSTORE_NAMESPACE: "cyborg-a" }).EVENTSTORE_NAMESPACE).toBe("cyborg-a");
    expect(loadConfig({ EVENTSTORE_URL: url }).EVENTSTORE_NAMESPACE).toBeUndefined();
    for (const bad of ["-a", "a/b", "$a", "@a", "a b"]) expect(() => loadConfig({ EVENTSTORE_URL: url, EVENTSTORE_NAMESPACE: bad })).toThrow(/EVENTSTORE_NAMESPACE=/);
    expect(() => loadConfig({ EVENTSTORE_NAMESPACE: "cyborg-a" })).toThrow(/EVENTSTORE_NAMESPACE="cyborg-a": .*needs EVENTSTORE_URL/);
  });

  it("takes REST_AUTH=noauth in the embedded mode only", () => {
    expect(loadConfig({}).REST_AUTH).toBe("keystone");
    expect(loadConfig({ REST_AUTH: "noauth" }).REST_AUTH).toBe("noauth");
    expect(() => loadConfig({ REST_AUTH: "noauth", REDIS_URL: "redis://localhost:6379" })).toThrow(/REST_AUTH="noauth": refused in the production mode/);
    expect(() => loadConfig({ REST_AUTH: "none" })).toThrow(/REST_AUTH="none"/);
  });

  it("takes REST_AUTH=noauth on a loopback address only", () => {
    for (const HOST of ["127.0.0.1", "127.0.0.2", "::1", "localhost"]) expect(loadConfig({ REST_AUTH: "noauth", HOST }).HOST).toBe(HOST);
    for (const HOST of ["0.0.0.0", "::", "10.0.0.5", "compute1"]) {
      expect(() => loadConfig({ REST_AUTH: "noauth", HOST })).toThrow(/REST_AUTH="noauth": refused with HOST=.*loopback only/);
    }
    expect(loadConfig({ HOST: "0.0.0.0" }).REST_AUTH).toBe("keystone");
  });

  it("expects an agent report every 60 s, a host stale after 3 periods and gone after 10, and refuses gone before stale", () => {
    expect(loadConfig({})).toMatchObject({ AGENT_REPORT_INTERVAL_S: 60, AGENT_STALE_AFTER_PERIODS: 3, AGENT_GONE_AFTER_PERIODS: 10 });
    expect(() => loadConfig({ AGENT_STALE_AFTER_PERIODS: "5", AGENT_GONE_AFTER_PERIODS: "5" })).toThrow(/AGENT_GONE_AFTER_PERIODS=5: must be more than AGENT_STALE_AFTER_PERIODS=5/);
  });

  it("caps WebSocket connections and subscriptions per token by default", () => {
    expect(loadConfig({})).toMatchObject({ WS_MAX_CONNECTIONS_PER_TOKEN: 64, WS_MAX_SUBSCRIPTIONS_PER_TOKEN: 256 });
    expect(() => loadConfig({ WS_MAX_SUBSCRIPTIONS_PER_TOKEN: "-1" })).toThrow(/WS_MAX_SUBSCRIPTIONS_PER_TOKEN/);
  });

  it("runs the placement role when PLACEMENT_URL is set and ROLES is not, and refuses the role without it", () => {
    const c = loadConfig({ PLACEMENT_URL: "http://127.0.0.1:8778", PLACEMENT_TOKEN: "admin" });
    expect([...c.roles].sort()).toEqual(["api", "binder", "placement", "projector"]);
    expect(c).toMatchObject({ PLACEMENT_MISSING_COMPUTE_NODE: "wait", PLACEMENT_RETRY_S: 30, PLACEMENT_CONCURRENCY: 4 });
    expect([...loadConfig({ PLACEMENT_URL: "http://127.0.0.1:8778", ROLES: "api" }).roles]).toEqual(["api"]);
    expect(() => loadConfig({ ROLES: "api,placement" })).toThrow(/ROLES="api,placement": the placement role needs PLACEMENT_URL/);
    expect(() => loadConfig({ PLACEMENT_URL: "127.0.0.1:8778" })).toThrow(/PLACEMENT_URL="127.0.0.1:8778"/);
    expect(() => loadConfig({ PLACEMENT_MISSING_COMPUTE_NODE: "maybe" })).toThrow(/PLACEMENT_MISSING_COMPUTE_NODE/);
  });

  it("runs the nova role when NOVA_URL is set and ROLES is not, and refuses the role without it", () => {
    const c = loadConfig({ NOVA_URL: "http://controller:8774/v2.1", NOVA_TOKEN: "secret" });
    expect([...c.roles].sort()).toEqual(["api", "binder", "nova", "projector"]);
    expect(c).toMatchObject({ NOVA_URL: "http://controller:8774/v2.1", NOVA_TOKEN: "secret", NOVA_EVENT_RETRY_S: 300 });
    expect(loadConfig({ NOVA_URL: "https://nova.example/compute/v2.1", NOVA_EVENT_RETRY_S: "30" }).NOVA_EVENT_RETRY_S).toBe(30);
    expect([...loadConfig({ NOVA_URL: "http://controller:8774/v2.1", ROLES: "api" }).roles]).toEqual(["api"]);
    expect([...loadConfig({ NOVA_URL: "http://n:8774/v2.1", ROLES: "nova" }).roles]).toEqual(["nova"]);
    expect(loadConfig({}).roles.has("nova")).toBe(false);
    expect(() => loadConfig({ ROLES: "api,nova" })).toThrow(/ROLES="api,nova": the nova role needs NOVA_URL/);
    expect(() => loadConfig({ NOVA_URL: "controller:8774" })).toThrow(/NOVA_URL="controller:8774": must be a URL/);
    expect(() => loadConfig({ NOVA_URL: "http://n/v2.1", NOVA_EVENT_RETRY_S: "0" })).toThrow(/NOVA_EVENT_RETRY_S/);
    expect(() => loadConfig({ ROLES: "api,compute" })).toThrow(/ROLES="api,compute": a comma list of api, projector, binder, placement, nova/);
  });

  it("runs one API process by default, N with API_WORKERS, one per core with cores, and refuses workers where they cannot share the log", () => {
    expect(loadConfig({}).apiWorkers).toBe(1);
    expect(loadConfig({ API_WORKERS: "3" }).apiWorkers).toBe(3);
    expect(loadConfig({ API_WORKERS: "cores" }).apiWorkers).toBe(availableParallelism());
    expect(() => loadConfig({ API_WORKERS: "0" })).toThrow(/API_WORKERS="0": a number of API workers/);
    expect(() => loadConfig({ API_WORKERS: "300" })).toThrow(/at most 256/);
    expect(() => loadConfig({ API_WORKERS: "2", REDIS_URL: "redis://localhost:6379" })).toThrow(/API_WORKERS="2": several API workers share the embedded LMDB log/);
    expect(() => loadConfig({ API_WORKERS: "2", ROLES: "api" })).toThrow(ConfigError);
    expect(loadConfig({ API_WORKERS: "cores", EVENTSTORE_URL: "esdb://localhost:2113?tls=false" }).apiWorkers).toBe(1);
  });
});
