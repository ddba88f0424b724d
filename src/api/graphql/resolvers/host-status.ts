import { unavailableReason } from "../../../domain/inventory/liveness.js";
import type { ApiServices } from "../../services.js";

/**
 * A host's status as GraphQL shows it: the application's, with Placement's side and why os-acc would
 * wait. The status is read from the log, ahead of the read models: it answers once they show what it
 * saw, so a client that reads the host's deployables next (its region's bitstream once programming is
 * over) sees at least as much.
 */
export async function hostStatusOf(services: Pick<ApiServices, "app" | "placement" | "catchUp">, hostname: string) {
  const s = await services.app.hostStatus(hostname);
  await services.catchUp();
  const placement = s.reported && services.placement ? await services.placement.hostSynced(hostname) : null;
  const { state, lastReportAt, silentForS } = s.liveness;
  const notReadyReason = !s.reported
    ? `the agent of host ${hostname} has not reported its inventory: is \`cyborg-es agent --hostname ${hostname}\` running with a token for this host?`
    : (unavailableReason(hostname, s.liveness, services.app.reportTimes.policy) ??
      (s.programmingInProgress > 0
        ? `the agent of host ${hostname} is still programming ${s.programmingInProgress} FPGA region(s): ask again once it is done (its region's programming shows the request)`
        : null) ??
      placement?.reason ??
      null);
  return { ...s, liveness: state, lastReportAt: lastReportAt === null ? null : new Date(lastReportAt), silentForS, placementSynced: placement?.synced ?? null, notReadyReason };
}
