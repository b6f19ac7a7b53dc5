import { type DomainPolicy, type Stage, stageText, strictness, targetStage } from "../../tenant/policy";

// The ramp's decision for one domain, from its policy, the day and its
// evidence: start, advance one step, step back one, hold with the reason in
// numbers, or nothing (at its target). Pure: no service, no file, no clock.

const DAY_MS = 86_400_000;

/** Whole days from `from` to `to` (`YYYY-MM-DD`). */
function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(to) - Date.parse(from)) / DAY_MS);
}

/** The day `days` after `day`. */
function dayAfter(day: string, days: number): string {
  return new Date(Date.parse(day) + days * DAY_MS).toISOString().slice(0, 10);
}

/** A domain's reported figures over its evidence window. */
export interface Figures {
  dkimPassRate: number;
  spfPassRate: number;
  messages: number;
}

/**
 * The DMARC pass rate the ramp gates on: a message passes DMARC when DKIM or
 * SPF passes aligned, so the better of the two rates is the least share of
 * mail that passes. It is a lower bound (mail failing one and passing the
 * other lifts the true figure), so gating on it never overstates readiness.
 */
export function dmarcPassRate(figures: Figures): number {
  return Math.max(figures.dkimPassRate, figures.spfPassRate);
}

/** What the evidence read gave: figures, nothing (no reports in the window), or a failure. */
export type EvidenceRead = { figures: Figures | undefined } | { failure: string };

/**
 * The days whose reports judge the current stage: complete days only (to
 * yesterday), at most the last `minDays`, never before the stage began.
 * Undefined when there is no such day (no `since` yet, or moved today).
 */
export function evidenceWindow(policy: DomainPolicy, today: string): { from: string; to: string } | undefined {
  if (policy.since === undefined) return undefined;
  const held = daysBetween(policy.since, today);
  const days = Math.min(held, Math.max(policy.evidence.minDays, 1));
  return days < 1 ? undefined : { from: dayAfter(today, -days), to: dayAfter(today, -1) };
}

const isAtFirstStep = (policy: DomainPolicy) => strictness(policy.stage) <= strictness(policy.steps[0] as Stage);

/**
 * Whether the run reads the domain's evidence: when its target is beyond its
 * stage, and when it has moved past its first step (watched against the floor).
 */
export function needsEvidence(policy: DomainPolicy, today: string): boolean {
  const end = targetStage(policy.steps, policy.target);
  const below = end !== undefined && strictness(policy.stage) < strictness(end);
  return (below || !isAtFirstStep(policy)) && evidenceWindow(policy, today) !== undefined;
}

export type Decision =
  /** No `since` yet: the ramp starts today, so days held are counted, never guessed. */
  | { kind: "start"; stage: Stage; since: string }
  | { kind: "advance"; from: Stage; to: Stage; since: string; figures: Figures }
  | { kind: "back"; from: Stage; to: Stage; since: string; figures: Figures; floor: number }
  | { kind: "hold"; stage: Stage; reasons: string[]; figures?: Figures }
  | { kind: "target"; stage: Stage; figures?: Figures };

/** The decisions that change the file. */
export const MOVES: readonly Decision["kind"][] = ["start", "advance", "back"];

const percentText = (value: number) => `${Math.round(value * 10) / 10}%`;

/** `pass rate 99.1% (DKIM 99.1%, SPF 97.4%) over 2,830 messages`. */
function figuresText(figures: Figures): string {
  return `pass rate ${percentText(dmarcPassRate(figures))} (DKIM ${percentText(figures.dkimPassRate)}, SPF ${percentText(figures.spfPassRate)}) over ${figures.messages.toLocaleString("en")} messages`;
}

function stepFrom(policy: DomainPolicy, offset: 1 | -1): Stage | undefined {
  const index = policy.steps.findIndex((step) => strictness(step) === strictness(policy.stage));
  return policy.steps[index + offset];
}

/** Every gate the evidence does not pass, in numbers. */
function shortfalls(policy: DomainPolicy, held: number, figures: Figures | undefined): string[] {
  const { minDays, minMessages, minPassRate } = policy.evidence;
  const reasons: string[] = [];
  if (held < minDays) reasons.push(`held ${held} of ${minDays} days`);
  if (figures === undefined) return [...reasons, "no reports over the days held"];
  if (figures.messages < minMessages)
    reasons.push(`${figures.messages.toLocaleString("en")} messages, needs ${minMessages.toLocaleString("en")}`);
  const rate = dmarcPassRate(figures);
  if (rate < minPassRate) reasons.push(`pass rate ${percentText(rate)}, needs ${percentText(minPassRate)}`);
  return reasons;
}

/**
 * The one decision for a domain on `today`. A failed or empty read never
 * advances it; a domain moved past its first step whose pass rate is under
 * the floor steps back one, since failing mail is being quarantined or
 * rejected now.
 */
export function decide(policy: DomainPolicy, today: string, evidence: EvidenceRead | undefined): Decision {
  const { stage, since } = policy;
  if (since === undefined) return { kind: "start", stage, since: today };
  const held = daysBetween(since, today);
  if (held < 0) return { kind: "hold", stage, reasons: [`since ${since} is after ${today}`] };
  if (evidence !== undefined && "failure" in evidence)
    return { kind: "hold", stage, reasons: [`evidence could not be read: ${evidence.failure}`] };
  const figures = evidence?.figures;
  const withFigures = figures ? { figures } : {};
  const back = stepFrom(policy, -1);
  if (figures && back && !isAtFirstStep(policy) && dmarcPassRate(figures) < policy.floor)
    return { kind: "back", from: stage, to: back, since: today, figures, floor: policy.floor };
  const end = targetStage(policy.steps, policy.target);
  const next = stepFrom(policy, 1);
  if (end === undefined || next === undefined || strictness(stage) >= strictness(end))
    return { kind: "target", stage, ...withFigures };
  const reasons = shortfalls(policy, held, figures);
  if (reasons.length > 0 || figures === undefined) return { kind: "hold", stage, reasons, ...withFigures };
  return { kind: "advance", from: stage, to: next, since: today, figures };
}

/** The decision in a line: `quarantine (pct 25) → quarantine`, `hold at none: held 3 of 14 days`. */
export function decisionText(decision: Decision): string {
  switch (decision.kind) {
    case "start":
      return `ramp starts at ${stageText(decision.stage)}: days held count from ${decision.since}`;
    case "advance":
      return `${stageText(decision.from)} → ${stageText(decision.to)}: ${figuresText(decision.figures)}`;
    case "back":
      return `step back ${stageText(decision.from)} → ${stageText(decision.to)}: ${figuresText(decision.figures)}, under the floor of ${percentText(decision.floor)}`;
    case "hold":
      return `hold at ${stageText(decision.stage)}: ${[...decision.reasons, ...(decision.figures ? [figuresText(decision.figures)] : [])].join("; ")}`;
    case "target":
      return `at its target ${stageText(decision.stage)}`;
  }
}
