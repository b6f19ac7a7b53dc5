import { TsigErrorCode } from "./tsig";

// What a server's refusal means and what to do about it: one row per RCODE
// an update or query can answer (RFC 1035, RFC 2136 §2.2) and per TSIG error
// (RFC 8945 §5.3), so every message names the same things the same way.

/** Who asked what: every message names the server, the zone and the key. */
export interface DnsRequestContext {
  server: string;
  zone: string;
  keyName: string;
  /** What was asked, e.g. `the update of _dmarc.acme.example` or `the SOA query for acme.example`. */
  request: string;
}

// An update is guarded by prerequisites on what was read at the name just before.
const RACED_FIX =
  "Something else changed the records at the name meanwhile: run again, which reads them afresh; if it keeps happening, find what else writes there.";

interface Problem {
  code: number;
  meaning: string;
  fix(context: DnsRequestContext): string;
}

export const Rcode = {
  NOERROR: 0,
  FORMERR: 1,
  SERVFAIL: 2,
  NXDOMAIN: 3,
  NOTIMP: 4,
  REFUSED: 5,
  YXDOMAIN: 6,
  YXRRSET: 7,
  NXRRSET: 8,
  NOTAUTH: 9,
  NOTZONE: 10,
} as const;

const PROBLEMS: Readonly<Record<string, Problem>> = {
  FORMERR: {
    code: Rcode.FORMERR,
    meaning: "the server could not parse the message",
    fix: () => "Check that the server speaks RFC 2136 dynamic updates and that nothing between rewrites DNS messages.",
  },
  SERVFAIL: {
    code: Rcode.SERVFAIL,
    meaning: "the server failed to carry it out",
    fix: ({ zone }) => `Look at the server's log: the zone ${zone} may not be loaded, or its journal not writable.`,
  },
  NXDOMAIN: {
    code: Rcode.NXDOMAIN,
    meaning: "a name that had to exist does not",
    fix: ({ zone }) => `Check that the zone ${zone} exists on this server.`,
  },
  NOTIMP: {
    code: Rcode.NOTIMP,
    meaning: "the server does not implement this kind of request",
    fix: () => "Dynamic updates must go to a server that accepts them, usually the zone's primary.",
  },
  REFUSED: {
    code: Rcode.REFUSED,
    meaning: "the server's policy does not allow it",
    fix: ({ zone, keyName }) =>
      `Allow the key ${keyName} to update this name in zone ${zone} (BIND: update-policy { grant ${keyName} name _dmarc.<domain> TXT CNAME; }; Knot: an acl with key ${keyName} and action update), or check that ${zone} is the right zone.`,
  },
  YXDOMAIN: {
    code: Rcode.YXDOMAIN,
    meaning: "a name that must not exist does",
    fix: () => "Another record at the name conflicts; look at what the zone holds there.",
  },
  YXRRSET: {
    code: Rcode.YXRRSET,
    meaning: "a record set that must not exist does",
    fix: () => RACED_FIX,
  },
  NXRRSET: {
    code: Rcode.NXRRSET,
    meaning: "a record set that had to exist does not, or holds other records",
    fix: () => RACED_FIX,
  },
  NOTAUTH: {
    code: Rcode.NOTAUTH,
    meaning: "the server is not authoritative for the zone, or did not accept the signature",
    fix: ({ zone }) =>
      `Send updates to the primary server of ${zone} (the SOA record's MNAME names it), and check the key.`,
  },
  NOTZONE: {
    code: Rcode.NOTZONE,
    meaning: "the record's name is not inside the zone",
    fix: ({ zone }) =>
      `Give the zone that contains the name instead of ${zone}, or leave zone out to find it by its SOA record.`,
  },
  BADSIG: {
    code: TsigErrorCode.BADSIG,
    meaning: "the signature does not verify",
    fix: ({ keyName }) =>
      `The server knows a key named ${keyName} but with another secret or algorithm: give the secret and algorithm of its key (tsig-keygen's output).`,
  },
  BADKEY: {
    code: TsigErrorCode.BADKEY,
    meaning: "the server does not know the key",
    fix: ({ keyName }) =>
      `The server has no key named ${keyName} with this algorithm, or (Knot) the zone's acl does not list it: check keyName and keyAlgorithm against the server's key statement and the zone's acl.`,
  },
  BADTIME: {
    code: TsigErrorCode.BADTIME,
    meaning: "the signature's time is outside the allowed clock skew",
    fix: () => "The clocks of this machine and the server differ by more than 5 minutes: synchronise them (NTP).",
  },
};

/** The name of an RCODE or TSIG error, e.g. `REFUSED`; `RCODE 23` for one without a name. */
export function problemName(code: number): string {
  return Object.entries(PROBLEMS).find(([, problem]) => problem.code === code)?.[0] ?? `RCODE ${code}`;
}

/** A server answered with an error. `code` is the RCODE or, for a TSIG failure, the TSIG error. */
export class DnsAnswerError extends Error {
  override readonly name = "DnsAnswerError";

  constructor(
    readonly code: number,
    readonly context: DnsRequestContext,
    detail = "",
  ) {
    const name = problemName(code);
    const problem = PROBLEMS[name];
    const meaning = problem ? `: ${problem.meaning}${detail}` : detail;
    const fix = problem ? ` ${problem.fix(context)}` : "";
    super(
      `${context.server} answered ${name} to ${context.request} in zone ${context.zone} (key ${context.keyName})${meaning}.${fix}`,
    );
  }
}
