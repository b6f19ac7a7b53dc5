import { z } from "zod";
import { mapping } from "../runtime/values";

// A domain's DMARC policy ramp as the inventory states it: where it should
// end (`target`), the steps it climbs, the evidence a step needs, and where
// it is (`stage`, `since`). The record a domain publishes follows its stage;
// `dmarc-fleet enforce` proposes the moves. Nothing here reads the service.

const POLICY_WORDS = ["none", "quarantine", "reject"] as const;
export type PolicyWord = (typeof POLICY_WORDS)[number];
export const PolicyWord = z.enum(POLICY_WORDS);

/** One step of a ramp: the record's `p` and `pct` (100 is written as no `pct`, the tag's default). */
export interface Stage {
  p: PolicyWord;
  pct: number;
}

const STAGE_RULE =
  "must be a stage: none, quarantine or reject, the last two optionally with a pct of 1 to 100 as quarantine-25";
const STAGE_PATTERN = /^(none|quarantine|reject)(?:-(\d+))?$/;

/** `quarantine-25` → `{ p: "quarantine", pct: 25 }`; undefined when the name is not a stage. */
export function parseStage(name: string): Stage | undefined {
  const match = STAGE_PATTERN.exec(name);
  if (!match) return undefined;
  const p = match[1] as PolicyWord;
  if (match[2] === undefined) return { p, pct: 100 };
  const pct = Number(match[2]);
  // `none` enforces nothing, so a share of it means nothing either.
  if (p === "none" || pct < 1 || pct > 100) return undefined;
  return { p, pct };
}

export function stageName(stage: Stage): string {
  return stage.pct === 100 ? stage.p : `${stage.p}-${stage.pct}`;
}

/** How strict a stage is: reject over quarantine over none, then by `pct`. */
export function strictness(stage: Stage): number {
  return POLICY_WORDS.indexOf(stage.p) * 1000 + stage.pct;
}

/** `quarantine (pct 25)`, `reject`: a stage as plans and summaries word it. */
export function stageText(stage: Stage): string {
  return stage.pct === 100 ? stage.p : `${stage.p} (pct ${stage.pct})`;
}

const StageName = z.string().refine((name) => parseStage(name) !== undefined, { message: STAGE_RULE });

const Percent = z
  .number()
  .min(0, { message: "must be a percentage from 0 to 100" })
  .max(100, { message: "must be a percentage from 0 to 100" });
const Count = z.number().int({ message: "must be a whole number" }).min(0, { message: "must be 0 or more" });
const Day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, { message: "must be a date as YYYY-MM-DD, such as 2026-11-30" });

/**
 * The default ramp: a quarter of failing mail quarantined first, so a sender
 * the evidence missed shows up in a few complaints rather than a lost day of
 * mail; then all of it; then rejection, once quarantine has shown nothing
 * legitimate fails.
 */
export const DEFAULT_STEPS = ["none", "quarantine-25", "quarantine", "reject"] as const;

/** The default evidence a step needs; the reasons are in docs/guides/enforcement.md. */
export const DEFAULT_EVIDENCE = { minPassRate: 98, minMessages: 500, minDays: 14 } as const;
export const DEFAULT_FLOOR = 90;

/** The keys of `policy.evidence`. */
export const EvidenceShape = {
  minPassRate: Percent.optional().describe(
    `Least DMARC pass rate (percent, the better of DKIM's and SPF's) over the days held; default ${DEFAULT_EVIDENCE.minPassRate}.`,
  ),
  minMessages: Count.optional().describe(
    `Least messages reported over the days held; default ${DEFAULT_EVIDENCE.minMessages}.`,
  ),
  minDays: Count.optional().describe(`Least days at the current stage; default ${DEFAULT_EVIDENCE.minDays}.`),
};

/** What `defaults`, a tenant and a domain may say of the ramp (the nearest says it); `evidence` holds {@link EvidenceShape}. */
export const PolicyRules = {
  target: PolicyWord.optional().describe("Where the ramp ends: `none`, `quarantine` or `reject`; default `none`."),
  steps: z
    .array(StageName)
    .min(1, { message: "must list at least one stage" })
    .optional()
    .describe(`The ramp's stages, least strict first; default \`${DEFAULT_STEPS.join(", ")}\`.`),
  floor: Percent.optional().describe(
    `A domain moved past its first stage steps back one when its pass rate falls under this (percent); default ${DEFAULT_FLOOR}.`,
  ),
  sp: PolicyWord.optional().describe(
    "The record's `sp`, the policy of subdomains; as the service gives it when not set.",
  ),
};

