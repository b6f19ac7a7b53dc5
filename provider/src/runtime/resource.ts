import * as pulumi from "@pulumi/pulumi";
import type { z } from "zod";
import { idOutputsOf, type ObjectSchema, type ResourceDefinition, secretKeysOf } from "./lifecycle";
import { PROVIDER_KEY, providerSource } from "./providerModule";
import { recordProgramFrames } from "./stackFrames";
import { pluginTypeToken, typeToken as typeTokenOf } from "./typeToken";

/** A declared value: plain or a Pulumi input, with the items of lists and the fields of objects inputs too. */
type Declared<T> = pulumi.Input<
  [T] extends [readonly (infer Item)[]]
    ? Declared<Item>[]
    : [T] extends [Record<string, unknown>]
      ? { [K in keyof T]: Declared<Exclude<T[K], undefined>> }
      : T
>;

/** Inputs every resource accepts. */
interface AdoptableArgs {
  /**
   * Id of an existing object to take under management instead of creating
   * one; nothing is changed, and the create fails if the object differs from
   * the declaration. Pulumi's `import` option cannot be used with dynamic
   * providers (pulumi/pulumi#16175). Each type's id format is on its
   * reference page (docs/resources/), e.g. a Domain's `<organizationId>/<domain>`.
   */
  importId?: pulumi.Input<string>;
}

type DeclaredFields<T> = { [K in keyof T]: Declared<Exclude<T[K], undefined>> };

/**
 * A resource's constructor arguments, derived from its input schema: fields
 * with a default, and those a provider setting fills (`S`), are optional.
 */
type ArgsOf<I extends ObjectSchema, S extends string = never, U extends string = never> = DeclaredFields<
  Omit<z.input<I>, S | U>
> &
  Partial<DeclaredFields<Pick<z.input<I>, S & keyof z.input<I>>>> &
  AdoptableArgs;

/** A resource's outputs, derived from its schemas: every input, every computed output and the id-derived ones. */
type OutputsOf<I extends ObjectSchema, O extends ObjectSchema, D extends string> = {
  readonly [K in keyof (z.output<I> & z.output<O>)]-?: pulumi.Output<(z.output<I> & z.output<O>)[K]>;
} & { readonly [K in D]: pulumi.Output<string> };

export type ResourceClass<
  I extends ObjectSchema,
  O extends ObjectSchema,
  D extends string,
  S extends string,
  U extends string,
> = new (
  name: string,
  args: ArgsOf<I, S, U>,
  opts?: pulumi.CustomResourceOptions,
) => pulumi.CustomResource & OutputsOf<I, O, D>;

/**
 * The URN a resource will have, as an input that depends on no resource.
 * `createUrn` under a parent depends on the parent; the engine waits for
 * every child of a component a resource depends on, so two such siblings
 * (two domains' verifications in one Tenant) would each wait for the other
 * for ever.
 */
function ownUrn(name: string, type: string, parent: pulumi.Resource | undefined): pulumi.Output<string> {
  const urn = pulumi.createUrn(name, type, parent);
  return pulumi.output(new Promise<string>((resolve) => urn.apply(resolve)));
}

/**
 * Whether the classes register the provider plugin's own types
 * (`dmarc:index:<Type>`, no `__provider`): in the plugin's process, where a
 * component the plugin constructs (the Tenant) declares its resources for
 * the plugin itself to serve. A program's classes are dynamic resources.
 */
let asPluginTypes = false;

/** Makes every resource declared from now on in this process one of the plugin's types. */
export function declareAsPluginTypes(): void {
  asPluginTypes = true;
}

/**
 * The resource class of a definition: a dynamic resource (the type token
 * of {@link typeTokenOf} and a `__provider` module, which is all
 * `pulumi.dynamic.Resource` adds to a custom resource) whose `__provider` is
 * the short text of {@link providerSource} rather than Pulumi's serialized
 * closure; the outputs it records (listed so the SDK exposes them as
 * properties), the secret ones, and those derived from the id.
 */
export function resourceClass<
  I extends ObjectSchema,
  O extends ObjectSchema,
  D extends string,
  S extends keyof z.input<I> & string,
  U extends keyof z.input<I> & string,
>(definition: ResourceDefinition<I, O, D, S, U>): ResourceClass<I, O, D, S, U> {
  const { typeName, secretInputs = [], idOutputs, urnInput } = definition;
  const secrets = secretKeysOf(definition);
  const unknownOutputs = Object.fromEntries(Object.keys(definition.outputs.shape).map((key) => [key, undefined]));

  const typeToken = typeTokenOf(typeName);
  const provider = { [PROVIDER_KEY]: providerSource(typeName) };

  class DmarcResource extends pulumi.CustomResource {
    constructor(name: string, args: ArgsOf<I, S, U>, opts?: pulumi.CustomResourceOptions) {
      // The plugin gives its resources their URN itself, and is their provider.
      const dynamic = !asPluginTypes;
      const token = dynamic ? typeToken : pluginTypeToken(typeName);
      const urn = urnInput === undefined || !dynamic ? {} : { [urnInput]: ownUrn(name, typeToken, opts?.parent) };
      const options =
        secrets.length === 0
          ? opts
          : { ...opts, additionalSecretOutputs: [...(opts?.additionalSecretOutputs ?? []), ...secrets] };
      const given = args as Record<string, unknown>;
      const secretArgs = Object.fromEntries(
        secretInputs.filter((key) => given[key] !== undefined).map((key) => [key, pulumi.secret(given[key])]),
      );
      const restoreStackTrace = recordProgramFrames();
      try {
        const declared = { ...args, ...secretArgs, ...urn, ...unknownOutputs, ...(dynamic ? provider : {}) };
        super(token, name, declared, options);
      } finally {
        restoreStackTrace();
      }
      const self = this as unknown as Record<string, pulumi.Output<string>>;
      const fromId = this.id.apply((id) => idOutputsOf(definition, id));
      for (const key of Object.keys(idOutputs ?? {})) self[key] = fromId.apply((outputs) => outputs[key] as string);
    }
  }
  Object.defineProperty(DmarcResource, "name", { value: typeName });
  return DmarcResource as unknown as ResourceClass<I, O, D, S, U>;
}
