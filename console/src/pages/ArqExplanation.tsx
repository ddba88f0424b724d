import { ErrorNote, type Session } from "../lib/session";
import { gql } from "../lib/api";
import { usePolled } from "../lib/hooks";
import { Link } from "../lib/router";

interface RuledOut {
  rule: string;
  message: string;
  change: string;
}
interface Explanation {
  hosts: number;
  fitting: number;
  byRule: { rule: string; hosts: number; example: RuledOut & { hostname: string } }[];
  detail: { hostname: string; ruledOut: RuledOut | null; groups: { group: number; providers: { rpUuid: string; alternative: number; ruledOut: RuledOut | null }[] }[] }[];
  quota: { claims: number; classes: { resourceClass: string; limit: number | null; own: boolean; usage: number }[] } | null;
}

// The few hosts closest to fitting are shown in detail; every other host is only counted under its rule.
const BEST = 5;
const EXPLAIN = `query($uuid: ID!, $detail: Int) { explainPlacement(arqUuid: $uuid, detail: $detail) {
  hosts fitting byRule { rule hosts example { hostname message change } }
  detail { hostname ruledOut { rule message change } groups { group providers { rpUuid alternative ruledOut { rule message change } } } }
  quota { claims classes { resourceClass limit own usage } } } }`;

/** Each rule in the words an operator reads (docs/scheduling.md, the rules). */
export const RULE_WORDS: Record<string, string> = {
  PROFILE_DISABLED: "the device profile is disabled",
  HOST_LIMIT: "the request does not allow the host",
  STALE_AGENT: "the host's agent stopped reporting",
  RESOURCE_CLASS: "no device of the class asked for",
  TRAIT_MISSING: "devices lack a required trait",
  TRAIT_FORBIDDEN: "devices carry a forbidden trait",
  LIFECYCLE: "devices failed, cleaning or qualifying",
  TAINT: "devices tainted, not tolerated",
  NO_FREE_HANDLE: "no free handle left",
  CAPACITY: "not enough capacity left on the device",
  TOPOLOGY: "devices do not share the topology asked for",
};
const words = (rule: string) => RULE_WORDS[rule] ?? rule;
const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? "" : "s"}`;

/** Why an ARQ is not bound: the hosts grouped by the rule that ruled them out, the closest few in detail, and its project's quota. */
export function ArqExplanation({ session, uuid }: { session: Session; uuid: string }) {
  const { data, error } = usePolled(() => gql<{ explainPlacement: Explanation }>(session.token, EXPLAIN, { uuid, detail: BEST }).then((d) => d.explainPlacement), 5000, [uuid]);
  return (
    <section aria-label="Why it is not bound" data-testid="explanation">
      <h3>Why it is not bound</h3>
      <ErrorNote error={error} />
      {data ? (
        <>
          <p data-testid="explanation-summary">
            {data.fitting > 0
              ? `${plural(data.fitting, "host")} of ${data.hosts} could take it now.`
              : `No host of ${data.hosts} could take it now.`}
          </p>
          <RuleTable byRule={data.byRule} />
          <BestHosts detail={data.detail.filter((h) => h.ruledOut !== null)} />
          <QuotaTable quota={data.quota} />
        </>
      ) : null}
    </section>
  );
}

function RuleTable({ byRule }: { byRule: Explanation["byRule"] }) {
  if (byRule.length === 0) return null;
  return (
    <table aria-label="Hosts ruled out, by rule">
      <thead>
        <tr>
          <th scope="col">Hosts</th>
          <th scope="col">Ruled out because</th>
          <th scope="col">For example</th>
          <th scope="col">What would have to change</th>
        </tr>
      </thead>
      <tbody>
        {byRule.map((r) => (
          <tr key={r.rule} data-rule={r.rule}>
            <td>{r.hosts}</td>
            <td title={r.rule}>
              {words(r.rule)} <span className="muted mono">{r.rule}</span>
            </td>
            <td data-testid="rule-example">
              <Link to={`/hosts/${encodeURIComponent(r.example.hostname)}`}>{r.example.hostname}</Link>: {r.example.message}
            </td>
            <td data-testid="rule-change">{r.example.change}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function BestHosts({ detail }: { detail: Explanation["detail"] }) {
  if (detail.length === 0) return null;
  return (
    <>
      <h4>The hosts closest to taking it</h4>
      <ul aria-label="Hosts closest to taking it">
        {detail.map((h) => (
          <li key={h.hostname} data-host={h.hostname}>
            <strong>{h.hostname}</strong>: {h.ruledOut!.message}; would take it with {h.ruledOut!.change}.
            <ProviderList groups={h.groups} />
          </li>
        ))}
      </ul>
    </>
  );
}

function ProviderList({ groups }: { groups: Explanation["detail"][number]["groups"] }) {
  const rows = groups.flatMap((g) => g.providers.map((p) => ({ group: g.group, ...p })));
  if (rows.length === 0) return null;
  return (
    <ul className="muted">
      {rows.map((p) => (
        <li key={`${p.group}-${p.rpUuid}`}>
          group {p.group}, provider <span className="mono">{p.rpUuid.slice(0, 8)}</span>
          {p.alternative > 0 ? ` (alternative ${p.alternative})` : ""}: {p.ruledOut ? `${words(p.ruledOut.rule)}: ${p.ruledOut.message}; needs ${p.ruledOut.change}` : "could take it"}
        </li>
      ))}
    </ul>
  );
}

function QuotaTable({ quota }: { quota: Explanation["quota"] }) {
  if (!quota) return <p className="muted">The ARQ belongs to no project: no quota applies.</p>;
  return (
    <table aria-label="The project's quota">
      <caption>The project's quota ({plural(quota.claims, "ARQ")} holding a claim)</caption>
      <thead>
        <tr>
          <th scope="col">Resource class</th>
          <th scope="col">In use</th>
          <th scope="col">Limit</th>
        </tr>
      </thead>
      <tbody>
        {quota.classes.map((c) => (
          <tr key={c.resourceClass} data-class={c.resourceClass} className={c.limit !== null && c.usage >= c.limit ? "bad" : undefined}>
            <th scope="row">{c.resourceClass}</th>
            <td>{c.usage}</td>
            <td>{c.limit === null ? "no limit" : `${c.limit}${c.own ? "" : " (the default)"}`}{c.limit !== null && c.usage >= c.limit ? ", reached" : ""}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
