import type { z } from "zod";
import type { DmarcClient } from "../client";
import type { ProviderSettings, SettingKey } from "./config";
import { type EngineLog, engineLogFor } from "./engineLog";

/** What every lifecycle function gets: the shared client, the provider settings, and the engine's log. */
export interface LifecycleContext {
  client: DmarcClient;
  settings: ProviderSettings;
  /** A line in the engine's output on this resource (its definition must name a {@link ResourceDefinition.urnInput}). */
  log: EngineLog;
}

// biome-ignore lint/suspicious/noExplicitAny: any zod object schema, whatever its shape
export type ObjectSchema = z.ZodObject<any>;

/** Inputs after validation and defaults: what the lifecycle functions receive. */
type InputsOf<I extends ObjectSchema> = z.output<I>;

/** Every property a resource records: its inputs, so `diff` can compare declarations, and its computed outputs. */
type PropsOf<I extends ObjectSchema, O extends ObjectSchema> = z.output<I> & z.output<O>;

/** What the engine's diff found: the inputs whose declared value changed. */
type ChangedInputs<I extends ObjectSchema> = ReadonlySet<keyof z.output<I> & string>;

/** An object a create with these inputs may have made, as its type's natural-key lookup finds it. */
export interface CreateCandidate {
  /** Its resource id. */
  id: string;
  /** Its name or key, as a person choosing between candidates reads it. */
  label: string;
  /** When the service created it (ISO 8601), where the service says. */
  createdAt?: string;
  /** When the service created the organisation holding it, where that alone dates it: it is no older. */
  organizationCreatedAt?: string;
}

/**
 * What proves that an object its lookup finds is the one a create of these
 * inputs made, when the create's answer was lost (a killed run, a cut
 * connection): never a matching name alone, which another stack's object or
 * a person's can have too.
 *
 * - `madeDuringRun`: the key is not unique (an organisation's name, a
 *   group's), so only an object the service made after the run began, and
 *   that no stack records, can be the create's.
 * - `uniqueInOrganization`: the key is unique within the organisation (a
 *   domain's name), so the object found is the one declared when that
 *   organisation is this stack's alone, or was made during the run.
 * - `createTakesIt`: a create of these inputs takes over whatever stands at
 *   the key (an invitation of someone already a member, a DNS record at its
 *   name), so the object found is the create's either way, unless another
 *   stack records it.
 */
export type Ownership = "madeDuringRun" | "uniqueInOrganization" | "createTakesIt";

/** An output computed from the resource id alone. */
interface IdOutput {
  /** What the output is, for the resource's reference page. */
  description: string;
  fromId(id: string): string;
}

/**
 * When an update changes one computed output, declared once: an update's
 * preview shows the output unknown (or the part `previewed` knows) when
 * {@link updateMayChange}, and the definition's `update` keeps it as recorded
 * otherwise.
 */
export interface OutputChange<I extends ObjectSchema, O extends ObjectSchema> {
  /** Inputs whose change changes it. */
  changedBy: readonly (keyof z.output<I> & string)[];
  /** Every update reads it from the service again, which may have changed it since the last read. */
  everyUpdate?: true;
  /** Recorded outputs with which any update may change it, whatever changed: in the reference page's words, and as a test. */
  alsoWhen?: { recorded: string; holds(olds: PropsOf<I, O>): boolean };
  /**
   * What a preview knows of it when an update may change it, from the
   * recorded outputs and the new inputs: `unknown` stands for what only the
   * service can tell, and `undefined` for the whole output.
   */
  previewed?(olds: PropsOf<I, O>, news: InputsOf<I>, changed: ReadonlySet<string>, unknown: string): unknown;
}

/** Whether an update with these inputs changed may change the output the rule is of. */
export function updateMayChange<I extends ObjectSchema, O extends ObjectSchema>(
  rule: OutputChange<I, O>,
  olds: PropsOf<I, O>,
  changed: ReadonlySet<string>,
): boolean {
  return (
    rule.everyUpdate === true ||
    rule.changedBy.some((input) => changed.has(input)) ||
    (rule.alsoWhen?.holds(olds) ?? false)
  );
}

/**
 * The rule of each output an update can change, a bare list of inputs
 * made a rule of its own: what an update's preview shows, and the reference
 * pages' preview column (scripts/reference/index.mjs).
 */
export function outputChanges(
  definition: AnyResourceDefinition,
): Record<string, OutputChange<ObjectSchema, ObjectSchema>> {
  const declared: Record<string, readonly string[] | OutputChange<ObjectSchema, ObjectSchema>> = definition.updatedBy;
  return Object.fromEntries(
    Object.entries(declared).map(([output, rule]) => [output, "changedBy" in rule ? rule : { changedBy: rule }]),
  );
}

/**
 * A resource, declared once: what it is and how its id is made, its input
 * schema (validation, types, error text, field descriptions and the `Args` of
 * its class), its computed outputs' schema, which outputs are secret or
 * derived from the resource id, which inputs force a replacement, and its
 * lifecycle functions over the shared client.
 */
export interface ResourceDefinition<
  I extends ObjectSchema,
  O extends ObjectSchema,
  D extends string = never,
  S extends keyof z.input<I> & string = never,
  U extends keyof z.input<I> & string = never,
