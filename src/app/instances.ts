/** Instance operations (pause, shelve, resize, ...): recorded on the instance's stream, and what they mean for its accelerators. */
import { operationEffect, type OperationEffect } from "../domain/instances/operations.js";
import type { CommandContext } from "../domain/shared/types.js";
import { deleteArqs } from "./arqs/release.js";
import { aggregates, type Streams } from "./streams.js";

export interface InstanceOperationResult {
  operation: string;
  effect: OperationEffect;
  /** The ARQs released (deleted) because of it. */
  released: string[];
}

/**
 * Records the operation with its effect (domain/instances/operations.ts; refused operations are
 * refused before anything is written), then releases the instance's accelerators when the effect
 * is release or move. Plugging again (move, plug) is the caller's next step, on the new host.
 */
export async function recordInstanceOperation(s: Streams, ctx: CommandContext, instanceUuid: string, operation: string): Promise<InstanceOperationResult> {
  const effect = operationEffect(operation);
  await s.handle(aggregates.instance, instanceUuid, { type: "RecordInstanceOperation", data: { instanceUuid, operation, at: ctx.at } }, ctx);
  const released = effect === "release" || effect === "move" ? await deleteArqs(s, ctx, { instanceUuid }) : [];
  return { operation, effect, released };
}
