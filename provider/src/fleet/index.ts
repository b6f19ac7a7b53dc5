// The fleet runner for Automation API users: `import { runFleet } from "pulumi-dmarc-partner/fleet"`.

export type { Interruption } from "../checkpoint/interruption";
export type { LeftOutOrganization } from "../discovery/entries";
export type { ImportedTenant, ImportProgress, ImportReport, ManagedOrganization } from "../discovery/report";
export {
  type RecoveryTarget,
  recoverShard,
  ShardNotRecovered,
  type ShardRecoveryOptions,
  type ShardRecoveryResult,
  type StackRecovery,
  shardRecovery,
} from "../recovery/shard";
export type { EnforceInvocation, FleetInvocation, ImportInvocation, ReportInvocation } from "./cli/arguments";
export { FLEET_EXIT, FLEET_SPEC } from "./cli/commandSpec";
export { enforceExitCode, exitCodeOf } from "./cli/commands";
export {
  IMPORT_PROGRESS_INTERVAL_MS,
  type ImportCommandOptions,
  ImportRefused,
  importProgressLine,
  runImport,
} from "./cli/import";
export { main } from "./cli/main";
export {
  type DecisionCounts,
  type DomainDecision,
  type EnforceOptions,
  type EnforceReport,
  runEnforce,
  type TenantDecisions,
} from "./enforce/enforce";
export { type Decision, decide, dmarcPassRate, type EvidenceRead, type Figures } from "./enforce/ramp";
export { runStackEnforce, type StackEnforceOptions } from "./enforce/stack";
export { enforceMarkdown, enforceText } from "./enforce/text";
export {
  FINDINGS_FORMAT_VERSION,
  type FindingsTotals,
  type FleetFindings,
  type ObjectChange,
  type TenantFindings,
  type TenantOffboarding,
  type UnchangedShard,
  type UnmanagedOrganizations,
} from "./findings/findings";
export { COMMENT_LIMIT, type CommentOptions, type CommentSubject, findingsMarkdown } from "./findings/markdown";
export { findingsText } from "./findings/text";
export { FLEET_COMMANDS, type FleetCommand, type FleetOptions } from "./fleetOptions";
export type { FleetReport, FleetTiming } from "./fleetReport";
export { FleetPacer, type PaceNow, type PaceUse, startFleetPacer } from "./pacer";
export { fleetPage, type PageInputs } from "./page/fleetData";
export { fleetPageHtml } from "./page/html";
export { type KeptReads, keepReads, keptReads } from "./page/keptReads";
export type {
  FleetPage,
  PageDomain,
  PageReads,
  PageShard,
  PageTenant,
  PageTotals,
  PassRateSeries,
  StageRun,
  TenantStatus,
} from "./page/model";
export { buildFleetPage, PAGE_FILE, type PageOptions, type PageSources, writeFleetPage } from "./page/report";
export {
  type DayRate,
  type DayRates,
  type DomainFacts,
  PAGE_DAYS,
  pageDays,
  readServiceFacts,
  type ServiceFacts,
} from "./page/serviceReads";
export { assignShards, DEFAULT_SHARD_SIZE, type Shard, shardName } from "./plan/assignment";
export { DEFAULT_MAX_OFFBOARD } from "./plan/offboardingGate";
export { OwnershipConflict } from "./plan/ownership";
export type { FleetScan } from "./plan/scan";
export type { ShardOverview } from "./plan/shardOverview";
export type { ShardResult, ShardStatus, ShardTiming } from "./result";
export { runFleet } from "./runner";
export type { FleetProject, ShardBackend, ShardState, ShardTenants } from "./shard/shard";
export type { PropertyChange } from "./shard/stepLog";
