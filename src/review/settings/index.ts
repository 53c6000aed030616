/** The settings room: each repository's review settings. */
import type { AnyToolDef } from "../../core/define-tool";
import { reviewSettingsTool } from "./review-settings";

export const settingsTools: AnyToolDef[] = [reviewSettingsTool];
