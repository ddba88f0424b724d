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
  // The ARQs first, then the profile's record of them. Creators do not serialize on the profile
  // stream: the record is appended without an exact revision, and the stream's order decides. A
  // deletion or re-creation that landed first makes evolve ignore the record, and the ARQs are
  // deleted again; a deletion that comes later sees them (it appends with an exact revision).
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
    const after = await s.record(aggregates.profile, profile.name, state, {
      type: "CreateArqs",
      data: { name: profile.name, profileUuid: profile.uuid, groupIndex: input.groupIndex ?? null, arqUuids: ids, at: ctx.at },
    }, ctx);
    const now = after.state;
    const took = now.status === "active" && now.profile.uuid === profile.uuid && ids.every((id) => now.liveArqs.has(id));
    if (!took) throw new DomainError("NOT_FOUND", `Device Profile not found with name=${name} (it was deleted while the ARQs were being created)`, "deviceProfileName");
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
