/**
 * The metric families with one series per host (capacity per host and resource class, each host's
 * agent's liveness), written in Prometheus' text format here rather than through prom-client's
 * registry. A fleet of 10,000 hosts has some 150,000 such series: set and formatted through the
 * registry at every scrape, they held the event loop for most of a second. Here a host's capacity
 * lines are written once per version of the host (the feed keeps a host's object while nothing of
 * it changed) and kept beside it; only the agents' lines, which change with the clock, are written
 * at each scrape.
 */
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

export class FleetExposition {
  /** A host's capacity lines, one text per family of CAPACITY. */
  private readonly written = new WeakMap<FleetHostSample, string[]>();

  /** The families' text: every host's capacity, and its agent's liveness when `agent` is given. */
  render(hosts: readonly FleetHostSample[], agent: ((hostname: string) => AgentSample) | undefined): string {
    const capacity = hosts.map((h) => this.capacityLines(h));
    const parts: string[] = [];
    CAPACITY.forEach(([field, help], i) => {
      parts.push(header(`cyborg_capacity_${field}`, help));
      for (const lines of capacity) parts.push(lines[i]!);
    });
    for (const [name, help, value] of AGENT) {
      parts.push(header(name, help));
      if (agent) for (const h of hosts) parts.push(`${name}{host="${escape(h.hostname)}"} ${number(value(agent(h.hostname)))}\n`);
    }
    return parts.join("");
  }

  private capacityLines(host: FleetHostSample): string[] {
    let lines = this.written.get(host);
    if (!lines) {
      lines = CAPACITY.map(([field]) => host.capacity.map((c) => `cyborg_capacity_${field}{resource_class="${escape(c.resourceClass)}",host="${escape(c.hostname)}"} ${number(c[field])}\n`).join(""));
      this.written.set(host, lines);
    }
    return lines;
  }
}

const header = (name: string, help: string) => `# HELP ${name} ${help.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")}\n# TYPE ${name} gauge\n`;

/** A label value in the text format: backslash, double quote and line feed escaped. */
const escape = (value: string) => value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");

const number = (v: number) => (Number.isNaN(v) ? "NaN" : v === Infinity ? "+Inf" : v === -Infinity ? "-Inf" : String(v));