/** Where the domain is: kept by `dmarc-fleet enforce --write`, so the file shows every move. */
export const PolicyPosition = {
  stage: StageName.optional().describe("The stage the domain's record is at; the first step when not given."),
  since: Day.optional().describe(
    "The day the stage began, `YYYY-MM-DD`; `enforce` writes it when it starts the ramp and on every move.",
  ),
};

/**
 * A domain's whole ramp and where it is, as a program gives it (`Tenant`'s
 * `domains[].policy`, `stagedRecord`): the inventory's keys, one schema for
 * both. Its refusals are the inventory's, key by key and for the ramp as a whole.
 */
export const DomainPolicyArgs = mapping({
  ...PolicyRules,
  evidence: mapping(EvidenceShape).optional().describe("What a step needs before the next one is proposed."),
  ...PolicyPosition,
})
  .superRefine((entry, context) => {
    for (const { key, message } of policyProblems(entry)) context.addIssue({ code: "custom", path: [key], message });
  })
  .describe(
    "A domain's DMARC policy ramp in a program: `Tenant`'s `domains[].policy`, or `stagedRecord(domainName, domain.setupRecord, policy)` for a program publishing a `Domain`'s record itself. The record takes the `stage`'s `p` and `pct` and the `sp`, every other tag as the service gave it. Keep each domain's ramp in the stack's configuration, `<project>:dmarcPolicy` (domain name → these keys; `since` quoted), read by `stackPolicies()`: `dmarc-fleet enforce --stack <name> --write` moves `stage` and `since` there.",
  );
export type DomainPolicyArgs = z.input<typeof DomainPolicyArgs>;

export type PolicyRules = z.output<z.ZodObject<typeof PolicyRules>> & {
  evidence?: Partial<z.output<z.ZodObject<typeof EvidenceShape>>>;
};
export type DomainPolicyEntry = PolicyRules & z.output<z.ZodObject<typeof PolicyPosition>>;

interface Evidence {
  minPassRate: number;
  minMessages: number;
  minDays: number;
}

/** A domain's ramp with every default applied. */
export interface DomainPolicy {
  target: PolicyWord;
  steps: Stage[];
  evidence: Evidence;
  floor: number;
  sp?: PolicyWord;
  stage: Stage;
  since?: string;
}

/** Rules merged field by field, the later (nearer) winning; `evidence` merged key by key. */
export function mergeRules<Rules extends PolicyRules>(outer: PolicyRules | undefined, inner: Rules): Rules {
  if (outer === undefined) return inner;
  const evidence = outer.evidence || inner.evidence ? { ...outer.evidence, ...inner.evidence } : undefined;
  return { ...outer, ...inner, ...(evidence ? { evidence } : {}) };
}

const stagesOf = (names: readonly string[]): Stage[] => names.map((name) => parseStage(name) as Stage);

/** The last step whose `p` is the target: the stage the ramp stops at. */
export function targetStage(steps: readonly Stage[], target: PolicyWord): Stage | undefined {
  return steps.findLast((step) => step.p === target);
}

/** The domain's ramp with defaults applied; the entry must have passed the schema and {@link policyProblems}. */
export function resolvePolicy(entry: DomainPolicyEntry): DomainPolicy {
  const steps = stagesOf(entry.steps ?? DEFAULT_STEPS);
  const stage = entry.stage === undefined ? (steps[0] as Stage) : (parseStage(entry.stage) as Stage);
  return {
    target: entry.target ?? "none",
    steps,
    evidence: { ...DEFAULT_EVIDENCE, ...entry.evidence },
    floor: entry.floor ?? DEFAULT_FLOOR,
    ...(entry.sp ? { sp: entry.sp } : {}),
    stage,
    ...(entry.since ? { since: entry.since } : {}),
  };
}

/** A problem of a resolved ramp: the key (inside `policy`) it is about, and what is wrong. */
export interface PolicyProblem {
  key: "steps" | "target" | "stage";
  message: string;
}

