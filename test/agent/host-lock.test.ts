import { describe, expect, it } from "vitest";
import { HostLock } from "../../src/clients/agent/host-lock.js";

const gate = () => {
  let open!: () => void;
  const p = new Promise<void>((r) => (open = r));
  return { p, open };
};

describe("the agent's host lock", () => {
  it("programmings run side by side; a report waits for them and holds the host alone; later programmings wait for it", async () => {
    const lock = new HostLock();
    const log: string[] = [];
    const g1 = gate();
    const g2 = gate();
    const gr = gate();
    const p1 = lock.shared(async () => (log.push("p1 start"), await g1.p, log.push("p1 end")));
    const p2 = lock.shared(async () => (log.push("p2 start"), await g2.p, log.push("p2 end")));
    const report = lock.exclusive(async () => (log.push("report start"), await gr.p, log.push("report end")));
    const p3 = lock.shared(async () => void log.push("p3"));
    await new Promise((r) => setTimeout(r, 10));
    expect(log).toEqual(["p1 start", "p2 start"]);
    g1.open();
    await p1;
    expect(log).not.toContain("report start");
    g2.open();
    await p2;
    await new Promise((r) => setTimeout(r, 0));
    expect(log.at(-1)).toBe("report start");
    gr.open();
    await Promise.all([report, p3]);
    expect(log.slice(-2)).toEqual(["report end", "p3"]);
  });

  it("a holder that throws lets the next one in", async () => {
    const lock = new HostLock();
    await expect(lock.exclusive(async () => Promise.reject(new Error("report failed")))).rejects.toThrow("report failed");
    expect(await lock.shared(async () => "next")).toBe("next");
  });
});
