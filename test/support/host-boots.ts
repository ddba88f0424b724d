/**
 * A host's history for retention tests: a profile first (the log's first event stays live), the
 * host with one FPGA, then `boots` boots, each an ARQ bound on it and then deleted (its handle
 * released). The host closes its books every 10 events.
 */
import { expect } from "vitest";
import { Application } from "../../src/app/application.js";
import { rpUuidFor } from "../../src/domain/inventory/ids.js";
import type { EventStore } from "../../src/infra/eventstore/port.js";
import { ADMIN, ctx, fpga } from "../app/support.js";

export const HOST = "compute1";
export const BOOKS = { maxEvents: 10, maxDays: 0 };
const RP = rpUuidFor(`${HOST}_0000:af:00.0`);
const agent = { ...ADMIN, principal: "agent:compute1" };
const nova = ctx();
const binder = { principal: "system:binder", correlationId: "b", causationId: "b", at: "2026-03-01T10:02:00.000Z" };

/** One boot on `app`: an ARQ bound on the host, then deleted; its uuid. */
export async function boot(app: Application, i: number): Promise<string> {
  const [arq] = await app.createArqs(nova, { deviceProfileName: "dp1" });
  await app.startBinds(nova, [{ arqUuid: arq!.uuid, hostname: HOST, deviceRpUuid: RP, instanceUuid: `vm-${i}` }]);
  expect(await app.allocateForArq(binder, arq!.uuid)).toMatchObject({ ok: true });
  await app.deleteArqs(nova, { arqUuids: [arq!.uuid] });
  return arq!.uuid;
}

/** The application that wrote it and the booted ARQs' uuids, in order. */
export async function bootHistory(store: EventStore, boots: number): Promise<{ app: Application; arqs: string[] }> {
  const app = new Application({ store, hostBooks: BOOKS });
  await app.createDeviceProfile(ADMIN, { name: "dp1", groups: [{ "resources:FPGA": "1" }] });
  await app.reportHostInventory(agent, HOST, [fpga(HOST, "af", 2)]);
  const arqs: string[] = [];
  for (let i = 0; i < boots; i++) arqs.push(await boot(app, i));
  return { app, arqs };
}
