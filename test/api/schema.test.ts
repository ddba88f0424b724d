import { readFileSync } from "node:fs";
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
});
