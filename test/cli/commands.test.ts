/** The CLI loads only the command it runs: its table must name each command as the command names itself. */
import { describe, expect, it } from "vitest";
import { COMMANDS } from "../../src/cli/commands.js";

describe("the CLI's command table", () => {
  it("names each command as it is typed, each once", async () => {
    const names = await Promise.all(COMMANDS.map(async ([, load]) => (await load()).name()));
    expect(COMMANDS.map(([name]) => name)).toEqual(names);
    expect(new Set(names).size).toBe(names.length);
  });
});
