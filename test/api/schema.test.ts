import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { printedSchema } from "../../src/api/graphql/schema.js";

describe("schema/schema.graphql", () => {
  it("is the schema the code builds (regenerate: npm run schema)", async () => {
    const checkedIn = readFileSync(new URL("../../schema/schema.graphql", import.meta.url), "utf8");
    expect(checkedIn).toBe(await printedSchema());
  });

  it("holds every name the contract fixes", async () => {
    const sdl = await printedSchema();
    const names = [
      "enum DeviceType", "enum DeviceStatus", "enum AttachHandleType", "enum ArqState", "enum BindStatus",
      "type Device ", "type ControlPathId", "type Deployable ", "type Attribute", "type AttachHandle", "type DeviceProfile",
      "type AcceleratorRequest ", "type ArqBindEvent", "type ResourceProvider", "type RecordedEvent ", "type InventoryReport",
      "type DeviceConnection", "type DeployableConnection", "type AcceleratorRequestConnection", "type RecordedEventConnection",
      "input DriverDeviceInput", "input ControlPathInput", "input DriverDeployableInput", "input AttributeInput",
      "input AttachHandleInput", "input DeviceProfileInput", "input ArqBindingInput", "input DeviceFilter",
      "input DeployableFilter", "input ArqFilter",
      "devices(", "device(", "deployables(", "deployable(", "deviceProfiles(", "deviceProfile(", "acceleratorRequests(",
      "acceleratorRequest(", "resourceProviders(", "streamHistory(", "events(",
      "reportHostInventory(", "createDeviceProfile(", "deleteDeviceProfiles(", "setDeviceStatus(",
      "createAcceleratorRequests(", "bindAcceleratorRequests(", "unbindAcceleratorRequests(", "deleteAcceleratorRequests(",
      "acceleratorRequestBound(",
    ];
    for (const n of names) expect(sdl, n).toContain(n);
  });

  it("names each GraphQL type in its decorator, not by its class: the server's bundle renames classes that share a name", () => {
    const unnamed: string[] = [];
    const walk = (dir: string): void => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, e.name);
        if (e.isDirectory()) walk(path);
        else if (path.endsWith(".ts")) {
          const lines = readFileSync(path, "utf8").split("\n");
          lines.forEach((line, i) => {
            if (/@(ObjectType|InputType|InterfaceType)\((?!\s*["'`])/.test(line)) unnamed.push(`${path}:${i + 1}: ${line.trim()}`);
          });
        }
      }
    };
    walk("src/api/graphql");
    expect(unnamed, "give each of these its GraphQL name as the decorator's first argument").toEqual([]);
  });
});
