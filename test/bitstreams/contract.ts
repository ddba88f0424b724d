/** The catalogue contract: every BitstreamCatalogue adapter passes it (embedded.test.ts, glance.test.ts). */
import { createHash, randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { buffer } from "node:stream/consumers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BitstreamMetadata } from "../../src/domain/bitstreams/bitstream.js";
import type { BitstreamCatalogue } from "../../src/infra/bitstreams/port.js";
import { expectDomainRejection } from "../domain/decider-spec.js";

export const MAX_BYTES = 64 * 1024;
const ctx = { principal: "admin", correlationId: "c", causationId: "c", at: "2026-03-01T10:00:00.000Z" };
const meta = (over: Partial<BitstreamMetadata> = {}): BitstreamMetadata => ({
  name: "nlb0.gbs",
  functionId: "3AFB",
  functionName: "nlb0",
  regionType: "9926ab6d-6c92-5a68-aabc-a7d84c545738",
  vendor: "intel",
  ...over,
});
const digest = (algorithm: string, bytes: Buffer) => createHash(algorithm).update(bytes).digest("hex");

export function catalogueContract(name: string, make: () => Promise<{ catalogue: BitstreamCatalogue; close(): Promise<void> }>) {
  describe(`bitstream catalogue contract: ${name}`, () => {
    let catalogue: BitstreamCatalogue;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ catalogue, close } = await make());
    });
    afterAll(async () => close?.());

    it("stores a bitstream: its metadata, a checksum of its content, its size; found by id and listed", async () => {
      const bytes = randomBytes(5000);
      const b = await catalogue.add(ctx, meta(), Readable.from([bytes]));
      expect(b).toMatchObject({ ...meta(), size: 5000 });
      const [algorithm, hex] = b.checksum.split(":") as [string, string];
      expect(hex).toBe(digest(algorithm, bytes));
      expect(await catalogue.get(b.id)).toEqual(b);
      expect((await catalogue.list()).map((x) => x.id)).toContain(b.id);
      expect(Buffer.compare(await buffer((await catalogue.open(b.id))!), bytes)).toBe(0);
    });

    it("finds bitstreams by function id, exactly", async () => {
      const a = await catalogue.add(ctx, meta({ name: "a.gbs", functionId: "fn-a" }), Readable.from([randomBytes(10)]));
      await catalogue.add(ctx, meta({ name: "b.gbs", functionId: "fn-ab" }), Readable.from([randomBytes(10)]));
      expect((await catalogue.withFunction("fn-a")).map((b) => b.id)).toEqual([a.id]);
      expect(await catalogue.withFunction("fn-none")).toEqual([]);
    });

    it("finds bitstreams by function name, exactly, and by name with or without the type suffix", async () => {
      const a = await catalogue.add(ctx, meta({ name: "named-a.gbs", functionId: "fn-named-a", functionName: "named_a" }), Readable.from([randomBytes(10)]));
      const b = await catalogue.add(ctx, meta({ name: "named-ab.gbs", functionId: "fn-named-ab", functionName: "named_ab" }), Readable.from([randomBytes(10)]));
      expect((await catalogue.withFunctionName("named_a")).map((x) => x.id)).toEqual([a.id]);
      expect(await catalogue.withFunctionName("named_none")).toEqual([]);
      expect((await catalogue.named("named-a.gbs")).map((x) => x.id)).toEqual([a.id]);
      expect((await catalogue.named("named-ab")).map((x) => x.id)).toEqual([b.id]);
      expect(await catalogue.named("named-a.aocx")).toEqual([]);
      expect(await catalogue.named("named")).toEqual([]);
    });

    it("keeps optional metadata absent as null", async () => {
      const b = await catalogue.add(ctx, { name: "bare.bin", functionId: null, functionName: null, regionType: null, vendor: null }, Readable.from([Buffer.from("x")]));
      expect(await catalogue.get(b.id)).toMatchObject({ functionId: null, functionName: null, regionType: null, vendor: null });
    });

    it("answers null for what it does not hold", async () => {
      expect(await catalogue.get("0f000000-0000-4000-8000-00000000000f")).toBeNull();
      expect(await catalogue.get("not-a-uuid")).toBeNull();
      expect(await catalogue.open("0f000000-0000-4000-8000-00000000000f")).toBeNull();
    });

    it("refuses to remove a bitstream still in use, and removes it once nothing uses it", async () => {
      const b = await catalogue.add(ctx, meta({ name: "gone.gbs", functionId: "fn-gone" }), Readable.from([randomBytes(100)]));
      await expectDomainRejection(catalogue.remove(ctx, b.id, ["deployable compute1_FakeDevice runs it"]), "CONFLICT", "id", /in use/);
      expect(await catalogue.get(b.id)).not.toBeNull();
      await catalogue.remove(ctx, b.id, []);
      expect(await catalogue.get(b.id)).toBeNull();
      expect(await catalogue.open(b.id)).toBeNull();
      expect(await catalogue.withFunction("fn-gone")).toEqual([]);
      await expectDomainRejection(catalogue.remove(ctx, b.id, []), "NOT_FOUND", "id");
    });

    it("refuses empty content and content over its size limit, keeping nothing", async () => {
      await expectDomainRejection(catalogue.add(ctx, meta({ functionId: "fn-empty" }), Readable.from([])), "BAD_USER_INPUT", "content", /empty/);
      await expectDomainRejection(catalogue.add(ctx, meta({ functionId: "fn-big" }), Readable.from([randomBytes(MAX_BYTES + 1)])), "BAD_USER_INPUT", "content", /larger/);
      expect(await catalogue.withFunction("fn-empty")).toEqual([]);
      expect(await catalogue.withFunction("fn-big")).toEqual([]);
    });
  });
}
