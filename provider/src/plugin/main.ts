import * as grpc from "@grpc/grpc-js";
import { ConfigureResponse, ReadResponse } from "@pulumi/pulumi/proto/provider_pb";
import * as provider from "@pulumi/pulumi/provider";
import { Struct } from "google-protobuf/google/protobuf/struct_pb";
import { dynamicProviderHost } from "../providerHost";
import { attachEngineLog } from "../runtime/engineLog";
import { packageVersion } from "../runtime/providerModule";
import { declareAsPluginTypes } from "../runtime/resource";
import { dmarcProvider } from "./provider";

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

type Callback = (error: Error | null, response?: unknown) => void;
interface StructMessage {
  toJavaScript(): Record<string, unknown>;
}
interface ConfigureCall {
  request: { getVariablesMap(): { forEach(visit: (value: string, key: string) => void): void } };
}
interface ReadCall {
  request: { getId(): string; getUrn(): string; getProperties(): StructMessage | undefined };
}

/**
 * Where the plugin's archives are published, named by the schema it serves: the executable's build
 * (scripts/plugin-archive.mjs) writes in the address it was built for; the JavaScript launcher's is
 * the schema's default.
 */
declare const DMARC_PLUGIN_DOWNLOAD_URL: string | undefined;
const pluginDownloadURL = typeof DMARC_PLUGIN_DOWNLOAD_URL === "string" ? DMARC_PLUGIN_DOWNLOAD_URL : undefined;

const dmarc = dmarcProvider(packageVersion(), pluginDownloadURL);

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
  response.setSupportspreview(false);
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

const replaced: Record<string, unknown> = { configure, read };
const addService = grpc.Server.prototype.addService;
grpc.Server.prototype.addService = function (
  service: grpc.ServiceDefinition,
  implementation: grpc.UntypedServiceImplementation,
) {
  const withReplacements = new Proxy(implementation, {
    get: (target, key) => (typeof key === "string" && key in replaced ? replaced[key] : Reflect.get(target, key)),
  });
  return addService.call(this, service, withReplacements);
};

// The Tenant this process constructs declares its resources as the plugin's own types, served here.
declareAsPluginTypes();
const engineAddress = process.argv.slice(2).find((argument) => !argument.startsWith("-"));
if (engineAddress) attachEngineLog(engineAddress);
void provider.main(dmarc, process.argv.slice(2));
