import { dynamicProviderHost } from "../providerHost";
import { dynamicProviderFor } from "../runtime/host";

export = dynamicProviderFor(dynamicProviderHost, "DomainGroup");
