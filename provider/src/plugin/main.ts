import * as grpc from "@grpc/grpc-js";
import { ConfigureResponse, CreateResponse, ReadResponse, UpdateResponse } from "@pulumi/pulumi/proto/provider_pb";
import * as provider from "@pulumi/pulumi/provider";
import { Struct } from "google-protobuf/google/protobuf/struct_pb";
import { dynamicProviderHost } from "../providerHost";
import { attachEngineLog } from "../runtime/engineLog";
import { packageVersion } from "../runtime/providerModule";
import { declareAsPluginTypes } from "../runtime/resource";
import { dmarcProvider, previewedUpdate } from "./provider";

// The provider plugin's process: `pulumi-resource-dmarc` (bin/) starts it
// with the engine's address among its arguments, and it serves the engine
// with @pulumi/pulumi's provider server, two of whose calls (3.246) are
// replaced on the server's service:
// - Configure answers without reading the request, so a provider never sees
//   its configuration: this one hands the `dmarc:*` keys to the host, and
//   declines resource references and output values (every input is plain
//   data; secrets the plugin marks itself).
// - Read fails on the request `pulumi import` sends, which has no
//   properties: this one reads an empty map then.
// - Create and Update never see the request's preview flag: during a
//   preview these answer without the service (Configure says the plugin
//   previews, so an updated resource's id-derived outputs stay known).

type Callback = (error: Error | null, response?: unknown) => void;
interface ConfigureCall {
  request: { getVariablesMap(): { forEach(visit: (value: string, key: string) => void): void } };
}
interface ReadCall {
  request: { getId(): string; getUrn(): string; getProperties(): Struct | undefined };
}
interface PreviewableCall {
  request: { getPreview(): boolean };
}
interface CreateCall {
  request: { getProperties(): Struct | undefined };
}
interface UpdateCall {
  request: {
    getId(): string;
    getUrn(): string;
    getOlds(): Struct | undefined;
    getNews(): Struct | undefined;
  };
}
type Handler = (call: never, callback: Callback) => unknown;

/**
 * The schema the executable serves: its build (scripts/plugin/bundle.mjs) writes in the schema written
 * once for it, which names where its archives are published; the JavaScript launcher's is made here.
 */
declare const DMARC_PACKAGE_SCHEMA: string | undefined;
const builtSchema = typeof DMARC_PACKAGE_SCHEMA === "string" ? DMARC_PACKAGE_SCHEMA : undefined;

const dmarc = dmarcProvider(packageVersion(), builtSchema);

/** `dmarc:baseUrl` for the engine's `dmarc:config:baseUrl`. */
const settingKey = (key: string) => key.replace(/^([^:]+):config:/, "$1:");

function configure(call: ConfigureCall, callback: Callback): void {
  const config = new Map<string, string>();
  call.request.getVariablesMap().forEach((value, key) => {
    config.set(settingKey(key), value);
  });
  dynamicProviderHost.configureFrom((key) => config.get(key));
  const response = new ConfigureResponse();
  response.setAcceptsecrets(true);
  response.setAcceptresources(false);
  response.setAcceptoutputs(false);
  response.setSupportspreview(true);
  callback(null, response);
}

async function read(call: ReadCall, callback: Callback): Promise<void> {
  const { request } = call;
  try {
    const found = await (dmarc.read?.(
      request.getId(),
      request.getUrn(),
      request.getProperties()?.toJavaScript() ?? {},
    ) ?? Promise.reject(new Error("the DMARC provider cannot read")));
    const response = new ReadResponse();
    response.setId(found.id ?? "");
    response.setProperties(Struct.fromJavaScript(found.props ?? {}));
    response.setInputs(Struct.fromJavaScript(found.inputs ?? {}));
    callback(null, response);
  } catch (error) {
    callback(error instanceof Error ? error : new Error(String(error)));
  }
}

/** A create previewed: its inputs, as the engine shows them for a provider that does not preview; no id yet. */
function previewCreate(call: CreateCall, callback: Callback): void {
  const response = new CreateResponse();
  response.setProperties(call.request.getProperties());
  callback(null, response);
}

function previewUpdate(call: UpdateCall, callback: Callback): void {
  const { request } = call;
  try {
    const outs = previewedUpdate(
      request.getId(),
      request.getUrn(),
      request.getOlds()?.toJavaScript() ?? {},
      request.getNews()?.toJavaScript() ?? {},
    );
    const response = new UpdateResponse();
    response.setProperties(Struct.fromJavaScript(outs as Parameters<typeof Struct.fromJavaScript>[0]));
    callback(null, response);
  } catch (error) {
    callback(error instanceof Error ? error : new Error(String(error)));
  }
}

const replaced: Record<string, unknown> = { configure, read };
const previewed: Record<string, Handler> = { create: previewCreate, update: previewUpdate };

/** The server's own handler, or the preview's when the request is one. */
function servedOrPreviewed(target: object, key: string): unknown {
  const served = Reflect.get(target, key);
  const preview = previewed[key];
  if (!preview) return served;
  return (call: PreviewableCall, callback: Callback) =>
    call.request.getPreview() ? preview(call as never, callback) : served.call(target, call, callback);
}

const addService = grpc.Server.prototype.addService;
grpc.Server.prototype.addService = function (
  service: grpc.ServiceDefinition,
  implementation: grpc.UntypedServiceImplementation,
) {
  const withReplacements = new Proxy(implementation, {
    get: (target, key) =>
      typeof key !== "string"
        ? Reflect.get(target, key)
        : key in replaced
          ? replaced[key]
          : servedOrPreviewed(target, key),
  });
  return addService.call(this, service, withReplacements);
};

// The Tenant this process constructs declares its resources as the plugin's own types, served here.
declareAsPluginTypes();
const engineAddress = process.argv.slice(2).find((argument) => !argument.startsWith("-"));
if (engineAddress) attachEngineLog(engineAddress);
void provider.main(dmarc, process.argv.slice(2));
