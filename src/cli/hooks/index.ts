/** Hook wiring for the command line: the planners, the diff shown by --dry-run, and the relay `agent-ledger hook <client>` runs. */
export { HOOK_CLIENTS, type HookClient, type PlanOptions } from "./clients";
export { planInstall, planUninstall, type HookPlan } from "./plan";
export { renderDiff } from "./diff";
export { relayHook, type RelayOptions, type RelayResult } from "./relay";
export { HookSettingsError } from "./settings";
