// The demo's DNS provider: a record in the emulator's simulated DNS zone,
// written through its control plane (PUT /_emulator/dns/records), which the
// emulator's verifier resolves like real DNS. A real stack declares its DNS
// provider's record resource here instead: cloudflare.DnsRecord,
// aws.route53.Record or any other (see examples/cloudflare, examples/route53).
import * as pulumi from "@pulumi/pulumi";

interface RecordInputs {
  /** The emulator's base address; its control plane lives under /_emulator. */
  emulatorUrl: string;
  /** Fully qualified name, e.g. `_dmarc.acme.example`. */
  name: string;
  type: "TXT" | "CNAME";
  value: string;
}

// Serialized with the provider into the dynamic provider process, so it uses globals only.
async function controlPlane(emulatorUrl: string, method: string, query: string, body?: unknown): Promise<Response> {
  const response = await fetch(`${emulatorUrl}/_emulator/dns/records${query}`, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) {
    throw new Error(
      `SimulatedDnsRecord: ${method} /_emulator/dns/records answered ${response.status}: ${await response.text()}`,
    );
  }
  return response;
}

const simulatedZone: pulumi.dynamic.ResourceProvider<RecordInputs, RecordInputs> = {
  async create(inputs) {
    await controlPlane(inputs.emulatorUrl, "PUT", "", { name: inputs.name, type: inputs.type, values: [inputs.value] });
    return { id: inputs.name, outs: inputs };
  },
  async read(id, props) {
    if (!props) return {};
    const records = (await (await controlPlane(props.emulatorUrl, "GET", "")).json()) as {
      name: string;
      type: "TXT" | "CNAME";
      values: string[];
    }[];
    const found = records.find((record) => record.name === id);
    if (!found) return {};
    return { id, props: { ...props, type: found.type, value: found.values.join("") } };
  },
  async update(_id, olds, news) {
    if (olds.name !== news.name) {
      await controlPlane(olds.emulatorUrl, "DELETE", `?name=${encodeURIComponent(olds.name)}`);
    }
    await controlPlane(news.emulatorUrl, "PUT", "", { name: news.name, type: news.type, values: [news.value] });
    return { outs: news };
  },
  async delete(_id, props) {
    await controlPlane(props.emulatorUrl, "DELETE", `?name=${encodeURIComponent(props.name)}`);
  },
};

export interface SimulatedDnsRecordArgs {
  emulatorUrl: pulumi.Input<string>;
  name: pulumi.Input<string>;
  type: pulumi.Input<"TXT" | "CNAME">;
  value: pulumi.Input<string>;
}

/** One record of the emulator's simulated DNS zone. */
export class SimulatedDnsRecord extends pulumi.dynamic.Resource {
  declare readonly name: pulumi.Output<string>;
  declare readonly type: pulumi.Output<"TXT" | "CNAME">;
  declare readonly value: pulumi.Output<string>;

  constructor(name: string, args: SimulatedDnsRecordArgs, opts?: pulumi.CustomResourceOptions) {
    super(simulatedZone, name, args, opts, "demo", "SimulatedDnsRecord");
  }
}
