/**
 * A throwaway Redis Cluster for benchmarks and tests: six `redis-server --cluster-enabled yes`
 * nodes on free loopback ports (three masters, three replicas, made by `redis-cli --cluster
 * create`), their files in a temporary directory, stopped (or one killed) by PID.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Redis } from "ioredis";
import { freePort } from "./redis-server.js";

export interface ClusterNode {
  port: number;
  readonly pid: number;
  url: string;
  /** Whether the process still runs. */
  readonly alive: boolean;
}

export interface BenchRedisCluster {
  nodes: readonly ClusterNode[];
  /** Every node's URL, comma-separated: REDIS_URL for REDIS_CLUSTER=1. */
  url: string;
  /** cluster-node-timeout: how long a master may be silent before its replica takes over. */
  nodeTimeoutMs: number;
  /** The nodes that serve slots now, as the live nodes see them. */
  masters(): Promise<ClusterNode[]>;
  /** The node serving the slot of `key` now. */
  masterOf(key: string): Promise<ClusterNode>;
  /** The replica of a master, as the live nodes see it. */
  replicaOf(master: ClusterNode): Promise<ClusterNode>;
  /** SIGKILL one node by PID; resolves once it exited. */
  kill(node: ClusterNode): Promise<void>;
  /** Resolves once every live node says cluster_state:ok and `key`'s slot is served by a live node. */
  healthy(key?: string): Promise<void>;
  stop(): Promise<void>;
}

export interface ClusterOptions {
  /** cluster-node-timeout in ms (default 1000: a killed master is replaced within a few seconds). */
  nodeTimeoutMs?: number;
}

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startRedisCluster(options: ClusterOptions = {}): Promise<BenchRedisCluster> {
  const nodeTimeoutMs = options.nodeTimeoutMs ?? 1000;
  const dir = await mkdtemp(join(tmpdir(), "cyborg-redis-cluster-"));
  const procs: Array<{ port: number; proc: ChildProcess }> = [];
  const stop = async () => {
    await Promise.all(procs.map(({ proc }) => killProcess(proc)));
    await rm(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < 6; i++) {
      const [port, bus] = await twoFreePorts();
      procs.push({ port, proc: await spawnNode(dir, port, bus, nodeTimeoutMs) });
    }
    const addresses = procs.map(({ port }) => `127.0.0.1:${port}`);
    await run(process.env.REDIS_CLI_BIN ?? "redis-cli", ["--cluster", "create", ...addresses, "--cluster-replicas", "1", "--cluster-yes"], { timeout: 60_000 });
  } catch (err) {
    await stop();
    throw err;
  }
  const nodes: ClusterNode[] = procs.map(({ port, proc }) => ({
    port,
    pid: proc.pid!,
    url: `redis://127.0.0.1:${port}`,
    get alive() {
      return proc.exitCode === null && proc.signalCode === null;
    },
  }));
  const procOf = (n: ClusterNode) => procs.find((p) => p.port === n.port)!.proc;
  const cluster: BenchRedisCluster = {
    nodes,
    url: nodes.map((n) => n.url).join(","),
    nodeTimeoutMs,
    masters: async () => mastersSeenBy(nodes.filter((n) => n.alive), nodes),
    async masterOf(key) {
      const live = nodes.find((n) => n.alive)!;
      const slot = await ask<number>(live, (c) => c.cluster("KEYSLOT", key) as Promise<number>);
      return ownerOfSlot(live, nodes, slot);
    },
    async replicaOf(master) {
      const text = await ask<string>(master, (c) => c.cluster("NODES") as Promise<string>);
      const lines = text.split("\n").map((l) => l.split(" "));
      const id = lines.find((f) => f[2]?.includes("myself"))![0];
      const port = Number(/:(\d+)@/.exec(lines.find((f) => f[3] === id)![1]!)![1]);
      return nodes.find((n) => n.port === port)!;
    },
    kill: async (node) => killProcess(procOf(node)),
    async healthy(key) {
      const deadline = Date.now() + 60_000;
      for (;;) {
        if ((await allOk(nodes.filter((n) => n.alive))) && (key === undefined || (await cluster.masterOf(key).then((m) => m.alive, () => false)))) return;
        if (Date.now() > deadline) throw new Error("the Redis cluster did not become healthy within 60 s");
        await sleep(50);
      }
    },
    stop,
  };
  try {
    await cluster.healthy();
    await replicasInSync(nodes);
  } catch (err) {
    await stop();
    throw err;
  }
  return cluster;
}

