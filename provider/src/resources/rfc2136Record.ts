import { z } from "zod";
import {
  authoritativeRecords,
  DnsAnswerError,
  type DnsTarget,
  DnsUnreachableError,
  NameInUseError,
  normalizeName,
  PUBLISHED_TYPES,
  type PublishedType,
  parseServer,
  planAtName,
  putDmarcRecord,
  REFUSED_TSIG_ALGORITHMS,
  type RecordText,
  type ResourceRecord,
  removeRecord,
  sameText,
  TSIG_ALGORITHMS,
  type TsigAlgorithm,
  textOf,
  zoneOf,
} from "../dns";
import { defineResource, updateMayChange } from "../runtime/lifecycle";
import { resourceClass } from "../runtime/resource";

const TYPE_NAME = "Rfc2136Record";
const MIN_TTL = 60;
const MAX_TTL = 604_800;
const MAX_VALUE_BYTES = 4_096;
const MIN_SECRET_BYTES = 16;
const LABEL = /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function isDnsName(value: string): boolean {
  const name = normalizeName(value);
  return name.length > 0 && name.length <= 253 && name.split(".").every((label) => LABEL.test(label));
}

/** A fully qualified name, kept in lower case without the trailing dot. */
function dnsName(example: string) {
  return z
    .string()
    .refine(isDnsName, {
      message: `must be a fully qualified DNS name such as ${example} (labels of letters, digits, "-" and "_", at most 63 characters each)`,
    })
    .transform(normalizeName);
}

function isInside(name: string, zone: string): boolean {
  return name === zone || name.endsWith(`.${zone}`);
}

const algorithmNames = Object.keys(TSIG_ALGORITHMS).join(", ");
const KeyAlgorithm = z
  .string()
  .superRefine((value, context) => {
    const refused = REFUSED_TSIG_ALGORITHMS[value.toLowerCase()];
    if (refused) context.addIssue({ code: "custom", message: `is refused: ${refused}; use one of ${algorithmNames}` });
    else if (!(value in TSIG_ALGORITHMS))
      context.addIssue({ code: "custom", message: `must be one of ${algorithmNames}` });
  })
  .transform((value) => value as TsigAlgorithm);

const Rfc2136Inputs = z
  .object({
    server: z
      .string()
      .refine((value) => parseServer(value) !== undefined, {
        message:
          'must be the primary server as "host:port" such as ns1.example.net:53 or [2001:db8::53]:53 (port 53 when left out)',
      })
      .describe("The zone's primary server that accepts dynamic updates, as `host:port` (port 53 when left out)."),
    zone: dnsName("example.com")
      .optional()
      .describe("The zone the record goes into; found by asking `server` for the name's SOA record when not given."),
    name: dnsName("_dmarc.example.com").describe(
      "The record's fully qualified name, e.g. a Domain's `setupRecord.host` (`_dmarc.example.com`).",
    ),
    type: z
      .enum(Object.keys(PUBLISHED_TYPES) as [PublishedType, ...PublishedType[]])
      .describe("`TXT` or `CNAME`, e.g. a Domain's `setupRecord.recordType`. A change replaces the record in place."),
    value: z
      .string()
      .min(1, { message: "must not be empty" })
      .refine((value) => Buffer.byteLength(value) <= MAX_VALUE_BYTES, {
        message: `must be at most ${MAX_VALUE_BYTES} bytes`,
      })
      .describe(
        "The TXT text (split into 255-byte strings on the wire) or the CNAME's target, e.g. a Domain's `setupRecord.value`.",
      ),
    ttl: z
      .number()
      .int({ message: "must be a whole number of seconds" })
      .min(MIN_TTL, { message: `must be at least ${MIN_TTL} seconds` })
      .max(MAX_TTL, { message: `must be at most ${MAX_TTL} seconds (a week)` })
      .default(3600)
      .describe(`Time to live in seconds, ${MIN_TTL} to ${MAX_TTL}.`),
    keyName: dnsName("dmarc-update").describe(
      "Name of the TSIG key, as in the server's `key` statement (hashicorp/dns's `key_name`).",
    ),
    keyAlgorithm: KeyAlgorithm.default("hmac-sha256").describe(
      `The key's algorithm: ${algorithmNames}; default \`hmac-sha256\`. hmac-md5 is refused.`,
    ),
    keySecret: z
      .string()
      .refine((value) => BASE64.test(value) && Buffer.from(value, "base64").length >= MIN_SECRET_BYTES, {
        message: `must be the key's secret in base64, as tsig-keygen prints it (at least ${MIN_SECRET_BYTES} bytes)`,
      })
      .describe("The key's secret, base64 (tsig-keygen's `secret`). Kept as a Pulumi secret, in state and outputs."),
  })
  .superRefine((inputs, context) => {
    if (inputs.zone !== undefined && !isInside(inputs.name, inputs.zone)) {
      context.addIssue({ code: "custom", path: ["zone"], message: `must contain the record's name ${inputs.name}` });
    }
    if (inputs.type === "CNAME" && !isDnsName(inputs.value)) {
      context.addIssue({ code: "custom", path: ["value"], message: "must be a DNS name, the CNAME's target" });
    }
  });
