/**
 * A throwaway redis-server for tests that need Redis (bench/lib/redis-server.ts starts it: a free
 * loopback port, no persistence, stopped by its PID), plus clients that stop with it. The binary
 * is checked (and installed if possible) by global-setup.ts.
 */
import { Redis } from "ioredis";
import { startRedisServer } from "../../bench/lib/redis-server.js";

export interface TestRedis {
  url: string;
  port: number;
  client(): Redis;
  stop(): Promise<void>;
  /** kill -9 and start again on the same port, empty. */
  restart(): Promise<void>;
}

export async function startRedis(): Promise<TestRedis> {
  const server = await startRedisServer();
  const clients: Redis[] = [];
  return {
    url: server.url,
    port: server.port,
    client() {
      const c = new Redis(server.url);
      clients.push(c);
      return c;
    },
    async stop() {
      for (const c of clients) c.disconnect();
      await server.stop();
    },
    restart: () => server.restart(),
  };
}
