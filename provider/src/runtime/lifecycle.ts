import type * as pulumi from "@pulumi/pulumi";
import type { z } from "zod";
import type { DmarcClient } from "../client";
import type { ProviderSettings } from "./config";

/** What every lifecycle function gets: the shared client and the provider settings. */
export interface LifecycleContext {
  client: DmarcClient;
  settings: ProviderSettings;
}

/**
 * A resource is its input schema, which inputs force a replacement, and its
 * lifecycle functions over the shared client. Outputs always carry the inputs
 * too, so `diff` can compare what was declared with what is declared now.
 */
export interface ResourceDefinition<Inputs extends object, Outputs extends Inputs> {
  /** Type name, as in the type token `pulumi-nodejs:dynamic/dmarc:<typeName>`. */
  typeName: string;
  inputs: z.ZodType<Inputs, unknown>;
  /** Inputs whose change replaces the object instead of updating it. */
  replaceOn: readonly (keyof Inputs & string)[];
  /** Fills declared inputs from the provider settings before validation, e.g. a default owner. */
  withDefaults?(declared: Record<string, unknown>, settings: ProviderSettings): Record<string, unknown>;
  /** Output keys whose drift, seen by the last read, needs an update although the inputs did not change. */
  drift?(olds: Outputs): string[];
  create(ctx: LifecycleContext, inputs: Inputs): Promise<{ id: string; outs: Outputs }>;
  /** Reads the object back; `undefined` when it is gone, so refresh drops it. `props` is absent on import. */
  read(ctx: LifecycleContext, id: string, props: Outputs | undefined): Promise<{ outs: Outputs } | undefined>;
  update(ctx: LifecycleContext, id: string, olds: Outputs, news: Inputs): Promise<Outputs>;
  /** Must succeed when the object is already gone. */
  delete(ctx: LifecycleContext, id: string, props: Outputs): Promise<void>;
}

// biome-ignore lint/suspicious/noExplicitAny: the registry holds definitions of every input and output type
export type AnyResourceDefinition = ResourceDefinition<any, any>;

export type DynamicProvider = pulumi.dynamic.ResourceProvider;
