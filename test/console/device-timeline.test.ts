/** The console's device timeline: the loop's events in words, and when the history shows the device drained. */
import { describe, expect, it } from "vitest";
import { deviceTimeline, type HistoryNode } from "../../console/src/lib/device-timeline.js";

let position = 0;
const event = (type: string, data: Record<string, unknown>): HistoryNode => ({
  position: String(++position),
  type,
  summary: type,
  principal: "admin",
  at: `2026-11-28T10:00:${String(position).padStart(2, "0")}Z`,
  recordedAt: `2026-11-28T10:00:${String(position).padStart(2, "0")}Z`,
  data,
});
const taint = (effect: string) => event("DeviceTainted", { taint: { key: "cyborg.openstack.org/health", value: "", effect, by: "admin", reason: "XID 79" } });
const untaint = (effect: string) => event("DeviceUntainted", { key: "cyborg.openstack.org/health", effect, by: "admin", reason: "" });
const take = (handleUuid: string) => event("AttachHandleAllocated", { handleUuid, arqUuid: `arq-${handleUuid}`, instanceUuid: "vm" });
const release = (handleUuid: string) => event("AttachHandleReleased", { handleUuid, arqUuid: `arq-${handleUuid}` });
const steps = (nodes: HistoryNode[]) => deviceTimeline(nodes).map((e) => e.step);

describe("deviceTimeline", () => {
  it("marks the device drained when its last holder lets go under a NoExecute taint", () => {
    expect(steps([take("h1"), take("h2"), taint("NoExecute"), release("h1"), release("h2")])).toEqual(["Taken", "Taken", "Tainted", "Let go", "Let go", "Drained"]);
  });

  it("marks it drained at once when a NoExecute taint finds it free, and not for a second one", () => {
    const second = event("DeviceTainted", { taint: { key: "example.org/other", value: "", effect: "NoExecute", by: "admin", reason: "r" } });
    expect(steps([taint("NoExecute"), second])).toEqual(["Tainted", "Drained", "Tainted"]);
  });

  it("does not for a NoSchedule taint, nor once the NoExecute taint is gone", () => {
    expect(steps([take("h1"), taint("NoSchedule"), release("h1")])).toEqual(["Taken", "Tainted", "Let go"]);
    expect(steps([take("h1"), taint("NoExecute"), untaint("NoExecute"), release("h1")])).toEqual(["Taken", "Tainted", "Taint removed", "Let go"]);
  });

  it("tells a failure with its reason and leaves out events that are not the loop's", () => {
    const timeline = deviceTimeline([event("AttributeSet", { key: "rc", value: "FPGA" }), event("DeviceFailed", { reason: "cleaning failed: exit code 3" })]);
    expect(timeline).toEqual([{ key: String(position), at: expect.any(String), step: "Failed", text: expect.stringMatching(/^cleaning failed: exit code 3\. /), tone: "bad" }]);
  });
});
