import { describe, expect, it } from "vitest";
import { deployable, device, given, gpuHost, T } from "./support.js";

describe("deployables projection", () => {
  const events = [
    ...gpuHost("h1", "1"),
    ...gpuHost("h2", "2"),
    device("h1", "d3"),
    deployable("h1", "d3", "p3", { name: "h1_0000:b0:00.0", rp: "rp-x" }),
  ];

  it("lists deployables by host, RP, device and name, in the order they were added", async () => {
    const { read } = await given(events);
    const uuids = async (filter: object, first = 100, after?: string) => (await read.listDeployables(filter, first, after)).items.map((d) => d.uuid);
    expect(await uuids({})).toEqual(["p1", "p2", "p3"]);
    expect(await uuids({ hostname: "h1" })).toEqual(["p1", "p3"]);
    expect(await uuids({ rpUuid: "rp-x" })).toEqual(["p3"]);
    expect(await uuids({ deviceUuid: "d2" })).toEqual(["p2"]);
    expect(await uuids({ name: "h1_0000:af:00.0" })).toEqual(["p1"]);
    expect(await uuids({ name: "h1_0000:af:00.0", hostname: "h2" })).toEqual([]);

    const page = await read.listDeployables({ hostname: "h1" }, 1);
    expect(page).toMatchObject({ totalCount: 2, hasNextPage: true });
    expect(page.items[0]).toMatchObject({ uuid: "p1", resourceClass: "PGPU", traits: ["CUSTOM_GPU_NVIDIA", "CUSTOM_GPU_PRODUCT_ID_1EB8"] });
    expect(await uuids({ hostname: "h1" }, 5, page.cursors[0])).toEqual(["p3"]);

    expect([await uuids({ rpUuid: "rp-p2" }), await uuids({ rpUuid: "rp-none" })]).toEqual([["p2"], []]);
    expect([await uuids({ hostname: "h2" }), await uuids({ hostname: "h1" })]).toEqual([["p2"], ["p1", "p3"]]);
  });

  it("drops a removed deployable from every index, without the event naming them", async () => {
    const { read, store } = await given([
      ...events,
      { type: "DeployableRemoved", data: { hostname: "h1", deviceUuid: "d3", deployableUuid: "p3", at: T(50) } },
    ]);
    for (const filter of [{ rpUuid: "rp-x" }, { name: "h1_0000:b0:00.0" }, { deviceUuid: "d3" }]) {
      expect((await read.listDeployables(filter, 10)).totalCount).toBe(0);
    }
    expect((await read.listDeployables({ hostname: "h1" }, 10)).items.map((d) => d.uuid)).toEqual(["p1"]);
    const keys = Object.keys((await store.dump("deployables")).keys);
    expect(keys.filter((k) => k.includes("p3") || k.includes("rp-x"))).toEqual([]);
  });
});
