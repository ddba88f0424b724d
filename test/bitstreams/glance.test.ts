import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GlanceCatalogue } from "../../src/infra/bitstreams/glance.js";
import { startGlance } from "../support/glance.js";
import { catalogueContract, MAX_BYTES } from "./contract.js";

// Debian's glance-api: test/support/global-setup.ts makes sure it is installed.
catalogueContract(
  "Glance (Debian's glance-api: images with accel: properties)",
  async () => {
    const glance = await startGlance();
    return { catalogue: new GlanceCatalogue({ url: glance.url, maxBytes: MAX_BYTES }), close: () => glance.stop() };
  });

describe("Glance: bitstreams tagged instead of given properties", () => {
  let glance: Awaited<ReturnType<typeof startGlance>>;
  let catalogue: GlanceCatalogue;
  beforeAll(async () => {
    glance = await startGlance();
    catalogue = new GlanceCatalogue({ url: glance.url, maxBytes: MAX_BYTES });
  });
  afterAll(() => glance?.stop());

  /** An image made as an operator tags one by hand: metadata as `key=value` tags, content uploaded. */
  async function taggedImage(name: string, tags: string[], properties: Record<string, string> = {}): Promise<string> {
    const created = await fetch(`${glance.url}/v2/images`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name, disk_format: "raw", container_format: "bare", tags, ...properties }),
    });
    const { id } = (await created.json()) as { id: string };
    const put = await fetch(`${glance.url}/v2/images/${id}/file`, { method: "PUT", headers: { "content-type": "application/octet-stream" }, body: randomBytes(16) });
    expect(put.status).toBe(204);
    return id;
  }

  it("finds them by function id and function name, reads their metadata from the tags, and lists them", async () => {
    const id = await taggedImage("tagged.gbs", ["accel:function_id=fn-tagged", "accel:function_name=tagged", "accel:region_type=rt1", "other"]);
    const byProperty = await taggedImage("by-property.gbs", [], { "accel:function_id": "fn-tagged", "accel:function_name": "tagged" });
    expect((await catalogue.withFunction("fn-tagged")).map((b) => b.id).sort()).toEqual([id, byProperty].sort());
    expect((await catalogue.withFunctionName("tagged")).map((b) => b.id).sort()).toEqual([id, byProperty].sort());
    expect(await catalogue.get(id)).toMatchObject({ name: "tagged.gbs", functionId: "fn-tagged", functionName: "tagged", regionType: "rt1", vendor: null });
    expect((await catalogue.list()).map((b) => b.id)).toContain(id);
    expect((await catalogue.named("tagged")).map((b) => b.id)).toEqual([id]);
  });

  it("a property wins over a tag of the same key", async () => {
    const id = await taggedImage("both.gbs", ["accel:function_id=from-tag"], { "accel:function_id": "from-property" });
    expect((await catalogue.get(id))!.functionId).toBe("from-property");
    expect(await catalogue.withFunction("from-tag")).toEqual([]);
  });
});
