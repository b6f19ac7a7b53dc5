import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import * as provider from "@pulumi/pulumi/provider";
import { dynamicProviderHost } from "../providerHost";
import { attachEngineLog } from "../runtime/engineLog";
import { dmarcProvider } from "./provider";

// The provider plugin's process: `pulumi-resource-dmarc` (bin/) starts it
// with the engine's address among its arguments, and it serves the engine
// with @pulumi/pulumi's provider server.
//
// That server (3.246) answers Configure without reading the request, so a
// provider never sees its configuration; this process's Configure, put in
// its place on the server's service, hands the `dmarc:*` keys to the host.
// Resource references and output values are declined: every input is plain
// data, secrets excepted, which the plugin marks itself.

interface ConfigureCall {
  request: { getVariablesMap(): { forEach(visit: (value: string, key: string) => void): void } };
}
type Callback = (error: Error | null, response?: unknown) => void;

const fromPulumi = createRequire(require.resolve("@pulumi/pulumi"));
const grpc = fromPulumi("@grpc/grpc-js");
const { ConfigureResponse } = fromPulumi("./proto/provider_pb");

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

const addService = grpc.Server.prototype.addService;
grpc.Server.prototype.addService = function (service: unknown, implementation: object) {
  const withConfigure = new Proxy(implementation, {
    get: (target, key) => (key === "configure" ? configure : Reflect.get(target, key)),
  });
  return addService.call(this, service, withConfigure);
};

const { version } = JSON.parse(readFileSync(join(__dirname, "..", "..", "package.json"), "utf8")) as {
  version: string;
};
const engineAddress = process.argv.slice(2).find((argument) => !argument.startsWith("-"));
if (engineAddress) attachEngineLog(engineAddress);
void provider.main(dmarcProvider(version), process.argv.slice(2));
