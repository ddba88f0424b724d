import { useState, type FormEvent } from "react";
import { ErrorNote, type Session } from "../lib/session";
import { ApiError, gql } from "../lib/api";
import { usePolled } from "../lib/hooks";
import { Link } from "../lib/router";

interface Profile {
  uuid: string;
  name: string;
  description: string | null;
  groups: Array<Record<string, string>>;
  createdAt: string;
  version: number;
  enabled: boolean;
}
type Row = { key: string; value: string };

const PROFILES = `{ deviceProfiles { uuid name description groups createdAt version enabled } }`;
const SET_ENABLED = `mutation($name: String!, $enabled: Boolean!) { setDeviceProfileEnabled(name: $name, enabled: $enabled) { name enabled } }`;
const CREATE = `mutation($input: DeviceProfileInput!) { createDeviceProfile(input: $input) { uuid name } }`;
const DELETE = `mutation($names: [String!]) { deleteDeviceProfiles(names: $names) }`;

export function ProfilesPage({ session }: { session: Session }) {
  const { data, error, reload } = usePolled(() => gql<{ deviceProfiles: Profile[] }>(session.token, PROFILES).then((d) => d.deviceProfiles), 10000, [session.token]);
  const [deleteError, setDeleteError] = useState<unknown>();
  const canWrite = session.can("device_profile:write");
  const setEnabled = async (name: string, enabled: boolean) => {
    setDeleteError(undefined);
    try {
      await gql(session.token, SET_ENABLED, { name, enabled });
      await reload();
    } catch (err) {
      setDeleteError(err);
    }
  };
  const remove = async (name: string) => {
    if (!confirm(`Delete device profile ${name}?`)) return;
    setDeleteError(undefined);
    try {
      await gql(session.token, DELETE, { names: [name] });
      await reload();
    } catch (err) {
      setDeleteError(err);
    }
  };
  return (
    <section aria-labelledby="profiles-title">
      <h1 id="profiles-title">Device profiles</h1>
      <ErrorNote error={error ?? deleteError} />
      <table>
        <caption className="sr-only">Device profiles in creation order</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Version</th>
            <th scope="col">State</th>
            <th scope="col">Groups</th>
            <th scope="col">Description</th>
            <th scope="col">Created</th>
            {canWrite ? <th scope="col">Actions</th> : null}
          </tr>
        </thead>
        <tbody>
          {data?.map((p) => (
            <tr key={p.uuid}>
              <th scope="row">{p.name}</th>
              <td>{p.version}</td>
              <td>{p.enabled ? "enabled" : "disabled (no new ARQs)"}</td>
              <td>
                {p.groups.map((g, i) => (
                  <div key={i} className="mono">
                    {Object.entries(g)
                      .map(([k, v]) => `${k}=${v}`)
                      .join(" ")}
                  </div>
                ))}
              </td>
              <td>{p.description ?? ""}</td>
              <td>{new Date(p.createdAt).toLocaleString()}</td>
              {canWrite ? (
                <td className="actions">
                  <button type="button" onClick={() => void setEnabled(p.name, !p.enabled)} aria-label={`${p.enabled ? "Disable" : "Enable"} ${p.name}`}>
                    {p.enabled ? "Disable" : "Enable"}
                  </button>
                  <button type="button" onClick={() => void remove(p.name)} aria-label={`Delete ${p.name}`}>
                    Delete
                  </button>
                  {session.can("audit:read") ? <Link to={`/history?stream=deviceProfile-${encodeURIComponent(p.name)}`}>History</Link> : null}
                </td>
              ) : null}
            </tr>
          ))}
          {data?.length === 0 ? (
            <tr>
              <td colSpan={canWrite ? 7 : 6}>No device profile yet.</td>
            </tr>
          ) : null}
        </tbody>
      </table>
      {canWrite ? <CreateProfile token={session.token} onCreated={reload} /> : null}
    </section>
  );
}

const emptyGroup = (): Row[] => [{ key: "resources:FPGA", value: "1" }];

