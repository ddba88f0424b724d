/**
 * The read store lost under load: readers and writers run against the service (read models on
 * Redis) while Redis is flushed (FLUSHALL) or restarted empty, and every answer is judged as
 * test/api/read-store-loss.test.ts judges it (read-store-answers.ts): whole, or UNAVAILABLE with
 * 503 and Retry-After, never wrong. Readers ask for the profiles and devices (GraphQL and REST)
 * and for ARQs created earlier; writers create an ARQ and read it back at once (read-your-writes).
 * A creation acknowledged must still be there once the store has recovered. A round ends when
 * every kind of answer is whole again and /readyz says ready.
 */
import { fakeHost } from "../fake-host.js";
import { allArqs } from "./kill9-rounds.js";
import { judgeGraphql, judgeRest, type GraphqlBody, type Verdict } from "./read-store-answers.js";
import { ROLE_TOKENS } from "./tokens.js";
import { gql, httpRequest, postGraphql } from "./wire.js";

export interface LossTruth {
  profiles: string[];
  hosts: number;
}

export interface LossRound {
  loss: string;
  answers: Record<Verdict, number>;
  /** Whole answers to requests sent after the loss (the proof of recovery). */
  wholeAfterLoss: number;
  acknowledgedCreates: number;
  /** Acknowledged creations missing once the store had recovered (counted in wrongAnswers too). */
  lostCreates: number;
  wrongAnswers: number;
  recovered: boolean;
  /** The first wrong answers, for a failure message. */
  samples: string[];
}

export interface LossOptions {
  url: string;
  truth: LossTruth;
  /** What loses the store: FLUSHALL, a restart of redis-server without its data. */
  loss: { name: string; run: () => Promise<void> };
  /** Clients, spread over the four kinds of request (at least 4). */
  clients?: number;
  /** Whole answers each kind must give after the loss before the round ends. */
  wholeAfterEach?: number;
  /** How long the store may take to recover (generous: a loaded machine is slow). */
  recoverWithinMs?: number;
}

const KINDS = ["graphql", "rest", "arq", "create"] as const;
type Kind = (typeof KINDS)[number];
const PROFILE_QUERY = `{ deviceProfiles { name } devices { totalCount } }`;
const ARQ_QUERY = `query($u: ID!) { acceleratorRequest(uuid: $u) { uuid state } }`;
const CREATE = `mutation($n: String!) { createAcceleratorRequests(deviceProfileName: $n) { uuid state } }`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Two profiles and three hosts of one device each: what the readers expect to see whole. */
export async function prepareLossTruth(url: string): Promise<LossTruth> {
  const profiles = ["loss-a", "loss-b"];
  for (const name of profiles) {
    await gql(url, "admin", `mutation($p: DeviceProfileInput!) { createDeviceProfile(input: $p) { uuid } }`, { p: { name, groups: [{ "resources:FPGA": "1" }] } });
  }
  const hosts = 3;
  for (let h = 0; h < hosts; h++) {
    await gql(url, "admin", `mutation($h: String!, $d: [DriverDeviceInput!]!) { reportHostInventory(hostname: $h, devices: $d) { revision } }`, { h: `loss-${h}`, d: fakeHost(`loss-${h}`, 2) });
  }
  return { profiles, hosts };
}

