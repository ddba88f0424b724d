/**
 * Which host a deployable name belongs to. A deployable's resource provider uuid is uuid3 of its
 * name alone (ids.ts, as Cyborg), so a name another host uses would take that host's provider.
 * Cyborg's drivers name a deployable `<host>_<device>` (cyborg-reference 5.4, 5.6): the device is a
 * PCI address (here also `<address>_region0`, an Intel FPGA's region) or, for the fake driver,
 * `FakeDevice`; the fake driver writes every character outside [A-Za-z0-9_-] as "_", so host `a.b`
 * names its device `a_b_FakeDevice`.
 *
 * The rule: the host part ends at the last "_" before the name's first ":" (a PCI address has one,
 * a host name never does), or at its last "_" when it has no ":"; it must be the reporting host's
 * name, or that name as the fake driver writes it. A name then has one host part, and belongs to
 * one host, as long as host names cannot differ only in "." against "_" (`a.b` and `a_b` would share
 * `a_b_FakeDevice`): so a host whose name has "_" reports no deployables.
 */
import { DomainError } from "../shared/types.js";
import type { ReportedDevice } from "./report-validation.js";

const SEPARATOR = "_";

/** The host part of `<host>_<device>`, or null when the name has no such parts. */
export function hostPartOf(name: string): string | null {
  const colon = name.indexOf(":");
  const cut = name.lastIndexOf(SEPARATOR, colon < 0 ? name.length : colon);
  return cut <= 0 || cut === name.length - 1 ? null : name.slice(0, cut);
}

/** Cyborg's fake driver: every character outside [A-Za-z0-9_-] becomes "_" (Placement RP name rules). */
export function sanitizeRpName(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, SEPARATOR);
}

/** The host parts a host's deployable names may have: its name, and its name as the fake driver writes it. */
export function ownHostParts(hostname: string): string[] {
  const written = sanitizeRpName(hostname);
  return written === hostname ? [hostname] : [hostname, written];
}

/** Refuses a report naming a deployable that is not the host's own (BAD_USER_INPUT on the name). */
export function checkOwnDeployables(hostname: string, report: readonly ReportedDevice[]): void {
  const own = ownHostParts(hostname);
  report.forEach((device, i) => {
    for (const dep of device.deployables) {
      if (hostname.includes(SEPARATOR)) throw underscoreHost(hostname, dep.name);
      const part = hostPartOf(dep.name);
      if (part !== null && own.includes(part)) continue;
      throw notOwn(hostname, dep.name, part, `devices[${i}].deployables[${dep.index}].name`);
    }
  });
}

function notOwn(hostname: string, name: string, part: string | null, field: string): DomainError {
  const whose = part === null ? "is not named <host>_<device>" : `names host ${part}, not ${hostname}`;
  return new DomainError(
    "BAD_USER_INPUT",
    `deployable ${name} ${whose}: a host reports only its own deployables, named ${hostname}_<device> ` +
      `(e.g. ${hostname}_0000:af:00.0), since a resource provider's uuid comes from the deployable's name alone; ` +
      "check the agent's --hostname and how its drivers name deployables",
    field,
    { reason: "NOT_THIS_HOSTS_DEPLOYABLE", hostname, deployable: name },
  );
}

function underscoreHost(hostname: string, name: string): DomainError {
  return new DomainError(
    "BAD_USER_INPUT",
    `host ${hostname} cannot report deployables (${name}): "_" in a host name is ambiguous, since it separates host and ` +
      'device in a deployable\'s name and stands for "." in the fake driver\'s names (a.b and a_b both give a_b_FakeDevice); ' +
      'name the host with letters, digits, "." and "-" only (the agent\'s --hostname and its token\'s hostname)',
    "hostname",
    { reason: "HOSTNAME_WITH_UNDERSCORE", hostname, deployable: name },
  );
}
