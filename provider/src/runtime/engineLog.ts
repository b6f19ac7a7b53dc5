import * as grpc from "@grpc/grpc-js";
import { EngineClient } from "@pulumi/pulumi/proto/engine_grpc_pb";
import { LogRequest, LogSeverity } from "@pulumi/pulumi/proto/engine_pb";

/** Writes one line into the engine's output, attached to a resource. */
export type EngineLog = (line: string) => void;

interface EngineConnection {
  address: string;
  client: EngineClient;
}

let engineConnection: EngineConnection | undefined;

/** The engine's address, given by a provider process that is not Pulumi's dynamic provider host (the plugin). */
let attachedEngine: string | undefined;

/** Sends later lines to the engine at `address`: the plugin's process gets it among other arguments. */
export function attachEngineLog(address: string): void {
  attachedEngine = address;
}

/**
 * The dynamic provider process of @pulumi/pulumi gets the engine's address
 * as its one argument, but neither the resource's URN nor an engine
 * connection for `pulumi.log` (which falls back to printing on the process's
 * stdout; the engine shows that unattributed, on the stack). So lines go to
 * the engine's Log call directly, with the URN the resource class passed as
 * an input; outside the engine (tests, scripts) they are printed.
 */
export function engineLogFor(urn: string | undefined): EngineLog {
  const address = attachedEngine ?? process.argv[2] ?? "";
  const inEngine =
    (attachedEngine !== undefined || /dynamic-provider/.test(process.argv[1] ?? "")) &&
    /^[\w.[\]:-]+:\d+$/.test(address);
  if (!urn || !inEngine) return (line) => console.log(line);
  if (engineConnection?.address !== address) {
    engineConnection = { address, client: new EngineClient(address, grpc.credentials.createInsecure()) };
  }
  const { client } = engineConnection;
  return (line) => {
    const request = new LogRequest();
    request.setSeverity(LogSeverity.INFO);
    request.setMessage(line);
    request.setUrn(urn);
    client.log(request, (error) => {
      if (error) console.log(line);
    });
  };
}
