import type * as provider from "@pulumi/pulumi/provider";
import { dynamicProviderHost } from "../providerHost";
import { definitionOf } from "../registry";
import { clientFrom } from "../runtime/config";
import type { DynamicProviderHost } from "../runtime/host";
import { type AnyResourceDefinition, idOutputsOf, secretKeysOf } from "../runtime/lifecycle";
import { pluginTypeName } from "../runtime/typeToken";
import { asSecret, containsSecret, inputFailure, plain, revealed } from "../runtime/values";
import { type InvokeName, invokeDefinitions } from "./invokes";
import { packageSchema } from "./schema";
import { constructTenant } from "./tenantComponent";

// The provider plugin's calls, each handed to the same host the dynamic
// resources use: the plugin adds the engine's secret markers, the URN a
// resource logs on, and the outputs made from the id, which the dynamic
// resources' classes add in the program instead.

type Props = Record<string, unknown>;

/**
 * Properties as the host takes them, and the keys that held a secret
 * anywhere inside. A property whose value is null is one not given: a
 * component passes an optional setting it does not have as null.
 */
function fromEngine(props: Props | undefined): { props: Props; secrets: Set<string> } {
  const given = Object.fromEntries(Object.entries(props ?? {}).filter(([, value]) => revealed(value) !== null));
  return {
    props: revealed(given) as Props,
    secrets: new Set(Object.keys(given).filter((key) => containsSecret(given[key]))),
  };
}

/** The keys to mark secret: those the definition keeps secret, and those the request gave as secrets. */
function secretsOf(definition: AnyResourceDefinition, given: ReadonlySet<string>): Set<string> {
  return new Set([...secretKeysOf(definition), ...given]);
}

function toEngine(props: Props, secrets: ReadonlySet<string>): Props {
  return Object.fromEntries(
    Object.entries(props).map(([key, value]) => (secrets.has(key) ? [key, asSecret(value)] : [key, value])),
  );
}

/** The definition of the type in a resource's URN (`urn:pulumi:<stack>::<project>::<parent type>$dmarc:index:Domain::<name>`). */
function definitionOfUrn(urn: string): AnyResourceDefinition {
  const typeName = pluginTypeName(urn.split("::")[2]?.split("$").pop() ?? "");
  const definition = typeName === undefined ? undefined : definitionOf(typeName);
  if (!definition) throw new Error(`the DMARC provider has no resource type for ${urn}`);
  return definition;
}

/** What a resource records: the host's outputs, those made from the id, secrets marked, the URN input left out. */
export function recorded(
  definition: AnyResourceDefinition,
  id: string,
  outs: Props,
  secrets: ReadonlySet<string>,
): Props {
  const { [definition.urnInput ?? ""]: _urn, ...kept } = outs;
  return toEngine({ ...kept, ...idOutputsOf(definition, id) }, secretsOf(definition, secrets));
}

/**
 * Recorded properties as the host compares them: an output made from the id
 * that the declaration does not give is left out, as the dynamic resources
 * never record one (a DomainVerification declared by `domainId` has an
 * `organizationId` output, not input).
 */
function comparable(definition: AnyResourceDefinition, olds: Props, news: Props): Props {
  const derived = Object.keys(definition.idOutputs ?? {}).filter((key) => news[key] === undefined);
  return Object.fromEntries(Object.entries(olds).filter(([key]) => !derived.includes(key)));
}

/**
 * A diff's, an update's or its preview's request as the host takes it: the
 * recorded properties, the declared ones, and the keys declared secret.
 */
function updateRequest(urn: string, olds: Props | undefined, news: Props | undefined) {
  const definition = definitionOfUrn(urn);
  const given = fromEngine(news);
  const previous = comparable(definition, fromEngine(olds).props, given.props);
  return { definition, previous, declared: given.props, secrets: given.secrets };
}

/** The inputs with the URN in the input the definition logs on, if it has one. */
function withUrn(definition: AnyResourceDefinition, props: Props, urn: string): Props {
  return definition.urnInput === undefined ? props : { ...props, [definition.urnInput]: urn };
}

