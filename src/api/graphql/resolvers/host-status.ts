import { unavailableReason } from "../../../domain/inventory/liveness.js";
import type { ApiServices } from "../../services.js";

/**
 * The hosts' statuses, in the order named. They are read from the log, ahead of the read models: the
 * answer waits (once) until the models show what was read, so a client that reads a host's
 * deployables next (its region's bitstream once programming is over) sees at least as much.
 */
export async function hostStatusesOf(services: Pick<ApiServices, "app" | "placement" | "catchUp">, hostnames: readonly string[]) {
  const statuses = await Promise.all(hostnames.map((h) => hostStatusOf(services, h)));
  await services.catchUp();
  return statuses;
}

/** A host's status as GraphQL shows it: the application's, with Placement's side and why os-acc would wait. */
async function hostStatusOf(services: Pick<ApiServices, "app" | "placement">, hostname: string) {
  const s = await services.app.hostStatus(hostname);
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
