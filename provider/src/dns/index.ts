// RFC 2136 dynamic updates signed with TSIG, and authoritative queries: the
// DNS client the Rfc2136Record resource and the emulator's zone share.

export { isDmarcPolicy, type NamePlan, planAtName, type RecordText, sameText, textOf } from "./dmarcName";
export * from "./errors";
export * from "./message";
export * from "./query";
export * from "./request";
export * from "./transport";
export * from "./tsig";
export * from "./update";