function checkInvokeInputs(name: string, inputs: Props) {
  const definition = invokeDefinitions[name as InvokeName];
  if (!definition) return { failures: [{ property: "", reason: `the DMARC provider has no function "${name}"` }] };
  const parsed = definition.inputs.safeParse(inputs);
  if (parsed.success) return { definition, inputs: parsed.data };
  return { failures: parsed.error.issues.map((issue) => inputFailure(name, inputs, issue)) };
}

/** Reads an object back: for refresh, with its recorded properties; for `pulumi import`, with none. */
async function readResource(host: DynamicProviderHost, id: string, urn: string, props: Props | undefined) {
  const definition = definitionOfUrn(urn);
  const given = fromEngine(props);
  const known = Object.keys(given.props).length > 0 ? withUrn(definition, given.props, urn) : undefined;
  const found = await host.read(definition.typeName, id, known);
  if (found.id === undefined) return { id: "", props: {}, inputs: {} };
  const { [definition.urnInput ?? ""]: _urn, ...inputs } = found.inputs ?? {};
  const secrets = secretsOf(definition, given.secrets);
  return {
    id: found.id,
    props: recorded(definition, found.id, found.props ?? {}, secrets),
    inputs: toEngine(inputs, secrets),
  };
}

/**
 * An update's outputs during a preview, made without the service: the id and
 * what is derived from it stay known, so the resource's dependants preview
 * as unchanged rather than replaced (see DynamicProviderHost.previewUpdate).
 */
export function previewedUpdate(id: string, urn: string, olds: Props, news: Props): Props {
  const { definition, previous, declared, secrets } = updateRequest(urn, olds, news);
  const outs = dynamicProviderHost.previewUpdate(definition.typeName, previous, declared);
  return recorded(definition, id, outs, secrets);
}

/** The resource calls of the plugin's provider, each over the host's call of the same name. */
function resourceCalls(
  host: DynamicProviderHost,
): Pick<provider.Provider, "check" | "diff" | "create" | "read" | "update" | "delete"> {
  return {
    async check(urn, olds, news) {
      const definition = definitionOfUrn(urn);
      const given = fromEngine(news);
      const result = await host.check(definition.typeName, fromEngine(olds).props, given.props);
      if (result.failures && result.failures.length > 0) return { failures: [...result.failures] };
      return { inputs: toEngine(result.inputs ?? {}, secretsOf(definition, given.secrets)) };
    },

    async diff(id, urn, olds, news) {
      const { definition, previous, declared } = updateRequest(urn, olds, news);
      return host.diff(definition.typeName, id, previous, declared);
    },

    async create(urn, inputs) {
      const definition = definitionOfUrn(urn);
      const given = fromEngine(inputs);
      const created = await host.create(definition.typeName, withUrn(definition, given.props, urn));
      return { id: created.id, outs: recorded(definition, created.id, created.outs ?? {}, given.secrets) };
    },

    read: (id, urn, props) => readResource(host, id, urn, props),

    async update(id, urn, olds, news) {
      const { definition, previous, declared, secrets } = updateRequest(urn, olds, news);
      const updated = await host.update(definition.typeName, id, previous, withUrn(definition, declared, urn));
      return { outs: recorded(definition, id, updated.outs ?? {}, secrets) };
    },

    async delete(id, urn, props) {
      const definition = definitionOfUrn(urn);
      await host.delete(definition.typeName, id, withUrn(definition, fromEngine(props).props, urn));
    },
  };
}

/**
 * The plugin's provider: every resource type of the registry and the invoke table, over the one host;
 * it serves `builtSchema` when its build carries one, else the schema of this version.
 */
export function dmarcProvider(version: string, builtSchema?: string): provider.Provider {
  const host = dynamicProviderHost;
  // Made once: the engine and the language hosts ask for it again for each program they load.
  let schema: string | undefined;
  return {
    version,
    getSchema: async () => {
      schema ??= builtSchema ?? JSON.stringify(packageSchema(version));
      return schema;
    },
    ...resourceCalls(host),
    construct: constructTenant,
    async invoke(token, inputs) {
      const name = pluginTypeName(token) ?? token;
      const checked = checkInvokeInputs(name, fromEngine(inputs).props);
      if (!checked.definition) return { failures: checked.failures };
      const outputs = await checked.definition.run(clientFrom(host.currentSettings()), checked.inputs as never);
      return { outputs: toEngine(plain(outputs) as Props, new Set(checked.definition.secretOutputs ?? [])) };
    },
  };
}
