/** ARQs for inline specs (os-acc): the content-named profile they stand for is made on first use. */
import { inlineProfileName } from "../../domain/device-profiles/inline.js";
import { validateGroups } from "../../domain/device-profiles/validation.js";
import type { ProfileGroup } from "../../domain/device-profiles/events.js";
import { arqCountFor } from "../../domain/device-profiles/arq-counts.js";
import type { ArqView } from "../../domain/arqs/view.js";
import { DomainError, type CommandContext } from "../../domain/shared/types.js";
import { createDeviceProfile } from "../device-profiles.js";
import { aggregates, type Streams } from "../streams.js";
import { createArqs, type CreationCheck } from "./create.js";
import type { ArqQuota } from "./quota.js";

/** `check`: the caller's own check of the groups, before anything is written (the profile they stand for included). */
export async function createArqsForGroups(s: Streams, newId: () => string, ctx: CommandContext, rawGroups: unknown, quota?: ArqQuota, check?: CreationCheck): Promise<ArqView[]> {
  const groups = validateGroups(rawGroups);
  check?.(groups, arqCountFor(groups, null));
  const name = inlineProfileName(groups);
  // The profile lives as long as its ARQs: the last one's deletion may remove it between our
  // look and our creation, which then finds it gone; make it again and try once more.
  for (let attempt = 1; ; attempt++) {
    await ensureInlineProfile(s, newId, ctx, name, groups);
    try {
      return await createArqs(s, newId, ctx, { deviceProfileName: name }, quota);
    } catch (err) {
      const gone = err instanceof DomainError && err.code === "NOT_FOUND" && err.field === "deviceProfileName";
      if (!gone || attempt >= 3) throw err;
    }
  }
}

async function ensureInlineProfile(s: Streams, newId: () => string, ctx: CommandContext, name: string, groups: ProfileGroup[]): Promise<void> {
  if ((await s.load(aggregates.profile, name)).state.status === "active") return;
  const description = "made for inline accelerator specs (os-acc); named after its groups";
  await createDeviceProfile(s, newId, ctx, { name, description, groups }, true).catch((err: unknown) => {
    // A concurrent caller made it first: same name, same groups.
    if (!(err instanceof DomainError && err.code === "CONFLICT" && err.field === "name")) throw err;
  });
}
