/**
 * Idempotency keys at the application: a retry after a lost answer gets the first answer and writes
 * nothing; a key names one request; a refused command leaves nothing behind; a retry after a crash
 * between the claim and the answer converges on what the first attempt wrote.
 */
import { describe, expect, it } from "vitest";
import type { Application } from "../../src/app/application.js";
import type { CommandContext } from "../../src/domain/shared/types.js";
import { ADMIN, ctx, fpga, setup } from "./support.js";

const TTL = 60_000;
const keyed = (key: string, request: unknown) => ({ key, operation: "createAcceleratorRequests", request, ttlMs: TTL });

async function withProfile() {
  const s = setup();
  await s.app.createDeviceProfile(ADMIN, { name: "two", groups: [{ "resources:FPGA": "1" }, { "resources:FPGA": "1" }] });
  await s.app.reportHostInventory(ADMIN, "compute1", [fpga("compute1", "5e", 4)]);
  return s;
}

const create = (app: Application, c: CommandContext) => app.createArqs(c, { deviceProfileName: "two" });
/** The ARQs that exist now, from the log: created and not deleted. */
async function liveArqs(s: ReturnType<typeof setup>): Promise<string[]> {
  const live = new Set<string>();
  for (const e of await s.store.readAll()) {
    const uuid = (e.data as { arqUuid?: string }).arqUuid!;
    if (e.type === "ArqCreated") live.add(uuid);
    if (e.type === "ArqDeleted") live.delete(uuid);
  }
  return [...live].sort();
}
const eventCount = async (s: ReturnType<typeof setup>) => (await s.store.readAll()).length;

describe("idempotency keys", () => {
  it("answers a retry with the first answer and writes nothing", async () => {
    const s = await withProfile();
    const first = await s.app.idempotent(ctx(), keyed("k-1", { name: "two" }), create);
    expect(first.replayed).toBe(false);
    expect(first.answer).toHaveLength(2);
    const before = await eventCount(s);
    const again = await s.app.idempotent(ctx({ at: "2026-03-01T10:01:30.000Z" }), keyed("k-1", { name: "two" }), create);
    expect(again.replayed).toBe(true);
    expect(again.answer.map((a) => a.uuid)).toEqual(first.answer.map((a) => a.uuid));
    expect(await eventCount(s)).toBe(before);
    expect(await liveArqs(s)).toEqual(first.answer.map((a) => a.uuid).sort());
  });

  it("refuses the key for another request while it lives, and allows it after it expired", async () => {
    const s = await withProfile();
    await s.app.idempotent(ctx(), keyed("k-2", { name: "two" }), create);
    const other = s.app.idempotent(ctx(), keyed("k-2", { name: "two", group: 1 }), create);
    await expect(other).rejects.toMatchObject({ code: "CONFLICT", field: "idempotencyKey", message: expect.stringMatching(/another request.*new key/) });
    const later = ctx({ at: new Date(Date.parse(ctx().at) + TTL + 1).toISOString() });
    const afterExpiry = await s.app.idempotent(later, keyed("k-2", { name: "two", group: 1 }), create);
    expect(afterExpiry.replayed).toBe(false);
    expect(await liveArqs(s)).toHaveLength(4);
  });

  it("keeps keys per principal: another caller's same key is another request", async () => {
    const s = await withProfile();
    const a = await s.app.idempotent(ctx(), keyed("shared", { name: "two" }), create);
    const b = await s.app.idempotent(ctx({ principal: "other" }), keyed("shared", { name: "two" }), create);
    expect(b.replayed).toBe(false);
    expect(b.answer.map((x) => x.uuid)).not.toEqual(a.answer.map((x) => x.uuid));
  });

  it("leaves nothing behind when the command is refused before it writes, not even the claim", async () => {
    const s = await withProfile();
    const before = await eventCount(s);
    const missing = (app: Application, c: CommandContext) => app.createArqs(c, { deviceProfileName: "nope" });
    await expect(s.app.idempotent(ctx(), keyed("k-3", { name: "nope" }), missing)).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect(await eventCount(s)).toBe(before);
    // The key is free: another request may use it.
    expect((await s.app.idempotent(ctx(), keyed("k-3", { name: "two" }), create)).answer).toHaveLength(2);
  });

  it("refuses a key that is not 1 to 255 printable characters", async () => {
    const s = await withProfile();
    for (const key of ["", "has space", "x".repeat(256)]) {
      await expect(s.app.idempotent(ctx(), keyed(key, {}), create)).rejects.toMatchObject({ code: "BAD_USER_INPUT", field: "idempotencyKey" });
    }
  });

  it("converges after a crash between the first write and the answer: the same ARQs, none more", async () => {
    const s = await withProfile();
    const crash = new Error("the process died before it answered");
    let made: string[] = [];
    await expect(
      s.app.idempotent(ctx(), keyed("k-4", { name: "two" }), async (app, c) => {
        made = (await create(app, c)).map((a) => a.uuid);
        throw crash;
      }),
    ).rejects.toBe(crash);
    expect(made).toHaveLength(2);
    const retry = await s.app.idempotent(ctx(), keyed("k-4", { name: "two" }), create);
    expect(retry.replayed).toBe(false);
    expect(retry.answer.map((a) => a.uuid)).toEqual(made);
    expect(await liveArqs(s)).toEqual([...made].sort());
    // Now answered: a third attempt replays.
    expect((await s.app.idempotent(ctx(), keyed("k-4", { name: "two" }), create)).replayed).toBe(true);
  });

  it("converges a keyed delete after a crash: what the first attempt deleted counts as deleted", async () => {
    const s = await withProfile();
    const uuids = (await create(s.app, ctx())).map((a) => a.uuid);
    const del = (app: Application, c: CommandContext) => app.deleteArqs(c, { arqUuids: uuids });
    await expect(
      s.app.idempotent(ctx(), { ...keyed("k-5", { uuids }), operation: "deleteAcceleratorRequests" }, async (app, c) => {
        await app.deleteArqs(c, { arqUuids: [uuids[0]!] });
        throw new Error("crash");
      }),
    ).rejects.toThrow("crash");
    const retry = await s.app.idempotent(ctx(), { ...keyed("k-5", { uuids }), operation: "deleteAcceleratorRequests" }, del);
    expect(retry.answer).toEqual(uuids);
    expect(await liveArqs(s)).toEqual([]);
    // Without a key, deleting what is gone is still NOT_FOUND.
    await expect(del(s.app, ctx())).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("converges a keyed device profile creation after a crash", async () => {
    const s = setup();
    const input = { name: "p", groups: [{ "resources:FPGA": "1" }] };
    const req = { key: "k-6", operation: "createDeviceProfile", request: input, ttlMs: TTL };
    let uuid = "";
    await expect(
      s.app.idempotent(ADMIN, req, async (app, c) => {
        uuid = (await app.createDeviceProfile(c, input)).uuid;
        throw new Error("crash");
      }),
    ).rejects.toThrow("crash");
    const retry = await s.app.idempotent(ADMIN, req, (app, c) => app.createDeviceProfile(c, input));
    expect(retry.answer.uuid).toBe(uuid);
    // Without the key, the name is taken.
    await expect(s.app.createDeviceProfile(ADMIN, input)).rejects.toMatchObject({ code: "CONFLICT", field: "name" });
  });
});
