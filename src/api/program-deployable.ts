/**
 * programDeployable for every front door (GraphQL, and the REST `PATCH /v2/deployables/{uuid}/program`):
 * the deployable's host from the read models, then the application's request (admin; refused
 * while the region has bound ARQs). Returns the request in flight, or null when the region already
 * runs the bitstream.
 */
import { getDeployables } from "../../projections/deployables/queries.js";
import type { ProgrammingRequestView } from "../app/programming.js";
import { DomainError, type CommandContext } from "../domain/shared/types.js";
import type { ApiServices } from "./services.js";

export async function programDeployable(
  services: Pick<ApiServices, "app" | "readStore">,
  ctx: CommandContext,
  deployableUuid: string,
  bitstreamId: string,
): Promise<ProgrammingRequestView | null> {
  const [deployable] = await getDeployables(services.readStore, [deployableUuid]);
  if (!deployable) throw new DomainError("NOT_FOUND", `Deployable ${deployableUuid} not found`, "uuid");
  return services.app.programDeployable(ctx, { hostname: deployable.hostname, deployableUuid, bitstreamId });
}
