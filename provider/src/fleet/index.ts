// The fleet runner for Automation API users: `import { runFleet } from "pulumi-dmarc-partner/fleet"`.

export type { Interruption } from "../checkpoint/interruption";
export type { LeftOutOrganization } from "../discovery/entries";
export type { ImportedTenant, ImportReport, ManagedOrganization } from "../discovery/report";
export { type RecoveryTarget, recoverShard, type ShardRecoveryResult, type StackRecovery } from "../recovery/shard";
export { assignShards, DEFAULT_SHARD_SIZE, type Shard, shardName } from "./assignment";
export { exitCodeOf, FLEET_EXIT, FLEET_SPEC, type FleetInvocation, type ImportInvocation, main } from "./cli";
export {
  FINDINGS_FORMAT_VERSION,
  type FindingsTotals,
  type FleetFindings,
  type ObjectChange,
  type TenantFindings,
  type TenantOffboarding,
  type UnmanagedOrganizations,
} from "./findings";
export { COMMENT_LIMIT, type CommentOptions, type CommentSubject, findingsMarkdown } from "./findingsMarkdown";
export { findingsText } from "./findingsText";
export { type ImportCommandOptions, ImportRefused, runImport } from "./import";
export { DEFAULT_MAX_OFFBOARD } from "./offboardingGate";
export type { ShardResult, ShardStatus, ShardTiming } from "./result";
export {
  FLEET_COMMANDS,
  type FleetCommand,
  type FleetOptions,
  type FleetReport,
  type FleetTiming,
  runFleet,
  type ShardOverview,
} from "./runner";
export type { FleetProject } from "./shard";
export type { PropertyChange } from "./stepLog";