/** A client port and a cluster-bus port, both free now. */
async function twoFreePorts(): Promise<[number, number]> {
  const a = await freePort();
  let b = await freePort();
  while (b === a) b = await freePort();
  return [a, b];
}

async function spawnNode(dir: string, port: number, bus: number, nodeTimeoutMs: number): Promise<ChildProcess> {
  const bin = process.env.REDIS_SERVER_BIN ?? "redis-server";
  const args = [
    ...["--bind", "127.0.0.1", "--port", String(port), "--cluster-port", String(bus), "--protected-mode", "no"],
    ...["--cluster-enabled", "yes", "--cluster-config-file", `nodes-${port}.conf`, "--cluster-node-timeout", String(nodeTimeoutMs)],
    ...["--dir", dir, "--save", "", "--appendonly", "no", "--dbfilename", `dump-${port}.rdb`],
  ];
  const proc = spawn(bin, args, { stdio: "ignore" });
  await new Promise<void>((resolve, reject) => {
    proc.once("spawn", resolve);
    proc.once("error", (err) => reject(new Error(`cannot start ${bin} (install redis-server or set REDIS_SERVER_BIN): ${err.message}`)));
  });
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      await ask({ url: `redis://127.0.0.1:${port}` }, (c) => c.ping());
      return proc;
    } catch {
      if (Date.now() > deadline || proc.exitCode !== null) throw new Error(`redis-server did not start on port ${port}`);
      await sleep(25);
    }
  }
}

async function killProcess(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((r) => proc.once("exit", r));
  proc.kill("SIGKILL");
  await exited;
}

/** One command on a short-lived plain connection to one node. */
async function ask<T>(node: { url: string }, f: (c: Redis) => Promise<T>): Promise<T> {
  const c = new Redis(node.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
  c.on("error", () => undefined);
  try {
    await c.connect();
    return await f(c);
  } finally {
    c.disconnect();
  }
}

async function allOk(live: readonly ClusterNode[]): Promise<boolean> {
  const infos = await Promise.all(live.map((n) => ask(n, (c) => c.cluster("INFO") as Promise<string>).catch(() => "")));
  return infos.every((i) => /cluster_state:ok/.test(i));
}

/** The masters (with slots) that live nodes agree on, from CLUSTER NODES of the first that answers. */
async function mastersSeenBy(live: readonly ClusterNode[], all: readonly ClusterNode[]): Promise<ClusterNode[]> {
  for (const n of live) {
    const text = await ask(n, (c) => c.cluster("NODES") as Promise<string>).catch(() => undefined);
    if (text === undefined) continue;
    const ports = text
      .split("\n")
      .map((l) => l.split(" "))
      .filter((f) => f.length > 8 && f[2]!.includes("master") && !f[2]!.includes("fail"))
      .map((f) => Number(/:(\d+)@/.exec(f[1]!)![1]));
    return all.filter((x) => ports.includes(x.port));
  }
  throw new Error("no Redis cluster node answers");
}

async function ownerOfSlot(live: ClusterNode, all: readonly ClusterNode[], slot: number): Promise<ClusterNode> {
  const ranges = (await ask(live, (c) => c.cluster("SLOTS"))) as unknown as Array<[number, number, [string, number, ...unknown[]]]>;
  const range = ranges.find(([from, to]) => slot >= from && slot <= to);
  if (!range) throw new Error(`slot ${slot} is not served`);
  const port = Number(range[2][1]);
  return all.find((n) => n.port === port)!;
}

/** Resolves once every replica's link to its master is up (a failover then loses nothing written before). */
async function replicasInSync(nodes: readonly ClusterNode[]): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const infos = await Promise.all(nodes.map((n) => ask(n, (c) => c.info("replication")).catch(() => "")));
    const replicas = infos.filter((i) => /role:slave/.test(i));
    if (replicas.length === 3 && replicas.every((i) => /master_link_status:up/.test(i))) return;
    if (Date.now() > deadline) throw new Error("the Redis cluster's replicas did not sync within 30 s");
    await sleep(50);
  }
}