type Rfc2136Inputs = z.output<typeof Rfc2136Inputs>;

const Rfc2136Outputs = z.object({
  zoneName: z.string().describe("The zone the record is in: `zone`, or the one the SOA query found."),
});

function targetOf(inputs: Rfc2136Inputs): DnsTarget {
  const server = parseServer(inputs.server);
  if (!server) throw new Error(`${TYPE_NAME} ${inputs.name}: server "${inputs.server}" is not host:port`);
  return {
    server,
    key: { name: inputs.keyName, algorithm: inputs.keyAlgorithm, secret: Buffer.from(inputs.keySecret, "base64") },
  };
}

/** DNS failures, with the resource named first as every message of the package does. */
async function naming<T>(name: string, action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    if (error instanceof DnsAnswerError || error instanceof DnsUnreachableError || error instanceof NameInUseError) {
      throw new Error(`${TYPE_NAME} ${name}: ${error.message}`, { cause: error });
    }
    throw error;
  }
}

async function zoneFor(inputs: Rfc2136Inputs & { zoneName?: string }): Promise<string> {
  return inputs.zoneName ?? inputs.zone ?? (await zoneOf(targetOf(inputs), inputs.name));
}

interface Served extends RecordText {
  ttl: number;
}

function servedOf(record: ResourceRecord): Served {
  return { ...textOf(record), ttl: record.ttl };
}

/** The records at the name that stand in the record's place: ours, a CNAME, or a DMARC policy (`v=DMARC1`). */
async function recordsInPlace(inputs: Rfc2136Inputs, zone: string): Promise<Served[]> {
  const types = Object.values(PUBLISHED_TYPES);
  const found = await authoritativeRecords(targetOf(inputs), zone, inputs.name, types);
  return planAtName(found, inputs).replaced.map(servedOf);
}

async function isServed(inputs: Rfc2136Inputs, zone: string): Promise<boolean> {
  return (await recordsInPlace(inputs, zone)).some((record) => sameText(record, inputs));
}

/**
 * What the server holds in the record's place, as a refresh reports it: ours
 * when it stands there alone; else what replaced it or stands beside it (a
 * CNAME, or another DMARC policy, which makes receivers ignore both), so the
 * next `up` puts the declared record back alone; else nothing (other TXT
 * records at the name, such as site verifications, are not ours).
 */
async function servedRecord(inputs: Rfc2136Inputs, zone: string): Promise<Served | undefined> {
  const inPlace = await recordsInPlace(inputs, zone);
  return inPlace.find((record) => !sameText(record, inputs)) ?? inPlace[0];
}

