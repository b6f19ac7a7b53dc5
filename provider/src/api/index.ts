// The wire format: every request, answer and event body the service speaks.
// One source for the client, the receiver kit and the emulator.
export * from "./auditLog";
export * from "./auth";
export * from "./common";
export * from "./domainGroups";
export * from "./domains";
export * from "./events";
export * from "./organizations";
export * from "./plans";
export * from "./reports";
export * from "./subscriptions";
export * from "./users";
export * from "./validation";
export * from "./webhooks";
