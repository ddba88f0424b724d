/**
 * FPGA programming with the catalogue in Glance (GLANCE_URL): Debian's real glance-api, the
 * service in this process, the real agent. One bitstream is uploaded through the service, another
 * straight to Glance as an operator would (`openstack image create --property accel:function_id=...`).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, type TestService } from "../api/harness.js";
import { CREATE_PROFILE } from "../api/operations.js";
import { startGlance, type TestGlance } from "../support/glance.js";
import { bind, fpgaE2e, history, region, UPLOAD } from "./support/fpga-e2e.js";

describe("programming at bind time with bitstreams in Glance", () => {
  const kit = fpgaE2e(["g-byid", "g-byfn"]);
  let glance: TestGlance;
  let t: TestService;
  beforeAll(async () => {
    [glance] = await Promise.all([startGlance(), kit.build()]);
    t = await startTestService({ env: { BIND_TIMEOUT_S: "30", GLANCE_URL: glance.url }, overrides: { tokens: kit.tokens() } });
  });
  afterAll(async () => {
    await kit.stop();
    await t?.close();
    await glance?.stop();
  });

  it("by bitstream id: uploaded through the service into Glance, checked against Glance's sha512, programmed, BOUND", async () => {
    const b = (await t.ok("admin", UPLOAD, { input: { name: "nlb0.gbs", functionId: "nlb0", regionType: "r1", vendor: "fake", contentBase64: Buffer.from("green bits").toString("base64") } }))
      .uploadBitstream;
    expect(b.checksum).toMatch(/^sha512:[0-9a-f]{128}$/);
    const image = (await (await fetch(`${glance.url}/v2/images/${b.id}`)).json()) as Record<string, unknown>;
    expect(image).toMatchObject({ status: "active", "accel:function_id": "nlb0", "accel:region_type": "r1", "accel:vendor": "fake" });
    await t.ok("admin", CREATE_PROFILE, { input: { name: "g-by-id", groups: [{ "resources:FPGA": "1", "accel:bitstream_id": b.id }] } });
    await kit.agentFor(t, "g-byid");
    const x = await bind(t, "g-byid", "g-by-id");
    expect(x.started).toBe("BIND_STARTED");
    expect(await x.bound()).toMatchObject({ status: "COMPLETED" });
    expect(await region(t, "g-byid")).toMatchObject({ bitstreamId: b.id, lastProgramming: { outcome: "PROGRAMMED" } });
    const requested = (await history(t, "g-byid")).find((e) => e.type === "RegionProgrammingRequested")!;
    expect(requested.data.bitstream.checksum).toBe(b.checksum);
  });

  it("by function: an image an operator put in Glance with accel: properties is found for the region's type", async () => {
    const created = (await (
      await fetch(`${glance.url}/v2/images`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "nlb3.gbs", disk_format: "raw", container_format: "bare", "accel:function_id": "nlb3", "accel:region_type": "r1", "accel:vendor": "fake" }),
      })
    ).json()) as { id: string };
    // Another image for the same function but another region type must not make the choice ambiguous.
    const other = (await (
      await fetch(`${glance.url}/v2/images`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "nlb3-r2.gbs", disk_format: "raw", container_format: "bare", "accel:function_id": "nlb3", "accel:region_type": "r2", "accel:vendor": "fake" }),
      })
    ).json()) as { id: string };
    for (const id of [created.id, other.id]) {
      const put = await fetch(`${glance.url}/v2/images/${id}/file`, { method: "PUT", headers: { "content-type": "application/octet-stream" }, body: Buffer.from(`content of ${id}`) });
      expect(put.status).toBe(204);
    }
    await t.ok("admin", CREATE_PROFILE, { input: { name: "g-by-fn", groups: [{ "resources:FPGA": "1", "accel:function_id": "nlb3" }] } });
    await kit.agentFor(t, "g-byfn");
    const x = await bind(t, "g-byfn", "g-by-fn");
    expect(await x.bound()).toMatchObject({ status: "COMPLETED" });
    expect(await region(t, "g-byfn")).toMatchObject({ bitstreamId: created.id });
    expect((await region(t, "g-byfn")).traits).toContain("CUSTOM_FPGA_FAKE_FUNCTION_NLB3");
  });
});
