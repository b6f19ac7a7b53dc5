// `pulumi-dmarc-partner/recovery`: recovering a stack an interrupted `pulumi up`
// left behind, for Automation API users; `dmarc-recover` is the same as a command.
export { describeInterruption, type InterruptedStack } from "../checkpoint/interruption";
export type { SettlementAction, SettlementStep } from "./plan";
export {
  DEFAULT_BACKUP_FOLDER,
  EXIT_CODES,
  type RecoverOptions,
  type RecoveryOutcome,
  type RecoveryReport,
  recoverStack,
} from "./recover";
export { formatReport } from "./report";
