import type * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import type { DmarcClient } from "../client";
import {
  clientFrom,
  clientOptionsFrom,
  type ProviderSettings,
  type SettingKey,
  type StackConfig,
  settingsFrom,
} from "./config";
import { engineLogFor } from "./engineLog";
import {
  type AnyResourceDefinition,
  type LifecycleContext,
  type ObjectSchema,
  type OutputChange,
  outputChanges,
  updateMayChange,
} from "./lifecycle";
import { PROVIDER_KEY } from "./providerModule";
import { CreatedButUnfinished } from "./settle";
import { containsUnknown, describeValue, inputFailure, plain, UNKNOWN, valueAt } from "./values";

/**
 * Input every resource accepts: the id of an existing object to adopt instead
 * of creating one. Pulumi's own `import` option cannot work with dynamic
 * providers (pulumi/pulumi#16175), so adoption happens in `create`.
 */
export const IMPORT_KEY = "importId";

type Props = Record<string, unknown>;

function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function inputKeys(definition: AnyResourceDefinition): string[] {
  const schema = definition.inputs;
  if (schema instanceof z.ZodObject) return Object.keys(schema.shape);
  throw new Error(`${definition.typeName}: input schema must be a zod object`);
}

/** The inputs a declaration is compared by: all but its hints. */
function comparedKeys(definition: AnyResourceDefinition): string[] {
  const hints = new Set<string>(definition.hints ?? []);
  return inputKeys(definition).filter((key) => !hints.has(key));
}

/** Declared inputs whose value differs between the recorded and the new declaration (or is not known yet). */
function changedInputs(definition: AnyResourceDefinition, olds: Props, news: Props): string[] {
  return comparedKeys(definition).filter((key) => containsUnknown(news[key]) || !sameValue(olds[key], news[key]));
}

function withoutProviderKey(props: Props | undefined): Props {
  const { [PROVIDER_KEY]: _provider, ...rest } = props ?? {};
  return rest;
}

function splitImportId(props: Props | undefined): { importId: unknown; declared: Props } {
  const { [IMPORT_KEY]: importId, ...declared } = withoutProviderKey(props);
  return { importId, declared };
}

/**
 * Runs in the dynamic provider process: every resource type's provider module
 * calls into this one host, which holds the settings and the shared client.
 */
export class DynamicProviderHost {
  private settings: ProviderSettings | undefined;
  private readonly definitions = new Map<string, AnyResourceDefinition>();

  /** `settings`: those a configured provider would hold, for a host outside the engine; the engine's `configure` sets them otherwise. */
  constructor(definitions: readonly AnyResourceDefinition[], settings?: ProviderSettings) {
    for (const definition of definitions) this.definitions.set(definition.typeName, definition);
    this.settings = settings;
  }

  async configure(request: pulumi.dynamic.ConfigureRequest): Promise<void> {
    this.configureFrom((key) => request.config.get(key));
  }

  /** Takes the settings of a provider's configuration, looked up by full key (`dmarc:baseUrl`). */
  configureFrom(config: StackConfig): void {
    this.settings = settingsFrom(config);
  }

  private definition(typeName: string): AnyResourceDefinition {
    const definition = this.definitions.get(typeName);
    if (!definition) throw new Error(`unknown DMARC resource type "${typeName}"`);
    return definition;
  }

  /** The settings in use: the configured ones, else the environment's. */
  currentSettings(): ProviderSettings {
    return this.settings ?? settingsFrom(() => undefined);
  }

  private context(definition: AnyResourceDefinition, props?: Props): LifecycleContext {
    const settings = this.currentSettings();
    const urn = definition.urnInput === undefined ? undefined : props?.[definition.urnInput];
    // Made on first use: a standalone resource runs without the settings a client needs.
    let client: DmarcClient | undefined;
    return {
      get client() {
        client ??= clientFrom(settings);
        return client;
      },
      settings,
      log: engineLogFor(typeof urn === "string" ? urn : undefined),
    };
  }