export async function lossUnderLoad(opts: LossOptions): Promise<LossRound> {
  const { url, truth } = opts;
  const origin = new URL(url).origin;
  const answers: Record<Verdict, number> = { whole: 0, unavailable: 0, wrong: 0 };
  const wholeAfter: Record<Kind, number> = { graphql: 0, rest: 0, arq: 0, create: 0 };
  const samples: string[] = [];
  const acknowledged: string[] = [];
  const need = opts.wholeAfterEach ?? 20;
  let lossDone = false;
  let stop = false;

  const count = (kind: Kind, sentAfterLoss: boolean, v: Verdict, what: () => string) => {
    answers[v]++;
    if (v === "whole" && sentAfterLoss) wholeAfter[kind]++;
    if (v === "wrong" && samples.length < 10) samples.push(`${opts.loss.name} ${kind}: ${what()}`);
  };
  const graphqlAnswer = async (who: "admin" | "service", query: string, variables: Record<string, unknown>) => {
    const r = await postGraphql(url, who, { query, variables });
    return { status: r.status, headers: r.headers, body: JSON.parse(r.text) as GraphqlBody };
  };
  const sameNames = (names: Array<{ name: string }>) => names.map((p) => p.name).sort().join() === [...truth.profiles].sort().join();

  const ask: Record<Kind, (afterLoss: boolean) => Promise<void>> = {
    async graphql(afterLoss) {
      const { status, headers, body } = await graphqlAnswer("admin", PROFILE_QUERY, {});
      const v = judgeGraphql(status, headers, body, (d) => sameNames(d.deviceProfiles) && d.devices.totalCount === truth.hosts);
      count("graphql", afterLoss, v, () => `${status} ${JSON.stringify(body).slice(0, 300)}`);
    },
    async rest(afterLoss) {
      const r = await httpRequest(`${origin}/v2/device_profiles`, { method: "GET", headers: { "x-auth-token": ROLE_TOKENS.admin.token } });
      const v = judgeRest(r.status, r.headers, JSON.parse(r.text), (b) => sameNames(b.device_profiles));
      count("rest", afterLoss, v, () => `${r.status} ${r.text.slice(0, 300)}`);
    },
    async arq(afterLoss) {
      if (acknowledged.length === 0) return ask.graphql(afterLoss);
      const u = acknowledged[Math.floor(Math.random() * acknowledged.length)]!;
      await readBack("arq", u, afterLoss);
    },
    async create(afterLoss) {
      const { status, headers, body } = await graphqlAnswer("service", CREATE, { n: truth.profiles[0] });
      const made = body.data?.createAcceleratorRequests?.[0] as { uuid: string; state: string } | undefined;
      if (!body.errors && made) acknowledged.push(made.uuid);
      const v = judgeGraphql(status, headers, body, (d) => d.createAcceleratorRequests.length === 1 && made?.state === "INITIAL");
      // A refused creation is not counted as whole: only the read-back proves the store recovered.
      if (v !== "whole") count("create", afterLoss, v, () => `${status} ${JSON.stringify(body).slice(0, 300)}`);
      else await readBack("create", made!.uuid, afterLoss);
    },
  };
  /** An acknowledged ARQ read back: itself, INITIAL, or UNAVAILABLE; never missing. */
  const readBack = async (kind: Kind, u: string, afterLoss: boolean) => {
    const { status, headers, body } = await graphqlAnswer("admin", ARQ_QUERY, { u });
    const v = judgeGraphql(status, headers, body, (d) => d.acceleratorRequest?.uuid === u && d.acceleratorRequest.state === "INITIAL");
    count(kind, afterLoss, v, () => `ARQ ${u} (acknowledged) read back: ${status} ${JSON.stringify(body).slice(0, 300)}`);
  };

  const client = async (kind: Kind) => {
    while (!stop) {
      const afterLoss = lossDone;
      try {
        await ask[kind](afterLoss);
      } catch (err) {
        count(kind, afterLoss, "wrong", () => `no answer: ${(err as Error).message}`);
        await sleep(100);
      }
    }
  };

  const clients = Math.max(KINDS.length, opts.clients ?? KINDS.length);
  const running = Array.from({ length: clients }, (_, i) => client(KINDS[i % KINDS.length]!));
  const deadline = Date.now() + (opts.recoverWithinMs ?? 120_000);
  let recovered = false;
  try {
    // The store answers whole before it is lost (a store that never did proves nothing).
    while (answers.whole < clients * 2 && Date.now() < deadline) await sleep(20);
    if (answers.whole < clients * 2) throw new Error(`no whole answers before the loss: ${JSON.stringify(answers)} ${samples.join("\n")}`);
    await opts.loss.run();
    lossDone = true;
    while (!KINDS.every((k) => wholeAfter[k] >= need) && Date.now() < deadline) await sleep(50);
    recovered = KINDS.every((k) => wholeAfter[k] >= need);
  } finally {
    stop = true;
    await Promise.all(running);
  }
  recovered &&= await readyBy(origin, deadline);
  const lost = recovered ? await missing(url, acknowledged) : [];
  samples.push(...lost.slice(0, 10).map((u) => `${opts.loss.name}: ARQ ${u} was acknowledged and is gone`));
  return {
    loss: opts.loss.name,
    answers,
    wholeAfterLoss: Object.values(wholeAfter).reduce((a, b) => a + b, 0),
    acknowledgedCreates: acknowledged.length,
    lostCreates: lost.length,
    wrongAnswers: answers.wrong + lost.length,
    recovered,
    samples,
  };
}

async function readyBy(origin: string, deadline: number): Promise<boolean> {
  for (;;) {
    if (await fetch(`${origin}/readyz`).then((r) => r.ok, () => false)) return true;
    if (Date.now() > deadline) return false;
    await sleep(100);
  }
}

/** The acknowledged ARQs the service does not show. */
async function missing(url: string, acknowledged: string[]): Promise<string[]> {
  const present = new Set((await allArqs(url)).map((a) => a.uuid));
  return acknowledged.filter((u) => !present.has(u));
}
