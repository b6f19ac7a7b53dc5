import { dynamicProviderHost } from "../providerHost";
import { dynamicProviderFor } from "../runtime/providerModule";

export = dynamicProviderFor(dynamicProviderHost, "Rfc2136Record");
