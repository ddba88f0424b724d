/** What the FPGA end-to-end tests share: tokens per host, the agent as a process, binding, reading a region. */
import { randomUUID } from "node:crypto";
import { TokenRegistry, type Role } from "../../../src/api/auth/tokens.js";
import { rpUuidFor } from "../../../src/domain/inventory/ids.js";
import { collect, TOKENS, type TestService } from "../../api/harness.js";
import { BIND, BOUND, CREATE_ARQS, type BoundEvent } from "../../api/operations.js";
import { buildCli, type BuiltCli } from "../../support/cli-build.js";
import { startAgent, type AgentProcess } from "./agent-process.js";

export const UPLOAD = `mutation($input: BitstreamInput!) { uploadBitstream(input: $input) { id checksum } }`;
const DEPLOYABLE = `query($host: String!) { deployables(filter: { hostname: $host }) { nodes { uuid bitstreamId traits
  programming { requestId } lastProgramming { outcome reason command durationMs } } } }`;
const HISTORY = `query($stream: String!) { streamHistory(stream: $stream, first: 1000) { type data metadata } }`;

export const agentToken = (host: string) => `agent-token-${host}-0123456789`;

export function fpgaE2e(hosts: readonly string[]) {
  let cli: BuiltCli | undefined;
  const agents: AgentProcess[] = [];
  return {
    /** The harness's tokens, and an agent token per host. */
    tokens: () =>
      new TokenRegistry([
        ...Object.entries(TOKENS).map(([name, t]) => ({ name, ...t })),
        ...hosts.map((h) => ({ name: `agent-${h}`, token: agentToken(h), roles: ["agent"] as Role[], projectId: null, hostname: h })),
      ] as never),
    async build() {
      cli = await buildCli();
    },
    /** The built command line (after build()). */
    get cli(): BuiltCli {
      return cli!;
    },
    async stop() {
      for (const a of agents) await a.stop();
      await cli?.remove();
    },
    /** The agent of `host` (fake driver, region type r1), running and with its first report in. */
    async agentFor(t: TestService, host: string, extra: string[] = []): Promise<AgentProcess> {
      const args = ["--url", t.url, "--token", agentToken(host), "--hostname", host, "--drivers", "fake", "--interval", "1", "--fake-region-type", "r1", ...extra];
      const agent = await startAgent(cli!, args);
      agents.push(agent);
      await agent.waitFor((l) => l.msg === "listening for agent requests", "that it listens for agent requests");
      await agent.waitFor((l) => l.msg === "inventory changed", "its first report");
      return agent;
    },
  };
}

/** Binds one ARQ of the profile on the host's fake region; `bound()` resolves with its accelerator-request-bound event. */
export async function bind(t: TestService, host: string, profile: string) {
  const [arq] = (await t.ok("service", CREATE_ARQS, { name: profile })).createAcceleratorRequests;
  const events = collect<BoundEvent>(t.ws("service"), BOUND, { arqs: [arq.uuid] });
  const binding = { arqUuid: arq.uuid, hostname: host, deviceRpUuid: rpUuidFor(`${host}_FakeDevice`), instanceUuid: randomUUID() };
  const [started] = (await t.ok("service", BIND, { bindings: [binding] })).bindAcceleratorRequests;
  return { arq: arq.uuid as string, started: started.state as string, bound: async () => (await events.next(1, 30_000))[0]!.acceleratorRequestBound };
}

export const region = async (t: TestService, host: string) => (await t.ok("admin", DEPLOYABLE, { host })).deployables.nodes[0];

export const history = async (t: TestService, host: string) =>
  (await t.ok("admin", HISTORY, { stream: `host-${host}` })).streamHistory as Array<{ type: string; data: Record<string, any>; metadata: Record<string, any> }>;

export const requests = async (t: TestService, host: string) => (await history(t, host)).filter((e) => e.type === "RegionProgrammingRequested");
