/**
 * Devices per lifecycle state, and how long devices stay in each, from what the read models show
 * at each scrape (the state is the domain's function, computed by the resource-providers query;
 * nothing here decides it). A device's time in a state is observed when a scrape first sees it in
 * another state: from the scrape that first saw it there to the scrape that saw it leave, so the
 * figure is as fine as the scrape interval. A state the device was already in when this process
 * first saw it has no known start, and its time is not observed.
 *
 * The devices come host by host, and a host's list kept from one scrape to the next (the same
 * array) is not looked at again: a scrape of a large fleet costs what changed since the last one.
 */
import { DEVICE_LIFECYCLE_STATES, type DeviceLifecycleState } from "../domain/inventory/device-lifecycle.js";

export interface DeviceStateSample {
  deviceUuid: string;
  state: DeviceLifecycleState;
}

/** One host's devices; the same array while nothing of them changed. */
export interface HostDevicesSample {
  hostname: string;
  devices: readonly DeviceStateSample[];
}

interface Seen {
  state: DeviceLifecycleState;
  /** When a scrape first saw it in this state (ms); null: it was in it before this process looked. */
  since: number | null;
}

type Stay = { state: DeviceLifecycleState; seconds: number };

export class DeviceStateTracker {
  private readonly seen = new Map<string, Seen>();
  /** Each host's devices as the last scrape took them. */
  private readonly hosts = new Map<string, readonly DeviceStateSample[]>();
  private readonly counts = Object.fromEntries(DEVICE_LIFECYCLE_STATES.map((s) => [s, 0])) as Record<DeviceLifecycleState, number>;
  private first = true;

  /** Takes one scrape's hosts at `now` (ms): the counts per state, and the stays that ended. */
  update(hosts: Iterable<HostDevicesSample>, now: number): { counts: Record<DeviceLifecycleState, number>; ended: Stay[] } {
    const ended: Stay[] = [];
    const present = new Set<string>();
    for (const { hostname, devices } of hosts) {
      present.add(hostname);
      const before = this.hosts.get(hostname);
      if (before === devices) continue;
      this.hosts.set(hostname, devices);
      const gone = new Set<string>();
      for (const d of before ?? []) {
        this.counts[d.state]--;
        gone.add(d.deviceUuid);
      }
      for (const d of devices) {
        this.counts[d.state]++;
        gone.delete(d.deviceUuid);
        this.take(d, now, ended);
      }
      for (const uuid of gone) this.seen.delete(uuid);
    }
    // A device no longer shown (removed, or its host gone) ends no stay: it did not move to another state.
    for (const [hostname, devices] of this.hosts) {
      if (present.has(hostname)) continue;
      this.hosts.delete(hostname);
      for (const d of devices) {
        this.counts[d.state]--;
        this.seen.delete(d.deviceUuid);
      }
    }
    this.first = false;
    return { counts: { ...this.counts }, ended };
  }

  private take({ deviceUuid, state }: DeviceStateSample, now: number, ended: Stay[]): void {
    const before = this.seen.get(deviceUuid);
    if (before?.state === state) return;
    if (before?.since != null) ended.push({ state: before.state, seconds: (now - before.since) / 1000 });
    this.seen.set(deviceUuid, { state, since: this.first && !before ? null : now });
  }
}
