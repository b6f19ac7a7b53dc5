import type * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { DomainName, type Domain as DomainRecord, DomainType, type SetupRecord, SetupRecordType } from "../api";
import type { DmarcClient } from "../client";
import { createOrAdopt, finishCreate, joinId, splitId } from "../runtime/adopt";
import type { ResourceDefinition } from "../runtime/lifecycle";
import { type AdoptableArgs, DmarcResource } from "../runtime/resource";

export const DomainInputs = z
  .object({
    organizationId: z.string().min(1, { message: "must be an organisation id" }),
    domain: DomainName,
    type: DomainType.default("sending"),
    groupId: z.string().min(1, { message: "must be a domain group id" }),
    /** Which setup record to publish: a TXT record with the DMARC policy, or a CNAME delegating it to the service. */
    setupRecordType: SetupRecordType.default("TXT"),
    /** DNS zone the record is published in, for the zone-relative record name; defaults to the domain itself. */
    zone: DomainName.optional(),
  })
  .refine((inputs) => !inputs.zone || inputs.domain === inputs.zone || inputs.domain.endsWith(`.${inputs.zone}`), {
    message: "must be the domain itself or one of its parent zones",
    path: ["zone"],
  });
export type DomainInputs = z.infer<typeof DomainInputs>;

/** The DNS record to publish, shaped to feed a DNS provider's record resource. */
export interface DnsSetupRecord {
  /** Fully qualified host, `_dmarc.<domain>`. */
  host: string;
  /** Host relative to the zone (`_dmarc` for the zone apex domain), the `name` most DNS providers expect. */
  name: string;
  zone: string;
  /** Record type as the service returned it, lower case (`txt`, `cname`). */
  type: string;
  /** Upper-case record type ready for DNS providers (`TXT`, `CNAME`). */
  recordType: "TXT" | "CNAME";
  /** Record content: the DMARC policy text for TXT, the service's host name for CNAME. */
  value: string;
}

export interface DomainOutputs extends DomainInputs {
  setupRecord: DnsSetupRecord;
  verified: boolean;
  policy: string;
  domainGroup: string | null;
}

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

async function outputsFor(client: DmarcClient, inputs: DomainInputs, found: DomainRecord): Promise<DomainOutputs> {
  const record = await client.getSetupRecord(inputs.organizationId, inputs.domain, inputs.setupRecordType);
  return {
    ...inputs,
    type: found.type,
    groupId: found.domainGroupId ?? inputs.groupId,
    setupRecord: toDnsRecord(record, inputs.domain, inputs.zone),
    verified: found.domainVerified,
    policy: found.policy,
    domainGroup: found.domainGroup ?? null,
  };
}

export const domain: ResourceDefinition<DomainInputs, DomainOutputs> = {
  typeName: "Domain",
  inputs: DomainInputs,
  replaceOn: ["organizationId", "domain"],

  async create({ client }, inputs) {
    const created = await createOrAdopt(
      client,
      () =>
        client.createDomain({
          organizationId: inputs.organizationId,
          domain: inputs.domain,
          type: inputs.type,
          groupId: inputs.groupId,
        }),
      () => client.getDomain(inputs.organizationId, inputs.domain),
    );
    const id = joinId(inputs.organizationId, inputs.domain);
    return { id, outs: await finishCreate(id, inputs, () => outputsFor(client, inputs, created)) };
  },

  async read({ client }, id, props) {
    const { organizationId, child: domainName } = splitId(id, "Domain", "domain");
    const found = await client.getDomain(organizationId, domainName);
    if (!found) return undefined;
    const inputs: DomainInputs = {
      organizationId,
      domain: domainName,
      type: found.type,
      groupId: found.domainGroupId ?? props?.groupId ?? "",
      setupRecordType: props?.setupRecordType ?? "TXT",
      ...(props?.zone ? { zone: props.zone } : {}),
    };
    return { outs: await outputsFor(client, inputs, found) };
  },

  async update({ client }, _id, olds, news) {
    const patch = {
      ...(olds.type !== news.type ? { type: news.type } : {}),
      ...(olds.groupId !== news.groupId ? { groupId: news.groupId } : {}),
    };
    const found =
      Object.keys(patch).length > 0
        ? await client.updateDomain(news.organizationId, news.domain, patch)
        : await client.getDomain(news.organizationId, news.domain);
    if (!found)
      throw new Error(`Domain ${news.domain} is gone from organisation ${news.organizationId}; run pulumi refresh`);
    return outputsFor(client, news, found);
  },

  async delete({ client }, _id, props) {
    await client.deleteDomain(props.organizationId, props.domain);
  },
};

export interface DomainArgs extends AdoptableArgs {
  /** Owning organisation. A different organisation replaces the domain. */
  organizationId: pulumi.Input<string>;
  /** The domain name, lower case, e.g. `example.com`. A different name replaces the domain. */
  domain: pulumi.Input<string>;
  /** `sending` (default) or `parked`. Updates in place. */
  type?: pulumi.Input<"sending" | "parked">;
  /** Domain group to assign it to. Updates in place. */
  groupId: pulumi.Input<string>;
  /** `TXT` (default) or `CNAME`: which setup record to publish. */
  setupRecordType?: pulumi.Input<"TXT" | "CNAME">;
  /** DNS zone the record goes into, for `setupRecord.name`; defaults to the domain. */
  zone?: pulumi.Input<string>;
}

/**
 * A domain of an organisation. `setupRecord` is the DMARC record to publish,
 * ready for a DNS provider's record resource. Resource id: `<organizationId>/<domain>`.
 */
export class Domain extends DmarcResource {
  declare readonly organizationId: pulumi.Output<string>;
  declare readonly domain: pulumi.Output<string>;
  declare readonly type: pulumi.Output<"sending" | "parked">;
  declare readonly groupId: pulumi.Output<string>;
  declare readonly setupRecordType: pulumi.Output<"TXT" | "CNAME">;
  declare readonly zone: pulumi.Output<string | undefined>;
  declare readonly setupRecord: pulumi.Output<DnsSetupRecord>;
  /** Whether the service found the published record; refreshed on read. */
  declare readonly verified: pulumi.Output<boolean>;
  /** The DMARC policy the service sees: none, quarantine, reject, missing or invalid. */
  declare readonly policy: pulumi.Output<string>;
  declare readonly domainGroup: pulumi.Output<string | null>;

  constructor(name: string, args: DomainArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      "Domain",
      name,
      { ...args, setupRecord: undefined, verified: undefined, policy: undefined, domainGroup: undefined },
      opts,
    );
  }
}
