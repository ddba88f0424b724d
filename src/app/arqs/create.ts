/** Creating ARQs from a device profile (cyborg-reference 2.3). */
import type { ArqStreamState } from "../../domain/arqs/decider.js";
import { arqCountFor, planArqs } from "../../domain/arqs/plan.js";
import { DomainError, type CommandContext } from "../../domain/shared/types.js";
import { aggregates, type Streams } from "../streams.js";
import { toArqView, type ArqView } from "../views.js";
import { liveArq } from "./shared.js";

/** The most ARQs one creation may make. */
export const MAX_ARQS_PER_CREATE = 1000;

export async function createArqs(
  s: Streams,
  newId: () => string,
  ctx: CommandContext,
  input: { deviceProfileName: string; groupIndex?: number | null },
): Promise<ArqView[]> {
  const name = input.deviceProfileName;
  const { state } = typeof name === "string" && name.length > 0 ? await s.load(aggregates.profile, name) : { state: null };
  if (state?.status !== "active") throw new DomainError("NOT_FOUND", `Device Profile not found with name=${String(name)}`, "deviceProfileName");
  const profile = state.profile;
  const count = arqCountFor(profile.groups, input.groupIndex);
  if (count > MAX_ARQS_PER_CREATE) {
    throw new DomainError("BAD_USER_INPUT", `the profile asks for ${count} ARQs; at most ${MAX_ARQS_PER_CREATE} per request`, "groupIndex");
  }
  if (count === 0) return [];
  const ids = Array.from({ length: count }, () => newId());
  const plan = planArqs(profile.groups, input.groupIndex, ids);
  // The ARQs first, then the profile's record of them (with its expected revision, so a
  // concurrent delete or re-creation of the profile refuses it and the ARQs are deleted again).
  const created = await Promise.allSettled(
    plan.map((p) =>
      s.handle(aggregates.arq, p.arqUuid, {
        type: "CreateArq",
        data: {
          arqUuid: p.arqUuid,
          deviceProfileName: profile.name,
          deviceProfileUuid: profile.uuid,
          deviceProfileGroupId: p.groupId,
          group: p.group,
          projectId: ctx.projectId ?? null,
          at: ctx.at,
        },
      }, ctx),
    ),
  );
  try {
    const failed = created.find((r) => r.status === "rejected");
    if (failed) throw failed.reason;
    await s.handle(aggregates.profile, profile.name, {
      type: "CreateArqs",
      data: { name: profile.name, profileUuid: profile.uuid, groupIndex: input.groupIndex ?? null, arqUuids: ids, at: ctx.at },
    }, ctx);
  } catch (err) {
    await Promise.all(ids.map((id) => s.handle(aggregates.arq, id, { type: "DeleteArq", data: { arqUuid: id, at: ctx.at } }, ctx).catch(() => undefined)));
    throw err;
  }
  return created.map((r) => {
    const { state: st, revision } = (r as PromiseFulfilledResult<{ state: ArqStreamState; revision: number }>).value;
    return toArqView(liveArq(st)!, revision);
  });
}

export async function getArq(s: Streams, arqUuid: string): Promise<ArqView | null> {
  const { state, revision } = await s.load(aggregates.arq, arqUuid);
  const arq = liveArq(state);
  return arq ? toArqView(arq, revision) : null;
}
