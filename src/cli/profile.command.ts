/**
 * `cyborg-es profile list|show|update|enable|disable|rename|migrate`: the device profile lifecycle
 * from the command line (admin token for changes). `migrate --file` applies a mapping of renamed
 * traits and resource classes, such as one shipped in `contrib/migrations/`, to every profile.
 */
import { readFile } from "node:fs/promises";
import { Command } from "commander";
import { callService, serviceClient, withService as serviceOptions } from "./service-options.js";
import { printTable } from "./table.js";

const FIELDS = "uuid name description groups version enabled createdAt updatedAt";

const withService = (cmd: Command) => serviceOptions(cmd, "any");
const client = (cmd: Command) => serviceClient(cmd, "any");

const print = (value: unknown) => console.log(JSON.stringify(value, null, 2));

async function readJson(file: string, what: string): Promise<unknown> {
  const text = await readFile(file, "utf8");
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`${file} is not JSON (${what}): ${(err as Error).message}`);
  }
}

export function profileCommand(): Command {
  const cmd = new Command("profile").description("device profiles: versions, enable/disable, rename, migrations");
  for (const sub of [listCommand(), showCommand(), updateCommand(), enabledCommand("enable"), enabledCommand("disable"), renameCommand(), migrateCommand()]) cmd.addCommand(sub);
  return cmd;
}

/** `profile list`. */
function listCommand(): Command {
  return withService(new Command("list"))
    .description("list the profiles (inline ones are never listed)")
    .option("--json", "print JSON instead of a table", false)
    .action(async (o: { json: boolean }, cmd: Command) => {
      const { deviceProfiles } = await callService<{ deviceProfiles: Array<Record<string, unknown>> }>(client(cmd), `{ deviceProfiles { ${FIELDS} } }`, {});
      if (o.json) return print(deviceProfiles);
      printTable(
        deviceProfiles.map(({ name, uuid, version, enabled, groups }) => ({ name, uuid, version, enabled, groups: (groups as unknown[]).length })),
        "no device profiles",
      );
    });
}

/** `profile show <name> [--version n]`. */
function showCommand(): Command {
  return withService(new Command("show"))
    .description("a profile as JSON, with its versions; --version: as that version was")
    .argument("<name>")
    .option("--version <n>", "a past version", (v) => Number.parseInt(v, 10))
    .action(async (name: string, o: { version?: number }, cmd: Command) => {
      const q = `query($name: String!, $version: Int) { deviceProfile(name: $name, version: $version) { ${FIELDS} versions { version createdAt migration } } }`;
      const { deviceProfile } = await callService<{ deviceProfile: unknown }>(client(cmd), q, { name, version: o.version ?? null });
      if (!deviceProfile) throw new Error(`no device profile ${name}${o.version ? ` at version ${o.version}` : ""}`);
      print(deviceProfile);
    });
}

/** `profile update <name>`: a new version. */
function updateCommand(): Command {
  return withService(new Command("update"))
    .description("a new version: new groups (a JSON file: the list of groups) and/or a new description")
    .argument("<name>")
    .option("--groups-file <file>", "JSON file holding the groups")
    .option("--description <text>", "the new description")
    .option("--expected-version <n>", "refuse unless the profile is at this version", (v) => Number.parseInt(v, 10))
    .action(async (name: string, o: { groupsFile?: string; description?: string; expectedVersion?: number }, cmd: Command) => {
      const input: Record<string, unknown> = { name, expectedVersion: o.expectedVersion ?? null };
      if (o.groupsFile) input.groups = await readJson(o.groupsFile, "the groups");
      if (o.description !== undefined) input.description = o.description;
      const q = `mutation($input: DeviceProfileUpdateInput!) { updateDeviceProfile(input: $input) { ${FIELDS} } }`;
      print((await callService<{ updateDeviceProfile: unknown }>(client(cmd), q, { input })).updateDeviceProfile);
    });
}

/** `profile enable|disable <name>`. */
function enabledCommand(verb: "enable" | "disable"): Command {
  const enabled = verb === "enable";
  return withService(new Command(verb))
    .description(enabled ? "let the profile make new ARQs again" : "refuse new ARQs from the profile (its ARQs are untouched)")
    .argument("<name>")
    .action(async (name: string, _o: unknown, cmd: Command) => {
      const q = `mutation($name: String!, $enabled: Boolean!) { setDeviceProfileEnabled(name: $name, enabled: $enabled) { name version enabled } }`;
      const { setDeviceProfileEnabled: p } = await callService<{ setDeviceProfileEnabled: { name: string; enabled: boolean } }>(client(cmd), q, { name, enabled });
      console.log(`${p.name}: ${p.enabled ? "enabled" : "disabled"}`);
    });
}

/** `profile rename <name> <new-name>`. */
function renameCommand(): Command {
  return withService(new Command("rename"))
    .description("rename a profile, keeping its uuid, versions and ARQs")
    .argument("<name>")
    .argument("<new-name>")
    .action(async (name: string, newName: string, _o: unknown, cmd: Command) => {
      const q = `mutation($name: String!, $newName: String!) { renameDeviceProfile(name: $name, newName: $newName) { uuid name version } }`;
      const { renameDeviceProfile: p } = await callService<{ renameDeviceProfile: { uuid: string; name: string } }>(client(cmd), q, { name, newName });
      console.log(`${name} is now ${p.name} (${p.uuid})`);
    });
}

/** `profile migrate --file F [--dry-run]`. */
function migrateCommand(): Command {
  return withService(new Command("migrate"))
    .description('rename traits and resource classes in every profile, a new version each: --file holds { "traits": {OLD: NEW}, "resourceClasses": {OLD: NEW} }')
    .requiredOption("--file <file>", "the mapping (JSON)")
    .option("--dry-run", "list what would change; change nothing", false)
    .action(async (o: { file: string; dryRun: boolean }, cmd: Command) => {
      const mapping = await readJson(o.file, "the mapping");
      const q = `mutation($mapping: JSON!, $dryRun: Boolean!) { migrateDeviceProfiles(mapping: $mapping, dryRun: $dryRun) { name fromVersion toVersion changes { groupIndex from to } } }`;
      const { migrateDeviceProfiles: done } = await callService<{ migrateDeviceProfiles: MigrationLine[] }>(client(cmd), q, { mapping, dryRun: o.dryRun });
      for (const p of done) {
        const to = p.toVersion === null ? "would be a new version" : `version ${p.fromVersion} -> ${p.toVersion}`;
        console.log(`${p.name}: ${to}: ${p.changes.map((c) => `group ${c.groupIndex} ${c.from} -> ${c.to}`).join(", ")}`);
      }
      console.log(`${done.length} profile${done.length === 1 ? "" : "s"} ${o.dryRun ? "would change (dry run: nothing changed)" : "migrated"}`);
    });
}

interface MigrationLine {
  name: string;
  fromVersion: number;
  toVersion: number | null;
  changes: Array<{ groupIndex: number; from: string; to: string }>;
}
