import { z } from "zod";
import {
  DomainName,
  DomainPolicy,
  type Domain as DomainRecord,
  DomainType,
  type SetupRecord,
  SetupRecordType,
} from "../api";
import type { DmarcClient } from "../client";
import { joinId, splitId } from "../runtime/ids";
import { defineResource } from "../runtime/lifecycle";
import { resourceClass } from "../runtime/resource";
import { finishCreate, settleCall } from "../runtime/settle";
import { GroupId, OrganizationId } from "./fields";

const DomainInputs = z
  .object({
    organizationId: OrganizationId.describe("The organisation the domain belongs to."),
    domain: DomainName.describe("The domain name, lower case, e.g. `example.com`."),
    type: DomainType.describe("Whether the domain sends mail or is parked.").default("sending"),
    groupId: GroupId.describe(
      "The domain group to assign it to: a DomainGroup's `groupId`, or its resource id (`<organizationId>/<groupId>`, as the code `pulumi import` writes refers to it).",
    ),
    setupRecordType: SetupRecordType.describe(
      "Which setup record to publish: `TXT` with the DMARC policy, or a `CNAME` delegating it to the service.",
    ).default("TXT"),
    zone: DomainName.optional().describe(
      "DNS zone the record is published in, for `setupRecord.name`; the domain itself when not given.",
    ),
    declaredTogether: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(
        "How many domains of the organisation the program declares together, this one included (a `Tenant` sets it): a create waits until each of them is either being created or declared as existing, and the new ones go out as one `POST /v1/domains/batch`. Never compared: changing it alone changes nothing.",
      ),
  })
  .refine((inputs) => !inputs.zone || inputs.domain === inputs.zone || inputs.domain.endsWith(`.${inputs.zone}`), {
    message: "must be the domain itself or one of its parent zones",
    path: ["zone"],
  });
type DomainInputs = z.output<typeof DomainInputs>;

/** The DNS record to publish, shaped to feed a DNS provider's record resource. */
const DnsSetupRecord = z.object({
  host: z.string().describe("Fully qualified host, `_dmarc.<domain>`."),
  name: z
    .string()
    .describe("Host relative to the zone (`_dmarc` for the zone apex domain), the `name` most DNS providers expect."),
  zone: z.string().describe("The zone the record goes into."),
  type: z.string().describe("Record type as the service returned it, lower case (`txt`, `cname`)."),
  recordType: SetupRecordType.describe("Upper-case record type ready for DNS providers (`TXT`, `CNAME`)."),
  value: z.string().describe("Record content: the DMARC policy text for TXT, the service's host name for CNAME."),
});
export type DnsSetupRecord = z.infer<typeof DnsSetupRecord>;

const DomainOutputs = z.object({
  setupRecord: DnsSetupRecord.describe("The record to publish, ready for a DNS provider's record resource."),
  verified: z.boolean().describe("Whether the service found the published record; read again on refresh."),
  policy: DomainPolicy.describe("The DMARC policy the service sees."),
  domainGroup: z.string().nullable().describe("Name of the domain's group, as the service reports it."),
});
type DomainProps = Omit<DomainInputs, "declaredTogether"> & z.output<typeof DomainOutputs>;

function toDnsRecord(record: SetupRecord, domain: string, zone: string | undefined): DnsSetupRecord {
  const zoneName = zone ?? domain;
  const relative = record.host === zoneName ? "@" : record.host.slice(0, -(zoneName.length + 1));
  return {
    host: record.host,
    name: relative,
    zone: zoneName,
    type: record.type,
    recordType: record.type.toUpperCase() as "TXT" | "CNAME",
    value: record.value,
  };
}

/**
 * The service derives the setup record from the domain, its type and the
 * record type asked for; it has no other input and does not change on its
 * own, so it is read again only when one of those changed.
 */
async function setupRecordFor(client: DmarcClient, inputs: DomainInputs): Promise<DnsSetupRecord> {
  const record = await client.getSetupRecord(inputs.organizationId, inputs.domain, inputs.setupRecordType);
  return toDnsRecord(record, inputs.domain, inputs.zone);
}

/** What the state records; the batching hint is a declaration's only, so a read never finds it changed. */
function propsOf(inputs: DomainInputs, found: DomainRecord, setupRecord: DnsSetupRecord): DomainProps {
  const { declaredTogether: _hint, ...declared } = inputs;
  return {
    ...declared,
    type: found.type,
    groupId: found.domainGroupId ?? inputs.groupId,
    setupRecord,
    verified: found.domainVerified,
    policy: found.policy,
    domainGroup: found.domainGroup ?? null,
  };
}

/** Where the zone-relative record name comes from; a change needs no call to the service. */
function withZone(record: DnsSetupRecord, inputs: DomainInputs): DnsSetupRecord {
  return toDnsRecord(
    { host: record.host, type: record.type as SetupRecord["type"], value: record.value },
    inputs.domain,
    inputs.zone,
  );
}

