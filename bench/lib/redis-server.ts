/**
 * A throwaway redis-server for benchmarks and tests (test/support/redis.ts wraps it): a free loopback
 * port, no persistence, stopped (or restarted empty) by its PID.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { Redis } from "ioredis";

export interface BenchRedis {
  url: string;
  port: number;
  readonly pid: number;
  stop(): Promise<void>;
  /** kill -9 and start again on the same port, empty (no persistence): Redis restarted without its data. */
  restart(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

export async function startRedisServer(): Promise<BenchRedis> {
  const port = await freePort();
  let proc = await spawnRedis(port);
  const stop = async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((r) => proc.once("exit", r));
    proc.kill("SIGKILL");
    await exited;
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    get pid() {
      return proc.pid!;
    },
    stop,
    async restart() {
      await stop();
      proc = await spawnRedis(port);
    },
  };
}

/** A redis-server on `port`, answering PING. */
async function spawnRedis(port: number): Promise<ChildProcess> {
  const bin = process.env.REDIS_SERVER_BIN ?? "redis-server";
  const proc = spawn(bin, ["--bind", "127.0.0.1", "--port", String(port), "--save", "", "--appendonly", "no", "--protected-mode", "no"], {
    stdio: "ignore",
  });
  const spawned = new Promise<void>((resolve, reject) => {
    proc.once("spawn", resolve);
    proc.once("error", (err) => reject(new Error(`cannot start ${bin} (install redis-server or set REDIS_SERVER_BIN): ${err.message}`)));
  });
  await spawned;
  const url = `redis://127.0.0.1:${port}`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on("error", () => undefined);
    try {
      await probe.connect();
      await probe.ping();
      probe.disconnect();
      return proc;
    } catch {
      probe.disconnect();
      if (Date.now() > deadline || proc.exitCode !== null) throw new Error(`redis-server did not start on port ${port}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }
}
