/**
 * A throwaway OpenStack Placement (Debian's placement-api 8.0) for tests and benchmarks, as
 * openstack-services.md describes it: sqlite in a temporary directory, auth_strategy = noauth2
 * (X-Auth-Token: admin), a free loopback port; under uwsgi with 2 processes when the python3
 * plugin is installed, else the single-threaded wsgiref server. Stopped by its PID; `restart`
 * brings it back on the same port with the same database.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { closeSync, copyFileSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./redis-server.js";

export const PLACEMENT_TOKEN = "admin";

export interface PlacementServer {
  url: string;
  port: number;
  token: string;
  /** uwsgi (2 processes) or wsgiref (1 thread). */
  server: "uwsgi" | "wsgiref";
  pid(): number | undefined;
  /** Stops it (SIGTERM, then SIGKILL), keeping the database. */
  stop(): Promise<void>;
  /** Starts it again on the same port with the same database. */
  restart(): Promise<void>;
  /** Stops it and removes its directory. */
  destroy(): Promise<void>;
}

const UWSGI_PLUGINS = "/usr/lib/uwsgi/plugins";

export function hasUwsgiPython(): boolean {
  return existsSync(UWSGI_PLUGINS) && readdirSync(UWSGI_PLUGINS).some((f) => /^python3\d*_plugin\.so$/.test(f)) && commandExists("uwsgi");
}

export function commandExists(cmd: string): boolean {
  return spawnSync("sh", ["-c", `command -v ${cmd}`], { stdio: "ignore" }).status === 0;
}

/** The errors at the end of a server log, for an error message. */
function lastLines(file: string): string {
  const lines = readFileSync(file, "utf8").split("\n").filter((l) => /error|exception|locked|critical/i.test(l));
  return lines.slice(-5).join(" | ") || `see ${file}`;
}

function writeConfig(dir: string, synchronous: boolean): string {
  const conf = join(dir, "placement.conf");
  writeFileSync(
    conf,
    [
      "[DEFAULT]",
      "debug = False",
      "[api]",
      "auth_strategy = noauth2",
      "[placement_database]",
      `connection = sqlite:///${join(dir, "placement.db")}`,
      // False: PRAGMA synchronous=OFF (benchmarks measuring the sync rather than this disk).
      `sqlite_synchronous = ${synchronous ? "True" : "False"}`,
      "",
    ].join("\n"),
  );
  return conf;
}

/**
 * A migrated database with the standard traits and resource classes in it, made once per
 * Placement version and copied for every server: `db sync` takes ~2 s, and two uwsgi workers that
 * both fill the trait table of a fresh sqlite database at start collide ("database is locked").
 */
function templateDatabase(): string {
  const bin = spawnSync("sh", ["-c", "command -v placement-manage"], { encoding: "utf8" }).stdout.trim();
  const key = bin ? Math.round(statSync(bin).mtimeMs) : 0;
  const template = join(tmpdir(), `cyborg-es-placement-${key}.db`);
  if (existsSync(template)) return template;
  const dir = mkdtempSync(join(tmpdir(), "placement-template-"));
  try {
    const conf = writeConfig(dir, true);
    const run = (cmd: string, args: string[]) => {
      const r = spawnSync(cmd, args, { encoding: "utf8", env: { ...process.env, OS_PLACEMENT_CONFIG_DIR: dir } });
      if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} failed (${r.error?.message ?? `exit ${r.status}`}): ${r.stderr}`);
    };
    run("placement-manage", ["--config-file", conf, "db", "sync"]);
    // What every Placement process does at start (traits and resource classes), done once here.
    run("/usr/bin/python3", ["-c", "from placement import wsgi; wsgi.init_application()"]);
    const partial = `${template}.${process.pid}`;
    copyFileSync(join(dir, "placement.db"), partial);
    renameSync(partial, template);
    return template;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function startPlacementServer(options: { processes?: number; synchronous?: boolean } = {}): Promise<PlacementServer> {
  const template = templateDatabase();
  const dir = mkdtempSync(join(tmpdir(), "placement-"));
  writeConfig(dir, options.synchronous !== false);
  copyFileSync(template, join(dir, "placement.db"));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const server = hasUwsgiPython() ? "uwsgi" : "wsgiref";
  const processes = options.processes ?? 2;
  let proc: ChildProcess | undefined;

  /** Starts the server; a worker that dies while the app loads (sqlite busy under load) gets a second chance. */
  async function launch(attempt = 1): Promise<void> {
    const logFile = join(dir, "server.log");
    const out = openSync(logFile, "a");
    const env = { ...process.env, OS_PLACEMENT_CONFIG_DIR: dir };
    const args =
      server === "uwsgi"
        ? [
            "--plugin", "python3", "--http-socket", `127.0.0.1:${port}`, "--wsgi-file", "/usr/bin/placement-api",
            "--master", "--processes", String(processes), "--lazy-apps", "--die-on-term", "--need-app", "--disable-logging",
            // uwsgi's http-socket closes every connection but does not say so: without this header,
            // keep-alive clients (Node's fetch) race it and see ECONNRESET.
            "--add-header", "Connection: close",
          ]
        : ["--host", "127.0.0.1", "--port", String(port)];
    const child = spawn(server === "uwsgi" ? "uwsgi" : "placement-api", args, { env, stdio: ["ignore", out, out] });
    closeSync(out);
    proc = child;
    await new Promise<void>((resolve, reject) => {
      child.once("spawn", resolve);
      child.once("error", (err) => reject(new Error(`cannot start ${server} for Placement (apt-get install placement-api uwsgi-plugin-python3): ${err.message}`)));
    });
    const deadline = Date.now() + 60_000;
    for (;;) {
      const ok = await fetch(`${url}/`, { signal: AbortSignal.timeout(2000) }).then((r) => r.ok, () => false);
      if (ok) return;
      if (child.exitCode !== null) {
        if (attempt < 3) return launch(attempt + 1);
        throw new Error(`Placement exited with ${child.exitCode} at start (${attempt} attempts): ${lastLines(logFile)}`);
      }
      if (Date.now() > deadline) throw new Error(`Placement did not answer on ${url} within 60 s: ${lastLines(logFile)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async function stop(): Promise<void> {
    const child = proc;
    proc = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
    await exited;
    clearTimeout(timer);
  }

  await launch();
  return {
    url,
    port,
    token: PLACEMENT_TOKEN,
    server,
    pid: () => proc?.pid,
    stop,
    restart: async () => {
      await stop();
      await launch();
    },
    destroy: async () => {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
