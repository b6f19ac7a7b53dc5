import { dynamicProviderFor } from "../runtime/shim";

export = dynamicProviderFor("Subscription");