> {
  /** Type name, as in its type token (runtime/typeToken.ts): `Organization`. */
  typeName: string;
  /** What the resource is and does, in a sentence or two (Markdown), for its reference page. */
  description: string;
  /** How the resource id is made, e.g. `<organizationId>/<domain>`: what `importId` takes to adopt an object. */
  idFormat: string;
  /** Validated inputs; each field's `.describe()` text is its description on the reference page. */
  inputs: I;
  /** Outputs the service computes, recorded next to the inputs. */
  outputs: O;
  /** Outputs kept as Pulumi secrets. */
  secretOutputs?: readonly (keyof z.output<O> & string)[];
  /**
   * Inputs kept as Pulumi secrets even when declared as plain text: the class
   * wraps them, so the state holds them encrypted as inputs and as outputs,
   * and messages about them never quote them.
   */
  secretInputs?: readonly (keyof z.input<I> & string)[];
  /**
   * The resource talks to no DMARC service (a DNS record): it needs no
   * `dmarc:*` settings, and its lifecycle functions never touch `ctx.client`.
   */
  standalone?: true;
  /**
   * Outputs computed from the resource id alone. They are not recorded in the
   * state and stay known while an update is previewed, so dependents do not
   * show as replaced.
   */
  idOutputs?: Readonly<Record<D, IdOutput>>;
  /**
   * Each computed output an update can change, by the inputs whose change
   * changes it (`[]`: no update changes it), or by a rule that says more
   * ({@link OutputChange}). An update's preview shows an output as recorded
   * unless the rule says the update may change it or the last read saw
   * drift, and as not known yet then (or in part); it calls no service. The
   * update's result may fill in what the preview left unknown, never change
   * what it showed (test/resources/updateRules.test.ts holds each type to it).
   */
  updatedBy: Readonly<Record<keyof z.output<O> & string, readonly (keyof z.output<I> & string)[] | OutputChange<I, O>>>;
  /**
   * Inputs that `pulumi import` reads as another resource's id, made from the
   * object read: Pulumi's import writes a value equal to an imported
   * resource's id as a reference to it, so the code it writes names that
   * resource and the engine orders their deletes.
   */
  importedAs?: Readonly<Partial<Record<keyof z.input<I> & string, (props: PropsOf<I, O>) => string | undefined>>>;
  /** Inputs whose change replaces the object instead of updating it. */
  replaceOn: readonly (keyof z.output<I> & string)[];
  /** Inputs that default to a provider setting when not declared, e.g. a webhook's owner to `dmarc:partnerId`. */
  fromSettings?: Readonly<Record<S, SettingKey>>;
  /** The input the class fills with the resource's URN, so `ctx.log` lines show on the resource; not an argument. */
  urnInput?: U;
  /** Inputs that steer how calls go out, never compared: a change of one alone changes nothing on the service. */
  hints?: readonly (keyof z.output<I> & string)[];
  /**
   * Told of each declaration the engine checks with its values known:
   * `creates` when a create is coming for it (it is not in the state and
   * not adopted). For creates that wait for their siblings.
   */
  checked?(ctx: LifecycleContext, inputs: InputsOf<I>, creates: boolean): void;
  /** Output keys whose drift, seen by the last read, needs an update although the inputs did not change. */
  drift?(olds: PropsOf<I, O>): string[];
  /** What proves that an object {@link lookUp} finds is this create's ({@link Ownership}). */
  ownership: Ownership;
  /**
   * Every object a create with these inputs could have made, by its natural
   * key, whoever made it: what recovery weighs when a run was killed during
   * the create ({@link ownership} says how).
   */
  lookUp(ctx: LifecycleContext, inputs: InputsOf<I>): Promise<CreateCandidate[]>;
  create(ctx: LifecycleContext, inputs: InputsOf<I>): Promise<{ id: string; outs: PropsOf<I, O> }>;
  /** Reads the object back; `undefined` when it is gone, so refresh drops it. `props` is absent on import. */
  read(ctx: LifecycleContext, id: string, props: PropsOf<I, O> | undefined): Promise<PropsOf<I, O> | undefined>;
  update(
    ctx: LifecycleContext,
    id: string,
    olds: PropsOf<I, O>,
    news: InputsOf<I>,
    changed: ChangedInputs<I>,
  ): Promise<PropsOf<I, O>>;
  /** Must succeed when the object is already gone. */
  delete(ctx: LifecycleContext, id: string, props: PropsOf<I, O>): Promise<void>;
}

/** The keys a resource keeps secret, on both faces: its secret outputs, and its secret inputs (recorded as outputs too). */
export function secretKeysOf(definition: AnyResourceDefinition): string[] {
  return [...(definition.secretOutputs ?? []), ...(definition.secretInputs ?? [])];
}

/** The outputs made from the resource id, on both faces: the plugin records them, a class derives them from its id. */
export function idOutputsOf(definition: AnyResourceDefinition, id: string): Record<string, string> {
  const idOutputs: Record<string, IdOutput> = definition.idOutputs ?? {};
  return Object.fromEntries(Object.entries(idOutputs).map(([key, output]) => [key, output.fromId(id)]));
}

/**
 * The context for lifecycle functions run outside the engine (the recovery
 * command, the benchmark's baseline): log lines are printed.
 */
export function lifecycleContext(client: DmarcClient, settings: ProviderSettings = {}): LifecycleContext {
  return { client, settings, log: engineLogFor(undefined) };
}

/** Declares a resource; a function only so TypeScript infers the schemas' types for the lifecycle functions. */
export function defineResource<
  I extends ObjectSchema,
  O extends ObjectSchema,
  D extends string = never,
  S extends keyof z.input<I> & string = never,
  U extends keyof z.input<I> & string = never,
>(definition: ResourceDefinition<I, O, D, S, U>): ResourceDefinition<I, O, D, S, U> {
  return definition;
}

// biome-ignore lint/suspicious/noExplicitAny: the registry holds definitions of every input and output type
export type AnyResourceDefinition = ResourceDefinition<any, any, any, any, any>;
