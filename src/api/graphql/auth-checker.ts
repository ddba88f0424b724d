import type { AuthChecker } from "type-graphql";
import { allows, fixForRule, type Rule } from "../auth/policy.js";
import type { ApiContext } from "./context.js";
import { forbidden, unauthenticated } from "./errors.js";

/** `@Authorized("rule")`: the rules are the keys of auth/policy.ts. */
export const authChecker: AuthChecker<ApiContext, Rule> = ({ context, info }, rules) => {
  const p = context.principal;
  if (!p) throw unauthenticated();
  for (const rule of rules) {
    if (!allows(p, rule)) throw forbidden(`${info.parentType.name}.${info.fieldName} (needs ${rule}): ${fixForRule(rule)}`);
  }
  return true;
};
