/**
 * The metric families with one series per host (capacity per host and resource class, each host's
 * agent's liveness), written in Prometheus' text format here rather than through prom-client's
 * registry. A fleet of 10,000 hosts has some 150,000 such series: set and formatted through the
 * registry at every scrape, they held the event loop for most of a second. Here a host's capacity
 * lines are written once per version of the host (the feed keeps a host's object while nothing of
 * it changed) and kept beside it; only the agents' lines, which change with the clock, are written
 * at each scrape. The text comes in chunks, with a pause of the scrape's pacing between them, and
 * is sent so (metrics-server.ts): a scrape of 10,000 hosts does not hold requests up for its whole text.
 */
import type { Pacing } from "../infra/duty-cycle.js";
import type { AgentSample, CapacitySample } from "./metrics.js";

/** One host's part of the fleet; the same object while nothing of it changed. */
export interface FleetHostSample {
  hostname: string;
  capacity: readonly CapacitySample[];
}

const CAPACITY = [
  ["total", "Accelerators the host's resource providers of the class offer (Placement's inventory total)"],
  ["used", "Of those, allocated to ARQs"],
  ["reserved", "Of those, reserved (a device in maintenance, or lost while allocated); free = total - used - reserved"],
] as const;

const AGENT = [
  ["cyborg_agent_live", "1 while the host's agent reports on time (hostStatus liveness LIVE), 0 when it is STALE or GONE", (a: AgentSample) => (a.live ? 1 : 0)],
  ["cyborg_agent_silent_seconds", "Seconds since the host's agent last reported (since the service started, when it has not)", (a: AgentSample) => a.silentForS],
] as const;

/** Hosts written between two turns of the event loop. */
const SLICE = 1000;

export class FleetExposition {
  /** A host's `host` label and capacity lines (one text per family of CAPACITY). */
  private readonly written = new WeakMap<FleetHostSample, { label: string; capacity: string[] }>();

  /**
   * The families' text, a chunk of up to SLICE hosts at a time with a pause of `pace` between
   * chunks: every host's capacity, and its agent's liveness when `agent` is given.
   */
  async render(hosts: readonly FleetHostSample[], agent: ((hostname: string) => AgentSample) | undefined, pace: Pacing): Promise<string[]> {
    const chunks: string[] = [];
    const parts = (i: number) => hosts.slice(i, i + SLICE).map((h) => this.linesOf(h));
    for (const [index, [field, help]] of CAPACITY.entries()) {
      chunks.push(header(`cyborg_capacity_${field}`, help));
      for (let i = 0; i < hosts.length; i += SLICE) {
        chunks.push(parts(i).map((w) => w.capacity[index]).join(""));
        await pace.pause();
      }
    }
    for (const [name, help, value] of AGENT) {
      chunks.push(header(name, help));
      if (!agent) continue;
      for (let i = 0; i < hosts.length; i += SLICE) {
        chunks.push(hosts.slice(i, i + SLICE).map((h) => `${name}{${this.linesOf(h).label}} ${number(value(agent(h.hostname)))}\n`).join(""));
        await pace.pause();
      }
    }
    return chunks;
  }

  private linesOf(host: FleetHostSample): { label: string; capacity: string[] } {
    let lines = this.written.get(host);
    if (!lines) {
      const label = `host="${escape(host.hostname)}"`;
      lines = { label, capacity: CAPACITY.map(([field]) => host.capacity.map((c) => `cyborg_capacity_${field}{resource_class="${escape(c.resourceClass)}",${label}} ${number(c[field])}\n`).join("")) };
      this.written.set(host, lines);
    }
    return lines;
  }
}

const header = (name: string, help: string) => `# HELP ${name} ${help.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")}\n# TYPE ${name} gauge\n`;

/** A label value in the text format: backslash, double quote and line feed escaped. */
const escape = (value: string) => value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");

const number = (v: number) => (Number.isNaN(v) ? "NaN" : v === Infinity ? "+Inf" : v === -Infinity ? "-Inf" : String(v));
