import type { BackendRecords, Recorder } from "../checkpoint/backendRecords";
import type { CreateCandidate, Ownership } from "../runtime/lifecycle";
import { madeNoEarlierThan, madeSinceMoment } from "../runtime/settle";

// Whether an object found for a pending create is provably the create's. A
// name proves nothing: an organisation of the same name may be another
// stack's customer, or one a person made. What does: no stack of the backend
// records the object, and the service made it after the killed run began
// (or, by the type's own rule, its key leaves no other choice). Each object
// found gets one verdict; the create is settled only when exactly one is
// proven and none is left in doubt.

type CandidateVerdict =
  /** This stack records it, or this recovery adopted it for an earlier operation. */
  | "recordedHere"
  /** Another stack of the backend records it. */
  | "recordedElsewhere"
  /** The service made it before the killed run began. */
  | "madeBeforeRun"
  /** Nothing shows when it was made, and its key is not unique: it may be the create's, or anyone's. */
  | "unproven"
  /** Made by the create, as far as anything can show: no stack records it and its type's rule holds. */
  | "proven";

export interface JudgedCandidate extends CreateCandidate {
  verdict: CandidateVerdict;
  /** The other stack recording it, for `recordedElsewhere`. */
  recordedBy?: Recorder;
}

/** What, beside the service, tells whether an object found is this stack's. */
export interface OwnershipFacts {
  /** When the killed run began (ms since the epoch), where the backend shows it: the lock it left. */
  runStartedAt?: number;
  /** What that moment was read from, for the report. */
  runStartSource?: string;
  /** Every other stack's records on the backend. */
  elsewhere: BackendRecords;
}

interface Judging {
  candidate: CreateCandidate;
  facts: OwnershipFacts;
  /** The organisation the create's inputs name, when they name one. */
  organizationId: string | undefined;
  /** Ids this stack records (and ids adopted earlier in this recovery). */
  here: ReadonlySet<string>;
}

/** By its dates: made during the run, before it, or not shown either way. */
function byDate({ candidate, facts }: Judging): CandidateVerdict {
  if (facts.runStartedAt === undefined || Number.isNaN(madeNoEarlierThan(candidate))) return "unproven";
  if (madeSinceMoment(candidate, facts.runStartedAt)) return "proven";
  // Only its own creation time shows it older than the run; its organisation's leaves it open.
  return candidate.createdAt ? "madeBeforeRun" : "unproven";
}

/** Whether the organisation is this stack's alone: it records it, and no other stack does. */
function organizationIsOurs({ organizationId, here, facts }: Judging): boolean {
  return organizationId !== undefined && here.has(organizationId) && !facts.elsewhere.recordedBy.has(organizationId);
}

/** Each type's rule ({@link Ownership}), for an object no stack records. */
const RULES: Record<Ownership, (judging: Judging) => CandidateVerdict> = {
  madeDuringRun: byDate,
  uniqueInOrganization: (judging) => (organizationIsOurs(judging) ? "proven" : byDate(judging)),
  createTakesIt: () => "proven",
};

/** Why an object the rule proved is the create's, in the report's words. */
export const PROVEN_BECAUSE: Record<Ownership, string> = {
  madeDuringRun: "the create was carried out: the object was made during the killed run, and no stack records it",
  uniqueInOrganization:
    "the create was carried out: its name is unique in an organisation this stack alone records (or one made during the run), and no stack records it",
  createTakesIt: "found, and a create of these inputs takes it anyway; no stack records it",
};

export function judgeCandidates(
  candidates: readonly CreateCandidate[],
  ownership: Ownership,
  context: Omit<Judging, "candidate">,
): JudgedCandidate[] {
  return candidates.map((candidate) => {
    if (context.here.has(candidate.id)) return { ...candidate, verdict: "recordedHere" };
    const recordedBy = context.facts.elsewhere.recordedBy.get(candidate.id);
    if (recordedBy) return { ...candidate, verdict: "recordedElsewhere", recordedBy };
    return { ...candidate, verdict: RULES[ownership]({ ...context, candidate }) };
  });
}

/** "org_1 (Acme Corp, created 2026-…; recorded by stack prod)": a candidate as the report lists it. */
export function describeJudged(candidate: JudgedCandidate): string {
  const dated = candidate.createdAt
    ? `, created ${candidate.createdAt}`
    : candidate.organizationCreatedAt
      ? `, in an organisation created ${candidate.organizationCreatedAt}`
      : "";
  const verdict: Record<CandidateVerdict, string> = {
    recordedHere: "recorded by this stack",
    recordedElsewhere: `recorded by stack ${candidate.recordedBy?.stack} as ${candidate.recordedBy?.urn}`,
    madeBeforeRun: "made before the killed run began",
    unproven: "nothing shows whether the killed run made it",
    proven: "made during the killed run, recorded by no stack",
  };
  return `${candidate.id} (${candidate.label}${dated}; ${verdict[candidate.verdict]})`;
}
