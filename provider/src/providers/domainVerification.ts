import { dynamicProviderFor } from "../runtime/shim";

export = dynamicProviderFor("DomainVerification");