/** What the schema cannot see key by key: steps in order, a target the steps reach, a stage on the ramp and not past its end. */
export function policyProblems(entry: DomainPolicyEntry): PolicyProblem[] {
  const names = entry.steps ?? DEFAULT_STEPS;
  // A stage that is no stage has its own message already.
  if ([...names, entry.stage ?? "none"].some((name) => parseStage(name) === undefined)) return [];
  const steps = stagesOf(names);
  const listed = names.join(", ");
  if (steps.some((step, index) => index > 0 && strictness(step) <= strictness(steps[index - 1] as Stage)))
    return [
      { key: "steps", message: `must go from least to most strict, each once (none, quarantine-N, reject-N...)` },
    ];
  const target = entry.target ?? "none";
  const end = targetStage(steps, target);
  if (end === undefined) return [{ key: "target", message: `must be the policy of one of the steps (${listed})` }];
  if (entry.stage === undefined) return [];
  const stage = parseStage(entry.stage) as Stage;
  if (!steps.some((step) => strictness(step) === strictness(stage)))
    return [{ key: "stage", message: `must be one of the steps (${listed})` }];
  if (strictness(stage) > strictness(end))
    return [
      {
        key: "stage",
        message: `is past the target ${target} (${stageName(end)}): lower the stage, or raise the target`,
      },
    ];
  return [];
}

const TAG_ORDER = ["p", "pct", "sp"] as const;

/**
 * The record's value with `p`, `pct` and `sp` set from the stage, every
 * other tag (`v`, `rua`, `fo`...) kept as given and where it was: the
 * service's verification looks for its `rua`, and must keep finding it.
 * `pct=100` is the default and is left out; an `sp` not set keeps the
 * service's.
 */
export function recordWithStage(value: string, stage: Stage, sp: PolicyWord | undefined): string {
  const wanted = new Map<string, string | undefined>([
    ["p", stage.p],
    ["pct", stage.pct === 100 ? undefined : String(stage.pct)],
  ]);
  if (sp !== undefined) wanted.set("sp", sp);
  const tags = value
    .split(";")
    .map((part) => part.trim())
    .filter((part) => part !== "")
    .map((part) => {
      const separator = part.indexOf("=");
      return { name: part.slice(0, separator).trim().toLowerCase(), text: part };
    });
  const kept = tags.filter((tag) => !(TAG_ORDER as readonly string[]).includes(tag.name));
  const policy = TAG_ORDER.flatMap((name) => {
    const given = wanted.has(name) ? wanted.get(name) : tags.find((tag) => tag.name === name)?.text.split("=")[1];
    return given === undefined ? [] : [{ name, text: `${name}=${given.trim()}` }];
  });
  // DMARC needs `v` first and `p` right after it; the others keep their order.
  const [version, ...rest] = kept;
  return [...(version ? [version] : []), ...policy, ...rest].map((tag) => tag.text).join("; ");
}

/** The policy tags of a record's value, for plans and drift: `{ p, pct, sp }` as written. */
function policyTagsOf(value: string): { p?: string; pct?: string; sp?: string } {
  const tags: Record<string, string> = {};
  for (const part of value.split(";")) {
    const separator = part.indexOf("=");
    const name = part.slice(0, separator).trim().toLowerCase();
    if (separator > 0 && (TAG_ORDER as readonly string[]).includes(name)) tags[name] = part.slice(separator + 1).trim();
  }
  return tags;
}

/** The value without its policy tags: two values equal under it differ only in policy. */
export function withoutPolicyTags(value: string): string {
  return value
    .split(";")
    .map((part) => part.trim())
    .filter(
      (part) =>
        part !== "" && !(TAG_ORDER as readonly string[]).includes(part.split("=")[0]?.trim().toLowerCase() ?? ""),
    )
    .join("; ");
}

/** A record's policy as plans word it: `quarantine (pct 25)`, `reject, sp none`; `no p=` for a value without one. */
export function policyText(value: string): string {
  const { p, pct, sp } = policyTagsOf(value);
  const main = p === undefined ? "no p=" : pct === undefined || pct === "100" ? p : `${p} (pct ${pct})`;
  return sp === undefined ? main : `${main}, sp ${sp}`;
}
