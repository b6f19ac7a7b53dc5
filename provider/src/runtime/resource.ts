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

/** Inputs every resource accepts. */
export interface AdoptableArgs {
  /**
   * Id of an existing object to take under management instead of creating
   * one; nothing is changed, and the create fails if the object differs from
   * the declaration. Pulumi's `import` option cannot be used with dynamic
   * providers (pulumi/pulumi#16175). Ids: Organization `org_...`, DomainGroup
   * `<organizationId>/<groupId>`, Domain `<organizationId>/<domain>`, Webhook
   * `<objectId>`, Subscription `<organizationId>/<subscriptionId>`,
   * Invitation `<organizationId>/<email>`.
   */
  importId?: pulumi.Input<string>;
}
