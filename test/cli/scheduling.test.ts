/** `cyborg-es capacity`, `explain` and `place` against a running service, as a user runs them. */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestService, TOKENS, type TestService } from "../api/harness.js";
import * as op from "../api/operations.js";
import { buildCli, runCli, type BuiltCli } from "../support/cli.js";

vi.setConfig({ testTimeout: 120_000 });

let built: BuiltCli;
let svc: TestService;
let where: Record<string, string>;
const cli = (args: string[], token: string = TOKENS.admin.token) => runCli(built.cli, [...args, "--token", token], { env: { ...process.env, LOG_LEVEL: "silent", ...where } as Record<string, string> });

const region = (host: string, handles: number) => [
  {
    type: "FPGA",
    vendor: "0xABCD",
    model: "fake",
    controlPath: { type: "PCI", info: { domain: "0000", bus: "0c", device: "00", function: "0" } },
    deployables: [
      {
        name: `${host}_FakeDevice`,
        numAccelerators: handles,
        driverName: "fake",
        attributes: [{ key: "rc", value: "FPGA" }],
        attachHandles: Array.from({ length: handles }, (_, i) => ({ type: "TEST_PCI", info: { domain: "0000", bus: "0c", device: "01", function: String(i) } })),
      },
    ],
  },
];

beforeAll(async () => {
  built = await buildCli();
  svc = await startTestService();
  where = { PORT: new URL(svc.url).port, HOST: "127.0.0.1" };
  await svc.ok("admin", op.REPORT, { hostname: "c1", devices: region("c1", 2) });
  await svc.ok("admin", `mutation($p: DeviceProfileInput!) { createDeviceProfile(input: $p) { uuid } }`, { p: { name: "fpga", groups: [{ "resources:FPGA": "1" }] } });
  await svc.ok("admin", `mutation($p: DeviceProfileInput!) { createDeviceProfile(input: $p) { uuid } }`, { p: { name: "gpu", groups: [{ "resources:PGPU": "1" }] } });
}, 120_000);

afterAll(async () => {
  await svc?.close();
  await built?.remove();
});

describe("the placement commands", () => {
  it("capacity, explain and place", async () => {
    const cap = await cli(["capacity", "fpga", "--json"]);
    expect(JSON.parse(cap.stdout)).toEqual({ total: 2, hosts: [{ hostname: "c1", count: 2 }] });
    const what = await cli(["capacity", "fpga", "--without-host", "c1"]);
    expect(what.stdout).toContain("0 more fit");
    const ex = await cli(["explain", "gpu"]);
    expect(ex.stdout).toContain("0 of 1 host(s) fit now");
    expect(ex.stdout).toMatch(/c1\s+RESOURCE_CLASS/);
    // Placing binds: the compute service's step (its token), as createAndBindAcceleratorRequests.
    const placed = await cli(["place", "fpga", "--instance", "4a0c3a36-7c8e-4b9a-9c53-2f0e0b6a1d01"], TOKENS.service.token);
    expect(JSON.parse(placed.stdout)).toMatchObject({ hostname: "c1", alternatives: [0] });
  });

  it("explain --arq: the ARQ, its project's quota, and why no host takes its group", async () => {
    const [arq] = (await svc.ok("member", op.CREATE_ARQS, { name: "gpu" })).createAcceleratorRequests;
    const ex = await cli(["explain", "--arq", arq.uuid]);
    expect(ex.stdout).toContain(`ARQ ${arq.uuid} (gpu, project p1): INITIAL`);
    expect(ex.stdout).toMatch(/quota PGPU: 1 used of/);
    expect(ex.stdout).toMatch(/c1\s+RESOURCE_CLASS/);
    const both = await cli(["explain", "gpu", "--arq", arq.uuid]);
    expect(both.code).not.toBe(0);
    expect(both.stderr).toContain("one of them");
  });
});
