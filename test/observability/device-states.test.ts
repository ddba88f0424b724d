/** cyborg_devices and cyborg_device_state_duration_seconds, from the devices each scrape reads. */
import { describe, expect, it } from "vitest";
import type { DeviceLifecycleState } from "../../src/domain/inventory/device-lifecycle.js";
import { Metrics } from "../../src/observability/metrics.js";

function scraper() {
  let now = 1_000_000;
  let devices: Array<{ deviceUuid: string; state: DeviceLifecycleState }> = [];
  const m = new Metrics({ processMetrics: false, now: () => now });
  m.watch({ fleet: async () => [{ hostname: "h1", capacity: [], devices }] });
  return {
    at: (ms: number, d: typeof devices) => {
      now = ms;
      devices = d;
    },
    scrapeBody: async () => (await m.scrape()).chunks.join(""),
  };
}

describe("device lifecycle metrics", () => {
  it("counts devices per state and observes a stay when a device leaves a state it was seen entering", async () => {
    const s = scraper();
    s.at(0, [{ deviceUuid: "d1", state: "AVAILABLE" }, { deviceUuid: "d2", state: "AVAILABLE" }]);
    const first = await s.scrapeBody();
    expect(first).toMatch(/cyborg_devices\{state="AVAILABLE"\} 2/);
    expect(first).toMatch(/cyborg_devices\{state="DRAINING"\} 0/);

    // d1 drains at 15 s: its AVAILABLE began before anyone looked, so that stay is not timed.
    s.at(15_000, [{ deviceUuid: "d1", state: "DRAINING" }, { deviceUuid: "d2", state: "AVAILABLE" }]);
    const second = await s.scrapeBody();
    expect(second).toMatch(/cyborg_devices\{state="DRAINING"\} 1/);
    expect(second).not.toMatch(/cyborg_device_state_duration_seconds_count\{state="AVAILABLE"\} [1-9]/);

    // Drained at 615 s: DRAINING lasted from the scrape that saw it (15 s) to this one.
    s.at(615_000, [{ deviceUuid: "d1", state: "DRAINED" }, { deviceUuid: "d2", state: "AVAILABLE" }]);
    const third = await s.scrapeBody();
    expect(third).toMatch(/cyborg_device_state_duration_seconds_count\{state="DRAINING"\} 1/);
    expect(third).toMatch(/cyborg_device_state_duration_seconds_sum\{state="DRAINING"\} 600/);
    expect(third).toMatch(/cyborg_devices\{state="DRAINED"\} 1/);
    expect(third).toMatch(/cyborg_devices\{state="AVAILABLE"\} 1/);
  });

  it("shows no device counts while the read model cannot be read", async () => {
    const m = new Metrics({ processMetrics: false });
    m.watch({ fleet: async () => Promise.reject(new Error("read model being rebuilt")) });
    expect((await m.scrape()).chunks.join("")).not.toMatch(/cyborg_devices\{/);
  });
});