/** The create form; a BAD_USER_INPUT error is shown at the field it names (name, description, groups[i].key). */
function CreateProfile({ token, onCreated }: { token: string; onCreated(): Promise<void> }) {
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [groups, setGroups] = useState<Row[][]>([emptyGroup()]);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [other, setOther] = useState<unknown>();
  const [done, setDone] = useState("");

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setErrors({});
    setOther(undefined);
    setDone("");
    const input = {
      name,
      description: description || null,
      groups: groups.map((rows) => Object.fromEntries(rows.filter((r) => r.key.trim() !== "").map((r) => [r.key.trim(), r.value]))),
    };
    try {
      await gql(token, CREATE, { input });
      setDone(`Created ${name}.`);
      setName("");
      setDescription("");
      setGroups([emptyGroup()]);
      await onCreated();
    } catch (err) {
      const byField: Record<string, string> = {};
      if (err instanceof ApiError) for (const x of err.errors) if (x.extensions?.field) byField[x.extensions.field] = x.message;
      if (Object.keys(byField).length) setErrors(byField);
      else setOther(err);
    }
  };
  const setRow = (g: number, r: number, row: Row) => setGroups((gs) => gs.map((rows, i) => (i === g ? rows.map((x, j) => (j === r ? row : x)) : rows)));
  // A field the form has no input for (groups[0] as a whole, a normalised key) is shown on the group.
  const groupError = (g: number) =>
    Object.entries(errors)
      .filter(([f]) => f === `groups[${g}]` || (f.startsWith(`groups[${g}].`) && !groups[g]!.some((r) => f === `groups[${g}].${r.key.trim()}`)))
      .map(([, m]) => m)
      .join(" ");
  const fieldError = (field: string, id: string) =>
    errors[field] ? (
      <span className="field-error" id={id} role="alert">
        {errors[field]}
      </span>
    ) : null;

  return (
    <form className="create" onSubmit={submit} aria-labelledby="create-title" noValidate>
      <h2 id="create-title">New device profile</h2>
      <div className="field">
        <label htmlFor="profile-name">Name</label>
        <input id="profile-name" value={name} onChange={(e) => setName(e.target.value)} aria-invalid={Boolean(errors.name)} aria-describedby={errors.name ? "err-name" : undefined} />
        {fieldError("name", "err-name")}
      </div>
      <div className="field">
        <label htmlFor="profile-description">Description</label>
        <input id="profile-description" value={description} onChange={(e) => setDescription(e.target.value)} aria-invalid={Boolean(errors.description)} />
        {fieldError("description", "err-description")}
      </div>
      {fieldError("groups", "err-groups")}
      {groups.map((rows, g) => (
        <fieldset key={g} className="group">
          <legend>Group {g}</legend>
          {groupError(g) ? (
            <p className="field-error" role="alert">
              {groupError(g)}
            </p>
          ) : null}
          {rows.map((row, r) => {
            const field = `groups[${g}].${row.key.trim()}`;
            const id = `g${g}r${r}`;
            return (
              <div key={r} className="row" data-field={field}>
                <label htmlFor={`${id}k`}>Key</label>
                <input id={`${id}k`} className="mono" value={row.key} onChange={(e) => setRow(g, r, { ...row, key: e.target.value })} aria-invalid={Boolean(errors[field])} aria-describedby={errors[field] ? `${id}e` : undefined} />
                <label htmlFor={`${id}v`}>Value</label>
                <input id={`${id}v`} className="mono" value={row.value} onChange={(e) => setRow(g, r, { ...row, value: e.target.value })} aria-invalid={Boolean(errors[field])} />
                <button type="button" onClick={() => setGroups((gs) => gs.map((x, i) => (i === g ? x.filter((_, j) => j !== r) : x)))} aria-label={`Remove ${row.key || "row"}`}>
                  Remove
                </button>
                {fieldError(field, `${id}e`)}
              </div>
            );
          })}
          <button type="button" onClick={() => setGroups((gs) => gs.map((x, i) => (i === g ? [...x, { key: "", value: "" }] : x)))}>
            Add key
          </button>
        </fieldset>
      ))}
      <p className="hint">
        Keys: <code>resources:RC</code> (an amount), <code>trait:CUSTOM_X</code> (required or forbidden), <code>accel:…</code>.
      </p>
      <div className="buttons">
        <button type="button" onClick={() => setGroups((gs) => [...gs, emptyGroup()])}>
          Add group
        </button>
        <button type="submit">Create profile</button>
      </div>
      <ErrorNote error={other} />
      {done ? <p role="status">{done}</p> : null}
    </form>
  );
}
