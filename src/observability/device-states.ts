/**
 * Devices per lifecycle state, and how long devices stay in each, from what the read models show
 * at each scrape (the state is the domain's function, computed by the resource-providers query;
 * nothing here decides it). A device's time in a state is observed when a scrape first sees it in
 * another state: from the scrape that first saw it there to the scrape that saw it leave, so the
 * figure is as fine as the scrape interval. A state the device was already in when this process
 * first saw it has no known start, and its time is not observed.
 */
import { DEVICE_LIFECYCLE_STATES, type DeviceLifecycleState } from "../domain/inventory/device-lifecycle.js";

export interface DeviceStateSample {
  deviceUuid: string;
  state: DeviceLifecycleState;
}

interface Seen {
  state: DeviceLifecycleState;
  /** When a scrape first saw it in this state (ms); null: it was in it before this process looked. */
  since: number | null;
}

export class DeviceStateTracker {
  private readonly seen = new Map<string, Seen>();
  private first = true;

  /** Takes one scrape's devices at `now` (ms): the counts per state, and the stays that ended. */
  update(devices: readonly DeviceStateSample[], now: number): { counts: Record<DeviceLifecycleState, number>; ended: Array<{ state: DeviceLifecycleState; seconds: number }> } {
    const counts = Object.fromEntries(DEVICE_LIFECYCLE_STATES.map((s) => [s, 0])) as Record<DeviceLifecycleState, number>;
    const ended: Array<{ state: DeviceLifecycleState; seconds: number }> = [];
    const present = new Set<string>();
    for (const { deviceUuid, state } of devices) {
      counts[state]++;
      present.add(deviceUuid);
      const before = this.seen.get(deviceUuid);
      if (before?.state === state) continue;
      if (before?.since != null) ended.push({ state: before.state, seconds: (now - before.since) / 1000 });
      this.seen.set(deviceUuid, { state, since: this.first && !before ? null : now });
    }
    // A device no longer shown (removed) ends no stay: it did not move to another state.
    for (const uuid of this.seen.keys()) if (!present.has(uuid)) this.seen.delete(uuid);
    this.first = false;
    return { counts, ended };
  }
}
