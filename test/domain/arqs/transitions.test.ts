/** Every cell of cyborg-reference 2.2's matrix, through the decider. */
import { describe, expect, it } from "vitest";
import { arqDecider, type ArqCommand } from "../../../src/domain/arqs/decider.js";
import { ARQ_TRANSITIONS, canTransition } from "../../../src/domain/arqs/transitions.js";
import { deciderSpec } from "../decider-spec.js";
import { commands, HISTORY } from "./fixtures.js";

const spec = deciderSpec(arqDecider);
type From = keyof typeof HISTORY;
type Outcome = string | "refused" | "no-op";

/** target -> source -> expected: the event type, "refused" (CONFLICT) or "no-op" (no event). */
const MATRIX: Array<{ target: string; command: () => ArqCommand; cells: Record<From, Outcome> }> = [
  {
    target: "BIND_STARTED (bind to a new host/RP/instance)",
    command: () => commands.startBind(),
    cells: { INITIAL: "ArqBindStarted", UNBOUND: "ArqBindStarted", BIND_STARTED: "refused", BOUND: "refused", BIND_FAILED: "refused" },
  },
  {
    target: "BOUND (the allocated handle)",
    command: () => commands.complete(),
    // BOUND -> BOUND with the same handle is the target-equals-current no-op.
    cells: { BIND_STARTED: "ArqBound", INITIAL: "refused", UNBOUND: "refused", BIND_FAILED: "refused", BOUND: "no-op" },
  },
  {
    target: "UNBOUND (unbind bypasses the matrix; nothing to undo in INITIAL/UNBOUND)",
    command: () => commands.unbind(),
    cells: { BIND_STARTED: "ArqUnbound", BOUND: "ArqUnbound", BIND_FAILED: "ArqUnbound", INITIAL: "no-op", UNBOUND: "no-op" },
  },
  {
    target: "BIND_FAILED",
    command: () => commands.fail(),
    cells: { BIND_STARTED: "ArqBindFailed", BOUND: "ArqBindFailed", BIND_FAILED: "no-op", INITIAL: "refused", UNBOUND: "refused" },
  },
  {
    target: "DELETING (delete)",
    command: () => commands.delete(),
    cells: { INITIAL: "ArqDeleted", BIND_STARTED: "ArqDeleted", BOUND: "ArqDeleted", UNBOUND: "ArqDeleted", BIND_FAILED: "ArqDeleted" },
  },
];

describe("ARQ transition matrix (cyborg-reference 2.2)", () => {
  it("the table is Cyborg's ARQ_STATES_TRANSFORM_MATRIX", () => {
    expect(ARQ_TRANSITIONS).toEqual({
      BIND_STARTED: ["INITIAL", "UNBOUND"],
      BOUND: ["BIND_STARTED"],
      UNBOUND: ["INITIAL", "BIND_STARTED", "BOUND", "BIND_FAILED"],
      BIND_FAILED: ["BIND_STARTED", "BOUND"],
      DELETING: ["INITIAL", "BIND_STARTED", "BOUND", "UNBOUND", "BIND_FAILED"],
    });
    expect(canTransition("UNBOUND", "BIND_STARTED")).toBe(true);
    expect(canTransition("BIND_FAILED", "BIND_STARTED")).toBe(false);
  });

  for (const row of MATRIX) {
    describe(`to ${row.target}`, () => {
      for (const [from, outcome] of Object.entries(row.cells) as Array<[From, Outcome]>) {
        it(`from ${from}: ${outcome}`, () => {
          const when = spec.given(HISTORY[from]).when(row.command());
          if (outcome === "refused") when.thenThrows("CONFLICT", "arqUuid", new RegExp(`Bad state: ${from} for ARQ`));
          else if (outcome === "no-op") when.thenNothing();
          else expect(when.events().map((e) => e.type)).toEqual([outcome]);
        });
      }
    });
  }

  it("every refused cell is outside the matrix, every applied one inside", () => {
    const targets = { BIND_STARTED: 0, BOUND: 1, BIND_FAILED: 3, DELETING: 4 } as const;
    for (const [target, i] of Object.entries(targets) as Array<[keyof typeof targets, number]>) {
      for (const [from, outcome] of Object.entries(MATRIX[i]!.cells) as Array<[From, Outcome]>) {
        if (outcome === "refused") expect(canTransition(from, target)).toBe(false);
        else if (outcome !== "no-op") expect(canTransition(from, target)).toBe(true);
      }
    }
  });
});
