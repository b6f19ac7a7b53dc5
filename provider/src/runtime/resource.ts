import * as pulumi from "@pulumi/pulumi";
import { dynamicProviderFor } from "./shim";

/** Module part of every type token: `pulumi-nodejs:dynamic/dmarc:<Type>`, so previews and policies can tell our resources apart. */
export const TYPE_MODULE = "dmarc";

/** Base of every resource class: the tiny serialized shim, the type token and the outputs that must stay secret. */
export abstract class DmarcResource extends pulumi.dynamic.Resource {
  protected constructor(
    typeName: string,
    name: string,
    props: pulumi.Inputs,
    opts: pulumi.CustomResourceOptions | undefined,
    secretOutputs: readonly string[] = [],
  ) {
    const options =
      secretOutputs.length === 0
        ? opts
        : { ...opts, additionalSecretOutputs: [...(opts?.additionalSecretOutputs ?? []), ...secretOutputs] };
    super(dynamicProviderFor(typeName), name, props, options, TYPE_MODULE, typeName);
  }
}
