import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { TokenRegistry } from "../../src/api/auth/tokens.js";

describe("principals never carry a token", () => {
  const secret = "s3cret-token-0123456789";

  it("a token's principal is its name, or its roles and 8 hex digits of its SHA-256", () => {
    const r = new TokenRegistry([
      { token: secret, roles: ["service"], name: "nova" },
      { token: `${secret}-2`, roles: ["admin", "manager"] },
    ]);
    expect(r.authenticate(`Bearer ${secret}`)!.principal).toBe("nova");
    const anonymous = r.authenticate(`Bearer ${secret}-2`)!.principal;
    expect(anonymous).toMatch(/^admin\+manager:[0-9a-f]{8}$/);
    expect(anonymous).not.toContain(secret);
  });

  it("refuses a token whose name contains the token, without printing the token", () => {
    expect(() => new TokenRegistry([{ token: secret, roles: ["admin"], name: `admin ${secret}` }])).toThrow(/token entry 0: its name must not contain the token/);
    const dir = mkdtempSync(join(tmpdir(), "cyborg-es-tokens-"));
    const file = join(dir, "tokens.json");
    writeFileSync(file, JSON.stringify({ tokens: [{ token: secret, roles: ["admin"], name: secret }] }));
    let message = "";
    try {
      TokenRegistry.fromFile(file);
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(new RegExp(`AUTH_TOKENS_FILE ${file}: token entry 0: its name must not contain the token`));
    expect(message).not.toContain(secret);
    rmSync(dir, { recursive: true, force: true });
  });
});