  async check(typeName: string, olds: Props, news: Props): Promise<pulumi.dynamic.CheckResult> {
    const definition = this.definition(typeName);
    const settings = this.currentSettings();
    // Fail at preview when the provider cannot reach the service at all.
    if (!definition.standalone) clientOptionsFrom(settings);
    const { importId, declared: given } = splitImportId(news);
    const declared = { ...given };
    for (const [input, setting] of Object.entries<SettingKey>(definition.fromSettings ?? {})) {
      if (declared[input] === undefined && settings[setting] !== undefined) declared[input] = settings[setting];
    }
    const importFailure =
      importId === undefined || containsUnknown(importId) || (typeof importId === "string" && importId !== "")
        ? []
        : [
            {
              property: IMPORT_KEY,
              reason: `${typeName} input "${IMPORT_KEY}" must be the id of an existing object; got ${describeValue(importId)}`,
            },
          ];
    const withImport = (inputs: Props): Props =>
      importId === undefined ? inputs : { ...inputs, [IMPORT_KEY]: importId };
    const parsed = definition.inputs.safeParse(declared);
    if (parsed.success && importFailure.length === 0) {
      const inputs = parsed.data as Props;
      if (!containsUnknown(inputs)) {
        const creates = importId === undefined && Object.keys(withoutProviderKey(olds)).length === 0;
        definition.checked?.(this.context(definition, inputs), inputs, creates);
      }
      return { inputs: withImport(inputs) };
    }
    const issues: z.core.$ZodIssue[] = parsed.success ? [] : parsed.error.issues;
    const secret = new Set<unknown>(definition.secretInputs ?? []);
    const failures = issues
      .filter((issue) => !containsUnknown(valueAt(declared, issue.path.slice(0, 1))))
      .map((issue) => inputFailure(typeName, declared, issue, secret));
    failures.push(...importFailure);
    // With unknown values the inputs cannot be normalized yet; they are checked again once known.
    return failures.length > 0 ? { failures } : { inputs: withImport(declared) };
  }

  async diff(typeName: string, _id: string, olds: Props, news: Props): Promise<pulumi.dynamic.DiffResult> {
    const definition = this.definition(typeName);
    const changed = changedInputs(definition, olds, news);
    const replaces = changed.filter((key) => (definition.replaceOn as readonly string[]).includes(key));
    const drifted = definition.drift?.(olds) ?? [];
    return { changes: changed.length + drifted.length > 0, replaces, deleteBeforeReplace: false };
  }

  async create(typeName: string, news: Props): Promise<pulumi.dynamic.CreateResult> {
    const definition = this.definition(typeName);
    const { importId, declared } = splitImportId(news);
    const inputs = definition.inputs.parse(declared);
    if (typeof importId === "string") return this.adopt(definition, importId, inputs);
    try {
      const created = await definition.create(this.context(definition, inputs), inputs);
      return { id: created.id, outs: plain(created.outs) };
    } catch (error) {
      if (!(error instanceof CreatedButUnfinished)) throw error;
      // Recorded outputs carry the provider module (`__provider`) like any others, or refresh and destroy could not load it.
      throw new CreatedButUnfinished(
        error.id,
        { ...error.properties, [PROVIDER_KEY]: news[PROVIDER_KEY] },
        error.cause,
      );
    }
  }

  /**
   * Takes an existing object under management. Like Pulumi's import, it
   * changes nothing: when the object differs from the declaration the create
   * fails listing the differences, so the declaration can be made to match.
   */
  private async adopt(
    definition: AnyResourceDefinition,
    importId: string,
    inputs: Props,
  ): Promise<pulumi.dynamic.CreateResult> {
    // Provider-only settings (record type, zone, deletion policy...) come from the declaration.
    const found = await definition.read(this.context(definition, inputs), importId, inputs);
    if (!found) {
      throw new Error(
        `${definition.typeName} "${importId}" does not exist (or belongs to another partner): nothing to adopt`,
      );
    }
    const differences = comparedKeys(definition)
      .filter((key) => inputs[key] !== undefined && !sameValue(found[key], inputs[key]))
      .map((key) => `${key}: declared ${describeValue(inputs[key])}, actual ${describeValue(found[key])}`);
    if (differences.length > 0) {
      throw new Error(
        `${definition.typeName} "${importId}" differs from its declaration (${differences.join("; ")}). Make the declaration match the existing object, adopt it, then change it.`,
      );
    }
    return { id: importId, outs: plain({ ...found, [IMPORT_KEY]: importId }) };
  }