/** What the service derives the setup record from, besides the domain: a change reads it again. */
const RECORD_SOURCES = ["type", "setupRecordType"] as const;

/**
 * The recorded setup record, its name relative to the declared zone, while
 * nothing the service derives it from changed; undefined when it must be
 * read again. The one rule of an update, a read and an update's preview.
 */
function keptSetupRecord(
  recorded: DnsSetupRecord | undefined,
  inputs: DomainInputs,
  changed: ReadonlySet<string>,
): DnsSetupRecord | undefined {
  if (recorded === undefined || RECORD_SOURCES.some((input) => changed.has(input))) return undefined;
  return withZone(recorded, inputs);
}

const readAgain = { changedBy: [], everyUpdate: true } as const;

export const domain = defineResource({
  typeName: "Domain",
  description:
    "A domain of an organisation. `setupRecord` is the DMARC record to publish, ready for a DNS provider's record resource; a `DomainVerification` after that record waits until the service has verified it.",
  idFormat: "<organizationId>/<domain>",
  inputs: DomainInputs,
  outputs: DomainOutputs,
  updatedBy: {
    setupRecord: {
      changedBy: [...RECORD_SOURCES, "zone"],
      // The host is `_dmarc.<domain>` (published), the zone is declared, the type the one asked for: only the value is the service's.
      previewed: (olds, news, changed, unknown) =>
        keptSetupRecord(olds.setupRecord, news, changed) ?? {
          ...withZone(olds.setupRecord, news),
          type: news.setupRecordType.toLowerCase(),
          recordType: news.setupRecordType,
          value: unknown,
        },
    },
    // What the service says of the domain: every update reads the domain again.
    verified: readAgain,
    policy: readAgain,
    domainGroup: readAgain,
  },
  importedAs: { groupId: (props) => (props.groupId ? joinId(props.organizationId, props.groupId) : undefined) },
  replaceOn: ["organizationId", "domain"],
  hints: ["declaredTogether"],

  checked: ({ client }, inputs, creates) => client.domainDeclared(inputs.organizationId, inputs.domain, creates),

  // A domain name is unique within its organisation: the name is the natural key.
  ownership: "uniqueInOrganization",
  lookUp: async ({ client }, inputs) =>
    (await client.getDomain(inputs.organizationId, inputs.domain))
      ? [{ id: joinId(inputs.organizationId, inputs.domain), label: inputs.domain }]
      : [],

  async create({ client }, inputs) {
    const created = await settleCall(
      client,
      () =>
        client.createDomain(
          {
            organizationId: inputs.organizationId,
            domain: inputs.domain,
            type: inputs.type,
            groupId: inputs.groupId,
          },
          inputs.declaredTogether,
        ),
      () => client.getDomain(inputs.organizationId, inputs.domain),
    );
    const id = joinId(inputs.organizationId, inputs.domain);
    const outs = await finishCreate(id, inputs, async () =>
      propsOf(inputs, created, await setupRecordFor(client, inputs)),
    );
    return { id, outs };
  },

  async read({ client }, id, props) {
    const { organizationId, child: domainName } = splitId(id, "Domain", "domain");
    const found = await client.readDomain(organizationId, domainName);
    if (!found) return undefined;
    const inputs: DomainInputs = {
      organizationId,
      domain: domainName,
      type: found.type,
      groupId: found.domainGroupId ?? props?.groupId ?? "",
      setupRecordType: props?.setupRecordType ?? "TXT",
      ...(props?.zone ? { zone: props.zone } : {}),
    };
    const changed = new Set(props?.type === found.type ? [] : ["type"]);
    const kept = keptSetupRecord(props?.setupRecord, inputs, changed);
    return propsOf(inputs, found, kept ?? (await setupRecordFor(client, inputs)));
  },

  async update({ client }, _id, olds, news, changed) {
    const patch = {
      ...(changed.has("type") ? { type: news.type } : {}),
      ...(changed.has("groupId") ? { groupId: news.groupId } : {}),
    };
    const found =
      Object.keys(patch).length > 0
        ? await client.updateDomain(news.organizationId, news.domain, patch)
        : await client.getDomain(news.organizationId, news.domain);
    if (!found)
      throw new Error(`Domain ${news.domain} is gone from organisation ${news.organizationId}; run pulumi refresh`);
    const kept = keptSetupRecord(olds.setupRecord, news, changed);
    return propsOf(news, found, kept ?? (await setupRecordFor(client, news)));
  },

  async delete({ client }, _id, props) {
    await client.deleteDomain(props.organizationId, props.domain);
  },
});

/** The Domain resource; its inputs, outputs and id: docs/resources/domain.md. */
export const Domain = resourceClass(domain);
export type Domain = InstanceType<typeof Domain>;
export type DomainArgs = ConstructorParameters<typeof Domain>[1];