/**
 * Writes the record over what stands in its place and checks the server
 * serves it, so a success means the zone holds it (a server silently drops
 * a CNAME added beside data of a type not read here). Writes nothing when
 * the zone already serves it as declared: a record published before (a
 * tenant moving in) is taken over as it is.
 */
async function publish(inputs: Rfc2136Inputs, zone: string, previous?: RecordText): Promise<void> {
  if ((await putDmarcRecord(targetOf(inputs), { ...inputs, zone }, previous)) === "unchanged") return;
  if (!(await isServed(inputs, zone))) {
    throw new Error(
      `${TYPE_NAME} ${inputs.name}: ${inputs.server} accepted the update but does not serve the ${inputs.type} record; another record type at the name may keep a CNAME out. Look at what zone ${zone} holds at ${inputs.name}.`,
    );
  }
}

/** A new server or zone moves the record: removed where it was, published where the zone is found now. */
const moves = { changedBy: ["server", "zone"] } as const;

export const rfc2136Record = defineResource({
  typeName: TYPE_NAME,
  description:
    "A DNS record published by dynamic update (RFC 2136) signed with a TSIG key (RFC 8945), straight to the zone's primary server: BIND, Knot, PowerDNS, Microsoft DNS and hosted services that accept RFC 2136. Made for a Domain's `setupRecord`. Create and update replace only what stands in the record's place (its previous value, any other `v=DMARC1` policy, a CNAME) in one guarded message and leave every other record at the name; a CNAME is refused where other records stand; delete removes only the record written; read asks the server itself, so a refresh sees changes made elsewhere. Needs no `dmarc:*` settings.",
  idFormat: "<name>",
  inputs: Rfc2136Inputs,
  outputs: Rfc2136Outputs,
  secretInputs: ["keySecret"],
  standalone: true,
  updatedBy: { zoneName: moves },
  replaceOn: ["name"],

  // The create replaces what stands at the name: the record served there is the create's either way.
  ownership: "createTakesIt",
  async lookUp(_ctx, inputs) {
    return naming(inputs.name, async () =>
      (await isServed(inputs, await zoneFor(inputs))) ? [{ id: inputs.name, label: inputs.name }] : [],
    );
  },

  async create(_ctx, inputs) {
    return naming(inputs.name, async () => {
      const zone = await zoneFor(inputs);
      await publish(inputs, zone);
      return { id: inputs.name, outs: { ...inputs, zoneName: zone } };
    });
  },

  async read(_ctx, id, props) {
    // Without the recorded server and key there is nothing to ask.
    if (!props) return undefined;
    return naming(id, async () => {
      const zoneName = await zoneFor(props);
      const served = await servedRecord({ ...props, name: id }, zoneName);
      return served && { ...props, name: id, zoneName, ...served };
    });
  },

  async update(_ctx, _id, olds, news, changed) {
    return naming(news.name, async () => {
      const moved = updateMayChange(moves, olds, changed);
      // The old record goes first: the old and the new server may serve the same zone.
      if (moved) await removeRecord(targetOf(olds), { ...olds, zone: await zoneFor(olds) });
      const zone = moved ? await zoneFor(news) : await zoneFor({ ...news, zoneName: olds.zoneName });
      // Our previous value is ours to replace even when it reads as no DMARC policy.
      await publish(news, zone, moved ? undefined : olds);
      return { ...news, zoneName: zone };
    });
  },

  async delete(_ctx, id, props) {
    await naming(id, async () => removeRecord(targetOf(props), { ...props, zone: await zoneFor(props) }));
  },
});

/** The Rfc2136Record resource; its inputs, outputs and id: docs/resources/rfc2136Record.md. */
export const Rfc2136Record = resourceClass(rfc2136Record);
export type Rfc2136Record = InstanceType<typeof Rfc2136Record>;
export type Rfc2136RecordArgs = ConstructorParameters<typeof Rfc2136Record>[1];