  async read(typeName: string, id: string, props: Props | undefined): Promise<pulumi.dynamic.ReadResult> {
    const definition = this.definition(typeName);
    const current = props && Object.keys(withoutProviderKey(props)).length > 0 ? props : undefined;
    const found = await definition.read(this.context(definition, current), id, current);
    if (!found) return {};
    const inputs: Props = {};
    for (const key of inputKeys(definition)) {
      if (found[key] !== undefined) inputs[key] = found[key];
    }
    const importedAs: Record<string, ((props: Props) => string | undefined) | undefined> = current
      ? {}
      : (definition.importedAs ?? {});
    for (const [key, reference] of Object.entries(importedAs)) {
      const value = reference?.(found);
      if (value !== undefined) inputs[key] = value;
    }
    const importId = props?.[IMPORT_KEY];
    if (importId !== undefined) inputs[IMPORT_KEY] = importId;
    return plain({
      id,
      props: { ...found, ...(importId === undefined ? {} : { [IMPORT_KEY]: importId }) },
      inputs,
    });
  }

  async update(typeName: string, id: string, olds: Props, news: Props): Promise<pulumi.dynamic.UpdateResult> {
    const definition = this.definition(typeName);
    const { importId, declared } = splitImportId(news);
    const inputs = definition.inputs.parse(declared);
    const changed = new Set(changedInputs(definition, olds, inputs));
    const outs = await definition.update(this.context(definition, inputs), id, olds, inputs, changed);
    return { outs: plain(importId === undefined ? outs : { ...outs, [IMPORT_KEY]: importId }) };
  }

  /**
   * What an update will record, as its preview shows it, with no call to the
   * service: the declared inputs, and each computed output as recorded
   * unless its rule says the update may change it (unknown then, or the part
   * the rule's `previewed` makes known; every one unknown when the last read
   * saw drift, which the update repairs however it must).
   */
  previewUpdate(typeName: string, olds: Props, news: Props): Props {
    const definition = this.definition(typeName);
    const changed = new Set(changedInputs(definition, olds, withoutProviderKey(news)));
    const drifted = (definition.drift?.(olds) ?? []).length > 0;
    const inPart = (rule: OutputChange<ObjectSchema, ObjectSchema>) =>
      drifted || containsUnknown(news) ? undefined : rule.previewed?.(olds, news, changed, UNKNOWN);
    const outputs = Object.entries(outputChanges(definition))
      .filter(([key]) => olds[key] !== undefined)
      .map(([key, rule]) => [
        key,
        drifted || updateMayChange(rule, olds, changed) ? (inPart(rule) ?? UNKNOWN) : olds[key],
      ]);
    return { ...withoutProviderKey(news), ...Object.fromEntries(outputs) };
  }

  async delete(typeName: string, id: string, props: Props): Promise<void> {
    const definition = this.definition(typeName);
    await definition.delete(this.context(definition, props), id, props);
  }
}

/**
 * The provider object a `pulumi-dmarc-partner/providers/<type>` module
 * exports: it hands every call over to `host`, one per process, so every
 * resource type shares the HTTP pool, token cache and pacing.
 */
export function dynamicProviderFor(host: DynamicProviderHost, typeName: string): pulumi.dynamic.ResourceProvider {
  return {
    configure: (request) => host.configure(request),
    check: (olds, news) => host.check(typeName, olds, news),
    diff: (id, olds, news) => host.diff(typeName, id, olds, news),
    create: (inputs) => host.create(typeName, inputs),
    read: (id, props) => host.read(typeName, id, props),
    update: (id, olds, news) => host.update(typeName, id, olds, news),
    delete: (id, props) => host.delete(typeName, id, props),
  };
}
